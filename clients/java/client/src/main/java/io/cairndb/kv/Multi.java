package io.cairndb.kv;

import com.google.protobuf.ByteString;
import io.cairndb.kv.proto.Record;
import io.cairndb.kv.proto.StoreScanRequest;
import io.cairndb.kv.proto.StoreScanResponse;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

/**
 * Multi-key reads: multiGet and the iterators. Iteration is stateless
 * paging: each page's response carries a resume token the next request
 * passes back, so a page may go to any replica. An iterator is not
 * thread-safe; the store handle is.
 */
final class Multi {
  static final int DEFAULT_BATCH = 100;

  private final StoreImpl s;

  Multi(StoreImpl s) {
    this.s = s;
  }

  /** One page: its records and the token for the next one (empty: done). */
  interface Pager {
    Page fetch(ByteString resume);
  }

  static final class Page {
    final List<KeyValueVersion> records;
    final ByteString resume;

    Page(List<KeyValueVersion> records, ByteString resume) {
      this.records = records;
      this.resume = resume;
    }

    /** The page of a generated response's records (the gRPC paths; Wire.page reads the call socket's). */
    static Page of(List<Record> records, ByteString resume, Wire.Shape shape) {
      List<KeyValueVersion> out = new ArrayList<>(records.size());
      for (Record r : records) {
        Value v = shape.keysOnly ? null : Value.createValue(r.getValue().toByteArray());
        Key k = shape.major == null ? Key.fromPb(r.getKey()) : Key.fromPb(r.getKey(), shape.major, shape.majorUtf8);
        out.add(new KeyValueVersion(k, v, Version.of(r.getVersion()), r.getExpirationMs()));
      }
      return new Page(out, resume);
    }
  }

  /** Takes a multiGet's records one by one. */
  private interface Sink {
    void take(KeyValueVersion r);
  }

  SortedMap<Key, ValueVersion> multiGet(Key parent, KeyRange range, Depth depth, Consistency c, long timeout,
      TimeUnit unit) {
    SortedMap<Key, ValueVersion> out = new TreeMap<>();
    each(parent, range, depth, c, timeout, unit, false, r -> out.put(r.getKey(), new ValueVersion(r.getValue(),
        r.getVersion(), r.getExpirationTime())));
    return out;
  }

  SortedSet<Key> multiGetKeys(Key parent, KeyRange range, Depth depth, Consistency c, long timeout, TimeUnit unit) {
    SortedSet<Key> out = new TreeSet<>();
    each(parent, range, depth, c, timeout, unit, true, r -> out.add(r.getKey()));
    return out;
  }

  /**
   * A multiGet's records, read page by page in a loop of its own rather
   * than through an iterator: the JIT then compiles the call once, in this
   * loop, where an iterator's hasNext (called twice a record) became a hot
   * root of its own that inlined the whole call again (docs/benchmarks.md,
   * "Issue 12, fourteenth").
   */
  private void each(Key parent, KeyRange range, Depth depth, Consistency c, long timeout, TimeUnit unit,
      boolean keysOnly, Sink sink) {
    Pager pager = pager(parent, range, depth, c, timeout, unit, keysOnly);
    ByteString resume = ByteString.EMPTY;
    do {
      Page p = pager.fetch(resume);
      for (KeyValueVersion r : p.records) {
        sink.take(r);
      }
      resume = nextResume(p, resume);
    } while (!resume.isEmpty());
  }

  /** p's resume token, after checking that a page with more to come made progress. */
  private static ByteString nextResume(Page p, ByteString resume) {
    if (!p.resume.isEmpty() && p.records.isEmpty() && p.resume.equals(resume)) {
      throw new FaultException(ErrorInfo.of("server returned an empty page with an unchanged resume token",
          Status.Code.INTERNAL, "", FaultException.Action.NONE));
    }
    return p.resume;
  }

  Iterator<KeyValueVersion> multiGetIterator(Direction dir, int batchSize, Key parent, KeyRange range, Depth depth,
      Consistency c, long timeout, TimeUnit unit, boolean keysOnly) {
    return multiGetIterator(dir, batchSize, parent, range, depth, c, timeout, unit, keysOnly, batch(batchSize));
  }

  /** pageSize 0 asks for every record in one response (multiGet). */
  private Iterator<KeyValueVersion> multiGetIterator(Direction dir, int batchSize, Key parent, KeyRange range,
      Depth depth, Consistency c, long timeout, TimeUnit unit, boolean keysOnly, int pageSize) {
    if (dir != Direction.FORWARD && dir != Direction.REVERSE) {
      throw new IllegalArgumentException("multiGetIterator: direction must be FORWARD or REVERSE, not " + dir);
    }
    return new Records(pager(dir, parent, range, depth, c, timeout, unit, keysOnly, pageSize),
        List.of(0L).iterator(), null);
  }

  /** The pages of a whole multiGet (forward, every record in one response unless it is too large). */
  private Pager pager(Key parent, KeyRange range, Depth depth, Consistency c, long timeout, TimeUnit unit,
      boolean keysOnly) {
    return pager(Direction.FORWARD, parent, range, depth, c, timeout, unit, keysOnly, 0);
  }

  /** The pages of the records under parent: a multiGet request, sent again with each page's resume token. */
  private Pager pager(Direction dir, Key parent, KeyRange range, Depth depth, Consistency c, long timeout,
      TimeUnit unit, boolean keysOnly, int pageSize) {
    Consistency cons = s.consistency(c);
    long nanos = s.timeout(timeout, unit);
    MultiGetCall req = new MultiGetCall(StoreImpl.need(parent), range == null ? null : range.pb, depth, dir,
        keysOnly, pageSize, cons.pb);
    Route rt = Route.read(parent, cons);
    Wire.Shape shape = new Wire.Shape(parent, keysOnly);
    return resume -> s.router.call(rt, (stub, h) -> stub.multiGet(req.with(h, resume), shape), nanos);
  }

  Iterator<KeyValueVersion> storeIterator(Direction dir, int batchSize, Key parent, KeyRange range, Depth depth,
      Consistency c, long timeout, TimeUnit unit, boolean keysOnly) {
    if (dir != Direction.UNORDERED) {
      throw new IllegalArgumentException("storeIterator: direction must be UNORDERED (records come shard by shard,"
          + " not in key order), not " + dir);
    }
    Consistency cons = s.consistency(c);
    long nanos = s.timeout(timeout, unit);
    StoreScanRequest.Builder req = StoreScanRequest.newBuilder().setDepth(Depth.pb(depth)).setKeysOnly(keysOnly)
        .setBatchSize(batch(batchSize)).setConsistency(cons.pb);
    if (parent != null) {
      req.setParent(parent.pb());
    }
    if (range != null) {
      req.setRange(range.pb);
    }
    Cluster cl = s.router.cluster;
    List<Long> shards = new ArrayList<>(cl == null ? List.of(0L) : cl.topology().shards.keySet());
    Collections.sort(shards);
    Route[] rt = new Route[1];
    Wire.Shape shape = new Wire.Shape(null, keysOnly);
    return new Records(resume -> {
      StoreScanResponse r = s.router.call(rt[0], (stub, h) ->
          stub.storeScan(req.setHeader(h).setResume(resume).build()), nanos);
      return Page.of(r.getRecordsList(), r.getResume(), shape);
    }, shards.iterator(), shard -> {
      req.setShard(shard);
      rt[0] = Route.shard(shard, cons);
    });
  }

  private static int batch(int batchSize) {
    if (batchSize < 0) {
      throw new IllegalArgumentException("batchSize must not be negative");
    }
    return batchSize == 0 ? DEFAULT_BATCH : batchSize;
  }

  static Iterator<Key> keys(Iterator<KeyValueVersion> it) {
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return it.hasNext();
      }

      @Override
      public Key next() {
        return it.next().getKey();
      }
    };
  }

  /** Pages through each part (a shard, or the one major path) in turn. */
  private static final class Records implements Iterator<KeyValueVersion> {
    interface PartStart {
      void start(long part);
    }

    private final Pager pager;
    private final Iterator<Long> parts;
    private final PartStart partStart;
    private List<KeyValueVersion> page = List.of();
    private int i;
    private ByteString resume = ByteString.EMPTY;
    private boolean partDone = true;

    Records(Pager pager, Iterator<Long> parts, PartStart partStart) {
      this.pager = pager;
      this.parts = parts;
      this.partStart = partStart;
    }

    @Override
    public boolean hasNext() {
      while (i == page.size()) {
        if (partDone) {
          if (!parts.hasNext()) {
            return false;
          }
          long part = parts.next();
          if (partStart != null) {
            partStart.start(part);
          }
          resume = ByteString.EMPTY;
        }
        Page p = pager.fetch(resume);
        page = p.records;
        i = 0;
        resume = nextResume(p, resume);
        partDone = resume.isEmpty();
      }
      return true;
    }

    @Override
    public KeyValueVersion next() {
      if (!hasNext()) {
        throw new NoSuchElementException();
      }
      return page.get(i++);
    }
  }
}
