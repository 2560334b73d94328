package io.cairndb.ycsb;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real {@code cairn lite} on a free port in a temp root, from $CAIRN_BIN
 * (default bin/cairn of the repository; make build writes it). Its address is
 * taken from the "ready at" line it prints; closing it sends SIGTERM and waits.
 */
final class Lite implements AutoCloseable {
  private static final Pattern READY = Pattern.compile("ready at (\\S+)");

  final String bin;
  final String addr;
  private final Process proc;
  private final StringBuffer output = new StringBuffer();

  Lite(Path root) throws IOException, InterruptedException {
    bin = cairnBin();
    proc = new ProcessBuilder(bin, "lite", "--root", root.resolve("store").toString(), "--port", "0")
        .redirectErrorStream(true).start();
    CompletableFuture<String> ready = new CompletableFuture<>();
    Thread reader = new Thread(() -> {
      try (BufferedReader r = new BufferedReader(new InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = r.readLine()) != null; ) {
          output.append(line).append('\n');
          Matcher m = READY.matcher(line);
          if (m.find()) {
            ready.complete(m.group(1));
          }
        }
      } catch (IOException e) {
        ready.completeExceptionally(e);
      }
      ready.completeExceptionally(new IOException("cairn lite exited before it was ready:\n" + output));
    }, "cairn-lite-output");
    reader.setDaemon(true);
    reader.start();
    try {
      addr = ready.get(30, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      proc.destroyForcibly();
      throw new IOException("cairn lite not ready within 30s:\n" + output, e);
    } catch (java.util.concurrent.ExecutionException e) {
      proc.destroyForcibly();
      throw new IOException(e.getCause().getMessage(), e.getCause());
    }
  }

  static String cairnBin() throws IOException {
    String bin = System.getenv("CAIRN_BIN");
    if (bin == null || bin.isEmpty()) {
      bin = "../../../bin/cairn";
    }
    if (!Files.isExecutable(Path.of(bin))) {
      throw new IOException("no cairn binary at " + bin + " (CAIRN_BIN): run make build first");
    }
    return bin;
  }

  /** Runs {@code cairn args...} to completion (at most 2 minutes) and returns its output; fails on a non-zero exit. */
  String run(String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(bin);
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> {
      try {
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      } catch (IOException e) {
        return "(output unreadable: " + e + ")";
      }
    });
    if (!p.waitFor(2, TimeUnit.MINUTES)) {
      p.destroyForcibly();
      throw new IOException(String.join(" ", cmd) + ": still running after 2 minutes");
    }
    String text = out.join();
    if (p.exitValue() != 0) {
      throw new IOException(String.join(" ", cmd) + ": exit " + p.exitValue() + ":\n" + text);
    }
    return text;
  }

  @Override
  public void close() throws InterruptedException {
    proc.destroy();
    if (!proc.waitFor(30, TimeUnit.SECONDS)) {
      proc.destroyForcibly();
      proc.waitFor();
    }
  }
}
