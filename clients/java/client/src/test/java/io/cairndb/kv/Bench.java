package io.cairndb.kv;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One thread's put and get throughput, and the JVM's CPU per operation
 * (every thread: the caller's and gRPC's event loops), against a running
 * store. Not a JUnit test. Run by hand (docs/benchmarks.md, "Java client"):
 *
 * <pre>
 *   java -cp ... io.cairndb.kv.Bench HOST:PORT [seconds per phase, default 10] [value bytes, default 1000]
 * </pre>
 */
public final class Bench {
  private Bench() {}

  public static void main(String[] args) throws Exception {
    String addr = args[0];
    long seconds = args.length > 1 ? Long.parseLong(args[1]) : 10;
    int size = args.length > 2 ? Integer.parseInt(args[2]) : 1000;
    try (KVStore store = KVStoreFactory.getStore(new KVStoreConfig("kvstore", addr))) {
      Value v = Value.createValue(new byte[size]);
      int keys = 10_000;
      phase("warmup put", store, seconds, i -> store.put(key(i % keys), v));
      phase("put", store, seconds, i -> store.put(key(i % keys), v));
      phase("warmup get", store, seconds, i -> store.get(key(i % keys)));
      phase("get", store, seconds, i -> store.get(key(i % keys)));
    }
  }

  private static Key key(long i) {
    return Key.createKey(List.of("user", Long.toString(i)));
  }

  interface Op {
    void run(long i);
  }

  private static void phase(String name, KVStore store, long seconds, Op op) {
    com.sun.management.OperatingSystemMXBean os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    long cpu0 = os.getProcessCpuTime();
    long t0 = System.nanoTime();
    long end = t0 + TimeUnit.SECONDS.toNanos(seconds);
    long n = 0;
    while ((n & 255) != 0 || System.nanoTime() < end) {
      op.run(n++);
    }
    double secs = (System.nanoTime() - t0) / 1e9;
    double cpuUs = (os.getProcessCpuTime() - cpu0) / 1e3 / n;
    System.out.printf("%-11s %9d ops %8.0f ops/s %6.1f us CPU/op (JVM, all threads)%n", name, n, n / secs, cpuUs);
  }
}
