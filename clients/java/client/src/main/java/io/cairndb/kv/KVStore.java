package io.cairndb.kv;

import java.util.Iterator;
import java.util.List;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.concurrent.TimeUnit;

/**
 * A handle on one Cairn store, shaped like {@code oracle.kv.KVStore}.
 * Thread-safe: share one handle among all threads. Every method that takes
 * no timeout uses the config's request timeout; a timeout of 0 means that
 * default too. Null consistency or durability means the config's default.
 *
 * <p>Failures are unchecked: {@link FaultException} (and subclasses) for
 * what went wrong on the way or on the server, {@link InvalidArgumentException}
 * (an {@link IllegalArgumentException}) for bad input. A conditional write
 * whose condition does not hold is not an error: it returns null or false.
 */
public interface KVStore extends AutoCloseable {
  /** The record at key, or null if there is none. */
  ValueVersion get(Key key);

  ValueVersion get(Key key, Consistency consistency, long timeout, TimeUnit timeoutUnit);

  /** Writes the record; returns its new version. */
  Version put(Key key, Value value);

  Version put(Key key, Value value, ReturnValueVersion prevReturn, Durability durability, long timeout,
      TimeUnit timeoutUnit);

  /** With a time to live (options may be null). */
  Version put(Key key, Value value, ReturnValueVersion prevReturn, WriteOptions options);

  /** Writes only if no record exists; the new version, or null if one did. */
  Version putIfAbsent(Key key, Value value);

  Version putIfAbsent(Key key, Value value, ReturnValueVersion prevReturn, Durability durability, long timeout,
      TimeUnit timeoutUnit);

  Version putIfAbsent(Key key, Value value, ReturnValueVersion prevReturn, WriteOptions options);

  /** Writes only if a record exists; the new version, or null if none did. */
  Version putIfPresent(Key key, Value value);

  Version putIfPresent(Key key, Value value, ReturnValueVersion prevReturn, Durability durability, long timeout,
      TimeUnit timeoutUnit);

  Version putIfPresent(Key key, Value value, ReturnValueVersion prevReturn, WriteOptions options);

  /**
   * Merges a field record ({@link FieldRecord}) into the one stored under key, in one round trip: each field
   * replaces the stored field of its name, the others are appended; with no record there, the record becomes
   * {@code fields}. A stored value that is not a field record fails with {@link InvalidArgumentException} (kind
   * {@code not_field_record}), a merged record over max_value_bytes with a limit error; then nothing is written.
   * Returns the new version. {@code options} may be null.
   */
  Version mergeFields(Key key, Value fields, WriteOptions options);

  /** {@link #mergeFields} only if a record exists (YCSB's update); the new version, or null if none did. */
  Version updateFields(Key key, Value fields, WriteOptions options);

  /** Writes only if the record's version is matchVersion; the new version, or null. */
  Version putIfVersion(Key key, Value value, Version matchVersion);

  Version putIfVersion(Key key, Value value, Version matchVersion, ReturnValueVersion prevReturn,
      Durability durability, long timeout, TimeUnit timeoutUnit);

  Version putIfVersion(Key key, Value value, Version matchVersion, ReturnValueVersion prevReturn,
      WriteOptions options);

  /** Deletes the record; false if there was none. */
  boolean delete(Key key);

  boolean delete(Key key, ReturnValueVersion prevReturn, Durability durability, long timeout, TimeUnit timeoutUnit);

  /** Deletes only if the record's version is matchVersion. */
  boolean deleteIfVersion(Key key, Version matchVersion);

  boolean deleteIfVersion(Key key, Version matchVersion, ReturnValueVersion prevReturn, Durability durability,
      long timeout, TimeUnit timeoutUnit);

  /**
   * Deletes atomically the records under parentKey (a complete major path,
   * optionally some minor components) within subRange and depth (either may
   * be null: all, PARENT_AND_DESCENDANTS); returns how many.
   */
  int multiDelete(Key parentKey, KeyRange subRange, Depth depth);

  int multiDelete(Key parentKey, KeyRange subRange, Depth depth, Durability durability, long timeout,
      TimeUnit timeoutUnit);

  /** The records under parentKey (a complete major path), in key order. */
  SortedMap<Key, ValueVersion> multiGet(Key parentKey, KeyRange subRange, Depth depth);

  SortedMap<Key, ValueVersion> multiGet(Key parentKey, KeyRange subRange, Depth depth, Consistency consistency,
      long timeout, TimeUnit timeoutUnit);

  SortedSet<Key> multiGetKeys(Key parentKey, KeyRange subRange, Depth depth);

  SortedSet<Key> multiGetKeys(Key parentKey, KeyRange subRange, Depth depth, Consistency consistency,
      long timeout, TimeUnit timeoutUnit);

  /**
   * The records under parentKey, FORWARD or REVERSE in key order, fetched
   * lazily batchSize at a time (0: 100); the timeout applies to each batch.
   */
  Iterator<KeyValueVersion> multiGetIterator(Direction direction, int batchSize, Key parentKey, KeyRange subRange,
      Depth depth);

  Iterator<KeyValueVersion> multiGetIterator(Direction direction, int batchSize, Key parentKey, KeyRange subRange,
      Depth depth, Consistency consistency, long timeout, TimeUnit timeoutUnit);

  Iterator<Key> multiGetKeysIterator(Direction direction, int batchSize, Key parentKey, KeyRange subRange,
      Depth depth);

  Iterator<Key> multiGetKeysIterator(Direction direction, int batchSize, Key parentKey, KeyRange subRange,
      Depth depth, Consistency consistency, long timeout, TimeUnit timeoutUnit);

  /**
   * Every record of the store, shard by shard, fetched lazily batchSize at a
   * time. Direction must be UNORDERED: order across major paths is not key
   * order.
   */
  Iterator<KeyValueVersion> storeIterator(Direction direction, int batchSize);

  /**
   * The records whose major path starts with parentKey's (null: all),
   * restricted by subRange and depth (null: all).
   */
  Iterator<KeyValueVersion> storeIterator(Direction direction, int batchSize, Key parentKey, KeyRange subRange,
      Depth depth);

  Iterator<KeyValueVersion> storeIterator(Direction direction, int batchSize, Key parentKey, KeyRange subRange,
      Depth depth, Consistency consistency, long timeout, TimeUnit timeoutUnit);

  Iterator<Key> storeKeysIterator(Direction direction, int batchSize);

  Iterator<Key> storeKeysIterator(Direction direction, int batchSize, Key parentKey, KeyRange subRange, Depth depth);

  Iterator<Key> storeKeysIterator(Direction direction, int batchSize, Key parentKey, KeyRange subRange, Depth depth,
      Consistency consistency, long timeout, TimeUnit timeoutUnit);

  /**
   * Runs the operations atomically: all or none. They must share one major
   * path. Returns one result per operation; throws
   * {@link OperationExecutionException} when an operation marked
   * abortIfUnsuccessful was not done (then nothing was written).
   */
  List<OperationResult> execute(List<Operation> operations) throws OperationExecutionException;

  List<OperationResult> execute(List<Operation> operations, Durability durability, long timeout,
      TimeUnit timeoutUnit) throws OperationExecutionException;

  OperationFactory getOperationFactory();

  /**
   * Writes records in bulk, as Oracle's {@code put(List<EntryStream>)}:
   * grouped by the shard that owns them into PutMany requests (records of
   * any major paths; at most the store's max_put_many_records and 4 MiB
   * each), with at most {@code options.getMaxRequestsInFlight()} requests in
   * flight. Each record is written on its own, not atomically with the
   * others, so a bad record fails alone. Returns one result per record. A
   * record refused for a reason that passes and certainly not applied (its
   * shard moved or changed leader, a leader change dropped it, its partition
   * was moving) is sent again after a backoff and a topology refresh, within
   * the timeout. Nothing that may have been applied is sent again.
   */
  BulkPutResult putMany(Iterator<KeyValue> records, BulkWriteOptions options);

  /** Closes every connection. Idempotent; operations after it fail (CANCELLED). */
  @Override
  void close();
}
