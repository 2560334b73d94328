package io.cairndb.kv;

import io.cairndb.kv.proto.Condition;
import io.cairndb.kv.proto.DeleteRequest;
import io.cairndb.kv.proto.GetRequest;
import io.cairndb.kv.proto.GetResponse;
import io.cairndb.kv.proto.MultiDeleteRequest;
import io.cairndb.kv.proto.PutRequest;
import io.cairndb.kv.proto.StoreInfoResponse;
import io.cairndb.kv.proto.WriteResponse;
import java.util.Iterator;
import java.util.List;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.concurrent.TimeUnit;

/** The single-key operations and the handle's life; multi-key ones are in {@link Multi}. */
final class StoreImpl implements KVStore {
  final Router router;
  final long timeoutNanos;
  final Consistency consistency;
  final Durability durability;
  private final Multi multi;
  private final OperationFactory factory = new OperationFactory();

  private StoreImpl(KVStoreConfig cfg) {
    this.timeoutNanos = cfg.getRequestTimeout(TimeUnit.NANOSECONDS);
    this.consistency = cfg.getConsistency();
    this.durability = cfg.getDurability();
    this.router = new Router(cfg.getStoreName(), List.of(cfg.getHelperHosts()),
        cfg.getSocketOpenTimeout(TimeUnit.NANOSECONDS), cfg.getTrustedCAFile(),
        cfg.getUser() == null ? null : new Session(cfg.getUser(), cfg.getPassword()), cfg.getSpreadReads(),
        cfg.getUnaryCalls(), cfg.getCallSocket());
    this.multi = new Multi(this);
  }

  static StoreImpl open(KVStoreConfig cfg) {
    StoreImpl s = new StoreImpl(cfg);
    try {
      if (s.router.session != null) {
        s.router.login(s.timeoutNanos);
      }
      StoreInfoResponse resp = s.router.checkStore(s.timeoutNanos);
      s.router.maxPutManyRecords = Math.max(1, resp.getLimits().getMaxPutManyRecords());
      if (resp.hasTopology()) {
        s.router.cluster = new Cluster(resp);
      }
      return s;
    } catch (RuntimeException e) {
      s.close();
      throw e;
    }
  }

  long timeout(long t, TimeUnit unit) {
    if (t < 0) {
      throw new IllegalArgumentException("a timeout must not be negative");
    }
    return t == 0 || unit == null ? timeoutNanos : unit.toNanos(t);
  }

  Consistency consistency(Consistency c) {
    return c == null ? consistency : c;
  }

  io.cairndb.kv.proto.Durability durability(Durability d) {
    return (d == null ? durability : d).pb;
  }

  static Key need(Key k) {
    if (k == null) {
      throw new IllegalArgumentException("the key is null");
    }
    return k;
  }

  @Override
  public ValueVersion get(Key key) {
    return get(key, null, 0, null);
  }

  @Override
  public ValueVersion get(Key key, Consistency consistency, long timeout, TimeUnit timeoutUnit) {
    Consistency c = consistency(consistency);
    GetRequest.Builder req = GetRequest.newBuilder().setKey(need(key).pb()).setConsistency(c.pb);
    GetResponse resp = router.call(Route.read(key, c),
        (stub, h) -> stub.get(req.setHeader(h).build()), timeout(timeout, timeoutUnit));
    if (!resp.getFound()) {
      return null;
    }
    io.cairndb.kv.proto.Record r = resp.getRecord();
    return new ValueVersion(Value.createValue(r.getValue().toByteArray()), Version.of(r.getVersion()),
        r.getExpirationMs());
  }

  private Version write(Key key, Value value, Condition cond, Version match, ReturnValueVersion prev,
      Durability d, long ttlMs, long timeoutNanos) {
    return write(key, value, cond, match, prev, d, ttlMs, timeoutNanos, false);
  }

  private Version write(Key key, Value value, Condition cond, Version match, ReturnValueVersion prev,
      Durability d, long ttlMs, long timeoutNanos, boolean mergeFields) {
    if (value == null) {
      throw new IllegalArgumentException("the value is null (use an empty Value)");
    }
    PutRequest.Builder req = PutRequest.newBuilder()
        .setOp(Op.putOp(need(key), value, cond, match, ReturnValueVersion.pb(prev), ttlMs, mergeFields))
        .setDurability(durability(d));
    WriteResponse resp = router.call(Route.write(key), (stub, h) -> stub.put(req.setHeader(h).build()), timeoutNanos);
    if (prev != null) {
      prev.set(resp.getResult());
    }
    return resp.getResult().getSuccess() ? Version.of(resp.getResult().getNewVersion()) : null;
  }

  private Version write(Key key, Value value, Condition cond, Version match, ReturnValueVersion prev,
      WriteOptions o) {
    if (o == null) {
      return write(key, value, cond, match, prev, null, 0, timeoutNanos);
    }
    long ttl = o.getTTL() == null ? 0 : o.getTTL().toMillis();
    return write(key, value, cond, match, prev, o.getDurability(), ttl, timeout(o.getTimeout(), o.getTimeoutUnit()));
  }

  @Override
  public Version put(Key key, Value value) {
    return write(key, value, Condition.CONDITION_UNSPECIFIED, null, null, null, 0, timeoutNanos);
  }

  @Override
  public Version put(Key key, Value value, ReturnValueVersion prev, Durability d, long timeout, TimeUnit unit) {
    return write(key, value, Condition.CONDITION_UNSPECIFIED, null, prev, d, 0, timeout(timeout, unit));
  }

  @Override
  public Version put(Key key, Value value, ReturnValueVersion prev, WriteOptions options) {
    return write(key, value, Condition.CONDITION_UNSPECIFIED, null, prev, options);
  }

  @Override
  public Version putIfAbsent(Key key, Value value) {
    return write(key, value, Condition.CONDITION_IF_ABSENT, null, null, null, 0, timeoutNanos);
  }

  @Override
  public Version putIfAbsent(Key key, Value value, ReturnValueVersion prev, Durability d, long timeout,
      TimeUnit unit) {
    return write(key, value, Condition.CONDITION_IF_ABSENT, null, prev, d, 0, timeout(timeout, unit));
  }

  @Override
  public Version putIfAbsent(Key key, Value value, ReturnValueVersion prev, WriteOptions options) {
    return write(key, value, Condition.CONDITION_IF_ABSENT, null, prev, options);
  }

  @Override
  public Version putIfPresent(Key key, Value value) {
    return write(key, value, Condition.CONDITION_IF_PRESENT, null, null, null, 0, timeoutNanos);
  }

  @Override
  public Version putIfPresent(Key key, Value value, ReturnValueVersion prev, Durability d, long timeout,
      TimeUnit unit) {
    return write(key, value, Condition.CONDITION_IF_PRESENT, null, prev, d, 0, timeout(timeout, unit));
  }

  @Override
  public Version putIfPresent(Key key, Value value, ReturnValueVersion prev, WriteOptions options) {
    return write(key, value, Condition.CONDITION_IF_PRESENT, null, prev, options);
  }

  @Override
  public Version mergeFields(Key key, Value fields, WriteOptions o) {
    return writeFields(key, fields, Condition.CONDITION_UNSPECIFIED, o);
  }

  @Override
  public Version updateFields(Key key, Value fields, WriteOptions o) {
    return writeFields(key, fields, Condition.CONDITION_IF_PRESENT, o);
  }

  private Version writeFields(Key key, Value fields, Condition cond, WriteOptions o) {
    if (o == null) {
      return write(key, fields, cond, null, null, null, 0, timeoutNanos, true);
    }
    long ttl = o.getTTL() == null ? 0 : o.getTTL().toMillis();
    return write(key, fields, cond, null, null, o.getDurability(), ttl, timeout(o.getTimeout(), o.getTimeoutUnit()),
        true);
  }

  @Override
  public Version putIfVersion(Key key, Value value, Version match) {
    return write(key, value, Condition.CONDITION_IF_VERSION, Op.need(match), null, null, 0, timeoutNanos);
  }

  @Override
  public Version putIfVersion(Key key, Value value, Version match, ReturnValueVersion prev, Durability d,
      long timeout, TimeUnit unit) {
    return write(key, value, Condition.CONDITION_IF_VERSION, Op.need(match), prev, d, 0, timeout(timeout, unit));
  }

  @Override
  public Version putIfVersion(Key key, Value value, Version match, ReturnValueVersion prev, WriteOptions options) {
    return write(key, value, Condition.CONDITION_IF_VERSION, Op.need(match), prev, options);
  }

  private boolean remove(Key key, Condition cond, Version match, ReturnValueVersion prev, Durability d,
      long timeoutNanos) {
    DeleteRequest.Builder req = DeleteRequest.newBuilder()
        .setOp(Op.deleteOp(need(key), cond, match, ReturnValueVersion.pb(prev)))
        .setDurability(durability(d));
    WriteResponse resp = router.call(Route.write(key), (stub, h) -> stub.delete(req.setHeader(h).build()),
        timeoutNanos);
    if (prev != null) {
      prev.set(resp.getResult());
    }
    return resp.getResult().getSuccess();
  }

  @Override
  public boolean delete(Key key) {
    return remove(key, Condition.CONDITION_UNSPECIFIED, null, null, null, timeoutNanos);
  }

  @Override
  public boolean delete(Key key, ReturnValueVersion prev, Durability d, long timeout, TimeUnit unit) {
    return remove(key, Condition.CONDITION_UNSPECIFIED, null, prev, d, timeout(timeout, unit));
  }

  @Override
  public boolean deleteIfVersion(Key key, Version match) {
    return remove(key, Condition.CONDITION_IF_VERSION, Op.need(match), null, null, timeoutNanos);
  }

  @Override
  public boolean deleteIfVersion(Key key, Version match, ReturnValueVersion prev, Durability d, long timeout,
      TimeUnit unit) {
    return remove(key, Condition.CONDITION_IF_VERSION, Op.need(match), prev, d, timeout(timeout, unit));
  }

  @Override
  public int multiDelete(Key parentKey, KeyRange subRange, Depth depth) {
    return multiDelete(parentKey, subRange, depth, null, 0, null);
  }

  @Override
  public int multiDelete(Key parent, KeyRange subRange, Depth depth, Durability d, long timeout, TimeUnit unit) {
    MultiDeleteRequest.Builder req = MultiDeleteRequest.newBuilder().setParent(need(parent).pb())
        .setDepth(Depth.pb(depth)).setDurability(durability(d));
    if (subRange != null) {
      req.setRange(subRange.pb);
    }
    return (int) router.call(Route.write(parent), (stub, h) -> stub.multiDelete(req.setHeader(h).build()),
        timeout(timeout, unit)).getDeleted();
  }

  @Override
  public SortedMap<Key, ValueVersion> multiGet(Key parentKey, KeyRange subRange, Depth depth) {
    return multi.multiGet(parentKey, subRange, depth, null, 0, null);
  }

  @Override
  public SortedMap<Key, ValueVersion> multiGet(Key parentKey, KeyRange subRange, Depth depth, Consistency c,
      long timeout, TimeUnit unit) {
    return multi.multiGet(parentKey, subRange, depth, c, timeout, unit);
  }

  @Override
  public SortedSet<Key> multiGetKeys(Key parentKey, KeyRange subRange, Depth depth) {
    return multi.multiGetKeys(parentKey, subRange, depth, null, 0, null);
  }

  @Override
  public SortedSet<Key> multiGetKeys(Key parentKey, KeyRange subRange, Depth depth, Consistency c, long timeout,
      TimeUnit unit) {
    return multi.multiGetKeys(parentKey, subRange, depth, c, timeout, unit);
  }

  @Override
  public Iterator<KeyValueVersion> multiGetIterator(Direction dir, int batchSize, Key parentKey, KeyRange subRange,
      Depth depth) {
    return multi.multiGetIterator(dir, batchSize, parentKey, subRange, depth, null, 0, null, false);
  }

  @Override
  public Iterator<KeyValueVersion> multiGetIterator(Direction dir, int batchSize, Key parentKey, KeyRange subRange,
      Depth depth, Consistency c, long timeout, TimeUnit unit) {
    return multi.multiGetIterator(dir, batchSize, parentKey, subRange, depth, c, timeout, unit, false);
  }

  @Override
  public Iterator<Key> multiGetKeysIterator(Direction dir, int batchSize, Key parentKey, KeyRange subRange,
      Depth depth) {
    return Multi.keys(multi.multiGetIterator(dir, batchSize, parentKey, subRange, depth, null, 0, null, true));
  }

  @Override
  public Iterator<Key> multiGetKeysIterator(Direction dir, int batchSize, Key parentKey, KeyRange subRange,
      Depth depth, Consistency c, long timeout, TimeUnit unit) {
    return Multi.keys(multi.multiGetIterator(dir, batchSize, parentKey, subRange, depth, c, timeout, unit, true));
  }

  @Override
  public Iterator<KeyValueVersion> storeIterator(Direction dir, int batchSize) {
    return multi.storeIterator(dir, batchSize, null, null, null, null, 0, null, false);
  }

  @Override
  public Iterator<KeyValueVersion> storeIterator(Direction dir, int batchSize, Key parentKey, KeyRange subRange,
      Depth depth) {
    return multi.storeIterator(dir, batchSize, parentKey, subRange, depth, null, 0, null, false);
  }

  @Override
  public Iterator<KeyValueVersion> storeIterator(Direction dir, int batchSize, Key parentKey, KeyRange subRange,
      Depth depth, Consistency c, long timeout, TimeUnit unit) {
    return multi.storeIterator(dir, batchSize, parentKey, subRange, depth, c, timeout, unit, false);
  }

  @Override
  public Iterator<Key> storeKeysIterator(Direction dir, int batchSize) {
    return Multi.keys(multi.storeIterator(dir, batchSize, null, null, null, null, 0, null, true));
  }

  @Override
  public Iterator<Key> storeKeysIterator(Direction dir, int batchSize, Key parentKey, KeyRange subRange,
      Depth depth) {
    return Multi.keys(multi.storeIterator(dir, batchSize, parentKey, subRange, depth, null, 0, null, true));
  }

  @Override
  public Iterator<Key> storeKeysIterator(Direction dir, int batchSize, Key parentKey, KeyRange subRange, Depth depth,
      Consistency c, long timeout, TimeUnit unit) {
    return Multi.keys(multi.storeIterator(dir, batchSize, parentKey, subRange, depth, c, timeout, unit, true));
  }

  @Override
  public List<OperationResult> execute(List<Operation> operations) throws OperationExecutionException {
    return Batch.execute(this, operations, null, 0, timeoutNanos);
  }

  @Override
  public List<OperationResult> execute(List<Operation> operations, Durability d, long timeout, TimeUnit unit)
      throws OperationExecutionException {
    return Batch.execute(this, operations, d, 0, timeout(timeout, unit));
  }

  @Override
  public OperationFactory getOperationFactory() {
    return factory;
  }

  @Override
  public BulkPutResult putMany(Iterator<KeyValue> records, BulkWriteOptions options) {
    return new BulkPut(this, options == null ? new BulkWriteOptions() : options).run(records);
  }

  /** The shard that owns key's major path by the handle's topology (0 for cairn lite). */
  long shardOf(Key k) {
    return router.shardOf(k);
  }

  @Override
  public void close() {
    router.close();
  }
}
