package io.cairndb.kv;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * putMany: records read from the iterator in chunks, grouped by major path
 * into execute batches (at most 100 records and 4 MiB each), ordered by
 * shard, run by at most maxRequestsInFlight threads of a pool that lives
 * for the call. A batch refused as bad input (FIX_INPUT, certainly not
 * applied) is retried record by record, so each bad record gets its own
 * error; any other failure is the error of every record of the batch.
 */
final class BulkPut {
  private static final int BATCH_RECORDS = 100;
  private static final long BATCH_BYTES = 4 << 20;
  private static final int CHUNK_RECORDS = 10_000;

  private final StoreImpl s;
  private final BulkWriteOptions o;
  private final long timeoutNanos;
  private final long ttlMs;
  private final List<KeyValue> entries = new ArrayList<>();
  private final List<Version> versions = new ArrayList<>();
  private final List<RuntimeException> errors = new ArrayList<>();

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
        int base = entries.size();
        for (int n = 0; n < CHUNK_RECORDS && records.hasNext(); n++) {
          KeyValue kv = records.next();
          if (kv == null) {
            throw new IllegalArgumentException("putMany: record " + entries.size() + " is null");
          }
          entries.add(kv);
          versions.add(null);
          errors.add(null);
        }
        runChunk(pool, batches(base));
      }
    } finally {
      pool.shutdownNow();
    }
    return new BulkPutResult(versions, errors);
  }

  private void runChunk(ExecutorService pool, List<int[]> batches) {
    List<Future<?>> fs = new ArrayList<>(batches.size());
    for (int[] b : batches) {
      fs.add(pool.submit(() -> putBatch(b)));
    }
    try {
      for (Future<?> f : fs) {
        f.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new FaultException(ErrorInfo.of("putMany: interrupted", io.grpc.Status.Code.CANCELLED, "",
          FaultException.Action.NONE));
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException ? (RuntimeException) e.getCause()
          : new IllegalStateException(e.getCause());
    }
  }

  /** The batches of entries[base:], by major path then size, sorted by shard. */
  private List<int[]> batches(int base) {
    Map<List<String>, List<Integer>> byMajor = new LinkedHashMap<>();
    for (int i = base; i < entries.size(); i++) {
      byMajor.computeIfAbsent(entries.get(i).getKey().getMajorPath(), k -> new ArrayList<>()).add(i);
    }
    List<int[]> out = new ArrayList<>();
    for (List<Integer> idx : byMajor.values()) {
      List<Integer> cur = new ArrayList<>();
      long size = 0;
      for (int i : idx) {
        int n = entries.get(i).getValue().getValue().length;
        if (cur.size() == BATCH_RECORDS || (!cur.isEmpty() && size + n > BATCH_BYTES)) {
          out.add(cur.stream().mapToInt(Integer::intValue).toArray());
          cur.clear();
          size = 0;
        }
        cur.add(i);
        size += n;
      }
      out.add(cur.stream().mapToInt(Integer::intValue).toArray());
    }
    out.sort(Comparator.comparingLong(b -> s.shardOf(entries.get(b[0]).getKey())));
    return out;
  }

  private void putBatch(int[] batch) {
    if (batch.length == 1) {
      putOne(batch[0]);
      return;
    }
    OperationFactory f = s.getOperationFactory();
    List<Operation> ops = new ArrayList<>(batch.length);
    for (int i : batch) {
      ops.add(f.createPut(entries.get(i).getKey(), entries.get(i).getValue()));
    }
    List<OperationResult> res;
    try {
      res = Batch.execute(s, ops, o.getDurability(), ttlMs, timeoutNanos);
    } catch (InvalidArgumentException e) {
      Arrays.stream(batch).forEach(this::putOne); // one record is bad: find it, write the others
      return;
    } catch (RuntimeException | OperationExecutionException e) {
      RuntimeException err = e instanceof RuntimeException ? (RuntimeException) e : new IllegalStateException(e);
      for (int i : batch) {
        errors.set(i, err);
      }
      return;
    }
    for (int j = 0; j < batch.length; j++) {
      versions.set(batch[j], res.get(j).getNewVersion());
    }
  }

  private void putOne(int i) {
    KeyValue kv = entries.get(i);
    try {
      WriteOptions w = new WriteOptions(o.getDurability(), timeoutNanos, java.util.concurrent.TimeUnit.NANOSECONDS)
          .setTTL(o.getTTL());
      versions.set(i, s.put(kv.getKey(), kv.getValue(), null, w));
    } catch (InvalidArgumentException | FaultException e) {
      errors.set(i, e);
    }
  }
}
