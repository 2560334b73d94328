package io.cairndb.kv;

import static org.junit.jupiter.api.Assertions.fail;

import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Real Cairn processes from the binary in $CAIRN_BIN: a cairn lite shared by
 * the test classes of one JVM (stopped when it exits), and 3-node clusters
 * run through `cairn cluster`. Nothing is mocked across processes.
 */
final class Procs {
  static final String STORE = "kvstore";
  private static Lite shared;

  private Procs() {}

  static String bin() {
    String b = System.getenv("CAIRN_BIN");
    if (b == null || b.isEmpty()) {
      fail("CAIRN_BIN is not set: build the binary (make build) and run make test-java");
    }
    if (!new File(b).canExecute()) {
      fail("CAIRN_BIN=" + b + " is not an executable file: run make build");
    }
    return b;
  }

  /** A major-path component no other test uses. */
  static String ns() {
    return "t" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
  }

  /** A running cairn lite. */
  static final class Lite {
    final String addr;
    final Path root;
    final Process proc;

    Lite(String addr, Path root, Process proc) {
      this.addr = addr;
      this.root = root;
      this.proc = proc;
    }

    void stop() throws InterruptedException {
      proc.destroy(); // SIGTERM
      if (!proc.waitFor(10, TimeUnit.SECONDS)) {
        proc.destroyForcibly().waitFor();
      }
    }
  }

  /** The lite every test class shares (a 64 KiB value limit, so the limit test sends little). */
  static synchronized Lite lite() throws IOException {
    if (shared == null) {
      Path root = Files.createTempDirectory("cairn-java-lite-");
      shared = startLite(root, "--max-value-bytes", "65536");
      Lite l = shared;
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        try {
          l.stop();
        } catch (InterruptedException ignored) {
          // exiting anyway
        }
        rmrf(root);
      }));
    }
    return shared;
  }

  static Lite startLite(Path root, String... extra) throws IOException {
    List<String> cmd = new java.util.ArrayList<>(List.of(bin(), "lite", "--root", root.toString(), "--port", "0",
        "--partitions", "10"));
    cmd.addAll(List.of(extra));
    Process p = new ProcessBuilder(cmd).redirectError(root.resolve("lite.log").toFile()).start();
    BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    // "cairn lite: store ... ready at HOST:PORT" (after a "secure mode" line
    // with --secure), or null if it died.
    String line = out.readLine();
    while (line != null && !line.contains("ready at")) {
      line = out.readLine();
    }
    Matcher m = Pattern.compile("ready at (\\S+)").matcher(line == null ? "" : line);
    if (!m.find()) {
      p.destroyForcibly();
      throw new IOException("cairn lite did not start: " + line + "\n" + Files.readString(root.resolve("lite.log")));
    }
    Thread drain = new Thread(() -> {
      try {
        while (out.readLine() != null) {
          // keep the pipe from filling
        }
      } catch (IOException ignored) {
        // the process ended
      }
    });
    drain.setDaemon(true);
    drain.start();
    return new Lite(m.group(1), root, p);
  }

  /** A cluster run by `cairn cluster` under root. */
  static final class Cluster implements AutoCloseable {
    final Path root;
    final Map<Long, String> nodes = new TreeMap<>();

    Cluster(Path root) {
      this.root = root;
    }

    String run(String... args) throws IOException, InterruptedException {
      List<String> cmd = new java.util.ArrayList<>(List.of(bin(), "cluster"));
      cmd.addAll(List.of(args));
      cmd.addAll(List.of("--root", root.toString()));
      Path log = Files.createTempFile("cairn-cluster-", ".out");
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException("cairn cluster " + String.join(" ", args) + ": no exit in 60 s");
      }
      String out = Files.readString(log);
      Files.delete(log);
      if (p.exitValue() != 0) {
        throw new IOException("cairn cluster " + String.join(" ", args) + ": exit " + p.exitValue() + "\n" + out);
      }
      return out;
    }

    String[] hosts() {
      return nodes.values().toArray(new String[0]);
    }

    /** SIGKILL (cairn cluster kill's default signal). */
    void kill(long node) throws IOException, InterruptedException {
      run("kill", "--node", Long.toString(node));
    }

    void start(long node) throws IOException, InterruptedException {
      run("start", "--node", Long.toString(node));
    }

    @Override
    public void close() throws IOException, InterruptedException {
      run("stop");
      rmrf(root.getParent());
    }
  }

  static Cluster startCluster() throws IOException, InterruptedException {
    Cluster cl = new Cluster(Files.createTempDirectory("cairn-java-cluster-").resolve("cl"));
    cl.run("start", "--nodes", "3", "--rf", "3", "--shards", "2", "--partitions", "100");
    JsonElement j = JsonParser.parseString(Files.readString(cl.root.resolve("cluster.json")));
    for (JsonElement n : j.getAsJsonObject().getAsJsonArray("nodes")) {
      cl.nodes.put(n.getAsJsonObject().get("id").getAsLong(), n.getAsJsonObject().get("addr").getAsString());
    }
    return cl;
  }

  /** Polls cond every 20 ms until it holds; fails after timeoutMs. */
  static void waitFor(BooleanSupplier cond, long timeoutMs, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    while (!cond.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        fail("timed out after " + timeoutMs + " ms waiting for " + what);
      }
      Thread.sleep(20);
    }
  }

  static void rmrf(Path p) {
    try (Stream<Path> s = Files.walk(p)) {
      s.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException ignored) {
      // best effort
    }
  }
}
