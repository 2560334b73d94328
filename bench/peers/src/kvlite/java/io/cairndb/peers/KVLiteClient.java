package io.cairndb.peers;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.SortedMap;
import java.util.Vector;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import oracle.kv.Consistency;
import oracle.kv.Durability;
import oracle.kv.KVStore;
import oracle.kv.KVStoreConfig;
import oracle.kv.KVStoreFactory;
import oracle.kv.Key;
import oracle.kv.Value;
import oracle.kv.ValueVersion;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * YCSB's {@code DB} over Oracle NoSQL Database's key/value API (oracle.kv),
 * storing and reading records as YCSB 0.17.0's nosqldb binding does (that
 * binding is not on Maven Central): one record per field, under the major
 * path {@code [table, key]} and the minor path {@code [field]}.
 *
 * <ul>
 *   <li>read: one {@code multiGet} of the major path, keeping the fields asked
 *       for; {@code NOT_FOUND} when it returns nothing;
 *   <li>insert and update: one {@code put} per field given (an insert of 10
 *       fields is 10 puts; YCSB's update of one field is one put);
 *   <li>delete: one {@code multiDelete} of the major path;
 *   <li>scan: not implemented, as in Oracle's binding.
 * </ul>
 *
 * <p>Properties (the names of Oracle's binding): {@code storeName} (kvstore),
 * {@code helperHost} (localhost:5000, comma-separated), {@code durability}
 * (COMMIT_NO_SYNC | COMMIT_WRITE_NO_SYNC | COMMIT_SYNC; the store's default
 * when absent), {@code consistency} (NONE_REQUIRED | ABSOLUTE), {@code
 * requestTimeout} (seconds).
 *
 * <p>YCSB makes one instance per client thread; like Oracle's binding, each
 * opens its own {@link KVStore} handle.
 *
 * <p>Built by scripts/bench-peers.sh with javac against the user's
 * kvstore.jar (it is not part of the Maven build). {@code main} is the
 * script's readiness probe: {@code KVLiteClient HOST:PORT STORE SECONDS}
 * opens the store and reads one key until that succeeds or the time is up.
 */
public class KVLiteClient extends DB {
  /** Errors printed in full; later ones are only counted. */
  private static final long PRINTED_ERRORS = 10;

  private static final AtomicLong ERRORS = new AtomicLong();

  private KVStore store;

  @Override
  public void init() throws DBException {
    Properties p = getProperties();
    String storeName = p.getProperty("storeName", "kvstore");
    String[] helpers = p.getProperty("helperHost", "localhost:5000").split(",");
    KVStoreConfig config = new KVStoreConfig(storeName, helpers);
    String v = p.getProperty("durability");
    if (v != null && !v.isEmpty()) {
      switch (v.toUpperCase()) {
        case "COMMIT_NO_SYNC":
          config.setDurability(Durability.COMMIT_NO_SYNC);
          break;
        case "COMMIT_WRITE_NO_SYNC":
          config.setDurability(Durability.COMMIT_WRITE_NO_SYNC);
          break;
        case "COMMIT_SYNC":
          config.setDurability(Durability.COMMIT_SYNC);
          break;
        default:
          throw new DBException("durability=" + v + ": want COMMIT_NO_SYNC, COMMIT_WRITE_NO_SYNC or COMMIT_SYNC");
      }
    }
    v = p.getProperty("consistency");
    if (v != null && !v.isEmpty()) {
      switch (v.toUpperCase()) {
        case "NONE_REQUIRED":
          config.setConsistency(Consistency.NONE_REQUIRED);
          break;
        case "ABSOLUTE":
          config.setConsistency(Consistency.ABSOLUTE);
          break;
        default:
          throw new DBException("consistency=" + v + ": want NONE_REQUIRED or ABSOLUTE");
      }
    }
    v = p.getProperty("requestTimeout");
    if (v != null && !v.isEmpty()) {
      try {
        config.setRequestTimeout(Long.parseLong(v.trim()), TimeUnit.SECONDS);
      } catch (IllegalArgumentException e) {
        throw new DBException("requestTimeout=" + v + ": " + e.getMessage(), e);
      }
    }
    try {
      store = KVStoreFactory.getStore(config);
    } catch (RuntimeException e) {
      throw new DBException("store " + storeName + " at " + String.join(",", helpers) + ": " + e, e);
    }
  }

  @Override
  public void cleanup() throws DBException {
    if (store != null) {
      store.close();
    }
    long n = ERRORS.get();
    if (n > PRINTED_ERRORS) {
      System.err.println("KVLiteClient: " + n + " errors (first " + PRINTED_ERRORS + " printed)");
    }
  }

  private static Key key(String table, String key, String field) {
    List<String> major = new ArrayList<>(2);
    major.add(table);
    major.add(key);
    return field == null ? Key.createKey(major) : Key.createKey(major, field);
  }

  private static Status failed(String op, String key, RuntimeException e) {
    if (ERRORS.incrementAndGet() <= PRINTED_ERRORS) {
      System.err.println("KVLiteClient: " + op + " " + key + ": " + e);
    }
    return Status.ERROR;
  }

  @Override
  public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
    SortedMap<Key, ValueVersion> records;
    try {
      records = store.multiGet(key(table, key, null), null, null);
    } catch (RuntimeException e) {
      return failed("read", key, e);
    }
    for (Map.Entry<Key, ValueVersion> e : records.entrySet()) {
      List<String> minor = e.getKey().getMinorPath();
      if (minor.size() == 1 && (fields == null || fields.contains(minor.get(0)))) {
        result.put(minor.get(0), new ByteArrayByteIterator(e.getValue().getValue().getValue()));
      }
    }
    return records.isEmpty() ? Status.NOT_FOUND : Status.OK;
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
      try {
        store.put(key(table, key, e.getKey()), Value.createValue(e.getValue().toArray()));
      } catch (RuntimeException ex) {
        return failed("put", key, ex);
      }
    }
    return Status.OK;
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    return update(table, key, values);
  }

  @Override
  public Status delete(String table, String key) {
    try {
      return store.multiDelete(key(table, key, null), null, null) > 0 ? Status.OK : Status.NOT_FOUND;
    } catch (RuntimeException e) {
      return failed("delete", key, e);
    }
  }

  @Override
  public Status scan(String table, String startkey, int recordcount, Set<String> fields,
      Vector<HashMap<String, ByteIterator>> result) {
    return Status.NOT_IMPLEMENTED;
  }

  /** The readiness probe: HOST:PORT STORE SECONDS; exits 0 once a read succeeds. */
  public static void main(String[] args) throws InterruptedException {
    if (args.length != 3) {
      System.err.println("usage: KVLiteClient HOST:PORT STORE SECONDS");
      System.exit(2);
    }
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(Long.parseLong(args[2]));
    RuntimeException last = null;
    while (System.nanoTime() < deadline) {
      try {
        KVStoreConfig config = new KVStoreConfig(args[1], args[0]);
        config.setRequestTimeout(5, TimeUnit.SECONDS);
        KVStore s = KVStoreFactory.getStore(config);
        try {
          s.get(Key.createKey("cairn-bench-peers-probe"));
          System.out.println("store " + args[1] + " at " + args[0] + " answers");
          return;
        } finally {
          s.close();
        }
      } catch (RuntimeException e) {
        last = e;
      }
      Thread.sleep(500);
    }
    System.err.println("store " + args[1] + " at " + args[0] + " did not answer within " + args[2] + " s: " + last);
    System.exit(1);
  }
}
