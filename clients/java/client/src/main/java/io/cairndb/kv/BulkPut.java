package io.cairndb.kv;

import io.cairndb.kv.proto.Condition;
import io.cairndb.kv.proto.PutManyRequest;
import io.cairndb.kv.proto.PutManyResponse;
import io.cairndb.kv.proto.PutManyResult;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * putMany: records read from the iterator in chunks, grouped by the shard that owns them into
 * PutMany requests (any major paths; at most the store's max_put_many_records records and 4 MiB
 * each; each record written on its own, not atomically with the others), run by at most
 * maxRequestsInFlight threads of a pool that lives for the call. A record refused for a reason
 * that passes, certainly not applied (REFRESH or RETRY: its shard moved or changed leader, a
 * leader change dropped it, its partition was moving; the rule of a single write), is sent again
 * after a backoff and a topology refresh, up to ROUNDS times and within the timeout after the first
 * round; any other failure is that record's error.
 */
final class BulkPut {
  private static final long BATCH_BYTES = 4 << 20;
  private static final int CHUNK_RECORDS = 10_000;
  private static final int ROUNDS = 16;

  private final StoreImpl s;
  private final BulkWriteOptions o;
  private final long timeoutNanos;
  private final long ttlMs;
  private final List<KeyValue> entries = new ArrayList<>();
  private final List<Version> versions = new ArrayList<>();
  private final List<RuntimeException> errors = new ArrayList<>();
  private final List<ErrorInfo> infos = new ArrayList<>();

  BulkPut(StoreImpl s, BulkWriteOptions o) {
    this.s = s;
    this.o = o;
    this.timeoutNanos = s.timeout(o.getTimeout(), o.getTimeoutUnit());
    this.ttlMs = o.getTTL() == null ? 0 : o.getTTL().toMillis();
  }

  BulkPutResult run(Iterator<KeyValue> records) {
    if (records == null) {
      throw new IllegalArgumentException("putMany: the records iterator is null");
    }
    ExecutorService pool = Executors.newFixedThreadPool(o.getMaxRequestsInFlight(), r -> {
      Thread t = new Thread(r, "cairn-putMany");
      t.setDaemon(true);
      return t;
    });
    try {
      while (records.hasNext()) {
        List<Integer> todo = new ArrayList<>();
        for (int n = 0; n < CHUNK_RECORDS && records.hasNext(); n++) {
          KeyValue kv = records.next();
          if (kv == null || kv.getKey() == null || kv.getValue() == null) {
            throw new IllegalArgumentException("putMany: record " + entries.size() + " is null or has a null key or value");
          }
          todo.add(entries.size());
          entries.add(kv);
          versions.add(null);
          errors.add(null);
          infos.add(null);
        }
        runRounds(pool, todo);
      }
    } finally {
      pool.shutdownNow();
    }
    return new BulkPutResult(versions, errors);
  }

  private void runRounds(ExecutorService pool, List<Integer> todo) {
    long seen = seq();
    runChunk(pool, batches(todo), timeoutNanos);
    long deadline = System.nanoTime() + timeoutNanos;
    long[] backoff = {Router.INITIAL_BACKOFF};
    for (int round = 1; round < ROUNDS; round++) {
      List<Integer> again = new ArrayList<>();
      for (int i : todo) {
        ErrorInfo e = infos.get(i);
        if (e != null && Retry.retryable(e, true)) {
          again.add(i);
        }
      }
      todo = again;
      if (todo.isEmpty() || !Retry.sleep(deadline, backoff)) {
        return;
      }
      if (s.router.cluster != null) {
        s.router.refresh(seen, deadline);
      }
      seen = seq();
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return;
      }
      runChunk(pool, batches(todo), left);
    }
  }

  /** The sequence of the topology the handle routes by (0 for cairn lite). */
  private long seq() {
    return s.router.cluster == null ? 0 : s.router.cluster.topology().seq;
  }

  /** Sends batches, at most the pool's size at once, each request within timeout nanoseconds. */
  private void runChunk(ExecutorService pool, List<long[]> batches, long timeout) {
    List<Future<?>> fs = new ArrayList<>(batches.size());
    for (long[] b : batches) {
      fs.add(pool.submit(() -> putBatch(b, timeout)));
    }
    try {
      for (Future<?> f : fs) {
        f.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FaultException(ErrorInfo.of("putMany: interrupted", Status.Code.CANCELLED, "",
          FaultException.Action.NONE));
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException ? (RuntimeException) e.getCause()
          : new IllegalStateException(e.getCause());
    }
  }

  /**
   * The batches of todo: each {shard, index...}, by shard then size, the shards interleaved so that
   * the requests in flight spread over them.
   */
  private List<long[]> batches(List<Integer> todo) {
    int limit = Math.max(1, s.router.maxPutManyRecords);
    Map<Long, List<List<Integer>>> per = new LinkedHashMap<>();
    Map<Long, Long> sizes = new LinkedHashMap<>();
    for (int i : todo) {
      long shard = s.shardOf(entries.get(i).getKey());
      List<List<Integer>> bs = per.computeIfAbsent(shard, k -> new ArrayList<>());
      int n = entries.get(i).getValue().getValue().length;
      long size = sizes.getOrDefault(shard, 0L);
      if (bs.isEmpty() || bs.get(bs.size() - 1).size() == limit || size + n > BATCH_BYTES) {
        bs.add(new ArrayList<>());
        size = 0;
      }
      bs.get(bs.size() - 1).add(i);
      sizes.put(shard, size + n);
    }
    List<long[]> out = new ArrayList<>();
    for (int k = 0; ; k++) {
      int before = out.size();
      for (Map.Entry<Long, List<List<Integer>>> e : per.entrySet()) {
        if (k < e.getValue().size()) {
          List<Integer> b = e.getValue().get(k);
          long[] a = new long[b.size() + 1];
          a[0] = e.getKey();
          for (int j = 0; j < b.size(); j++) {
            a[j + 1] = b.get(j);
          }
          out.add(a);
        }
      }
      if (out.size() == before) {
        return out;
      }
    }
  }

  private void putBatch(long[] b, long timeout) {
    PutManyRequest.Builder req = PutManyRequest.newBuilder().setDurability(s.durability(o.getDurability()));
    for (int j = 1; j < b.length; j++) {
      KeyValue kv = entries.get((int) b[j]);
      req.addOps(Op.putOp(kv.getKey(), kv.getValue(), Condition.CONDITION_UNSPECIFIED, null,
          io.cairndb.kv.proto.ReturnValueVersion.RETURN_VALUE_VERSION_UNSPECIFIED, ttlMs));
    }
    PutManyResponse resp;
    try {
      resp = s.router.call(Route.shardWrite(b[0]), (stub, h) -> stub.putMany(req.setHeader(h).build()), timeout);
      if (resp.getResultsCount() != b.length - 1) {
        throw new FaultException(ErrorInfo.of("putMany: the server returned " + resp.getResultsCount()
            + " results for " + (b.length - 1) + " records", Status.Code.INTERNAL, "", FaultException.Action.NONE));
      }
    } catch (FaultException | InvalidArgumentException e) {
      ErrorInfo info = e instanceof FaultException ? ((FaultException) e).info : null;
      for (int j = 1; j < b.length; j++) {
        errors.set((int) b[j], e);
        infos.set((int) b[j], info);
      }
      return;
    }
    for (int j = 1; j < b.length; j++) {
      int i = (int) b[j];
      PutManyResult r = resp.getResults(j - 1);
      if (r.getErrorCode() == 0) {
        versions.set(i, Version.of(r.getResult().getNewVersion()));
        errors.set(i, null);
        infos.set(i, null);
        continue;
      }
      ErrorInfo e = Errors.fromRecord(r);
      infos.set(i, e);
      errors.set(i, e.toException());
    }
  }
}
