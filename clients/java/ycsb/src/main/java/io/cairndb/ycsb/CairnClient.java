package io.cairndb.ycsb;

import io.cairndb.kv.Consistency;
import io.cairndb.kv.Depth;
import io.cairndb.kv.Direction;
import io.cairndb.kv.Durability;
import io.cairndb.kv.KVStore;
import io.cairndb.kv.KVStoreConfig;
import io.cairndb.kv.KVStoreFactory;
import io.cairndb.kv.Key;
import io.cairndb.kv.KeyRange;
import io.cairndb.kv.KeyValueVersion;
import io.cairndb.kv.Operation;
import io.cairndb.kv.OperationExecutionException;
import io.cairndb.kv.OperationFactory;
import io.cairndb.kv.Value;
import io.cairndb.kv.ValueVersion;
import io.cairndb.kv.Version;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedMap;
import java.util.Vector;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * YCSB's {@code DB} over Cairn's Java client, storing records exactly as
 * {@code cairn bench -db cairn} does (internal/bench/db_kv.go), so a store
 * loaded by either can be run by the other. Run it with
 * {@code site.ycsb.Client -db io.cairndb.ycsb.CairnClient}.
 *
 * <p>Properties (the names and defaults of {@code cairn bench}; values
 * case-insensitive): {@code cairn.hosts} (127.0.0.1:5000, comma-separated),
 * {@code cairn.store} (kvstore), {@code cairn.layout} (value | minor),
 * {@code cairn.consistency} (none_required | absolute), {@code
 * cairn.durability} (write_no_sync | sync | no_sync: the leader's sync
 * policy; replicas no_sync, simple-majority acks), {@code cairn.timeout} (5s,
 * a Go duration), {@code cairn.callsocket} (true: calls on the nodes' call
 * sockets | false: on the gRPC call stream), {@code cairn.unarycalls} (false
 * | true: every call a unary RPC), and YCSB's {@code fieldcount} and {@code fieldnameprefix}.
 *
 * <p>Layouts:
 *
 * <ul>
 *   <li>value (default): the record is one value under {@code /<table>/<key>}
 *       in the encoding of {@link RecordCodec}. A read is one get; an insert
 *       one put; an update of every field one putIfPresent; an update of some
 *       fields one updateFields, which the server merges into the stored
 *       record (cairn.update=merge, the default), or a get (ABSOLUTE) and a
 *       putIfVersion, retried up to 10 times if the record changed in between
 *       (cairn.update=rmw).
 *   <li>minor: one record per field under {@code /<table>/<key>/-/<field>},
 *       as Oracle NoSQL's nosqldb binding stores them. A read is one multiGet
 *       of the major path (one get for a single field); an insert or update is
 *       one atomic execute of the field puts (one put for a single field, as
 *       YCSB's update writes); a delete one multiDelete.
 * </ul>
 *
 * <p>A scan is a store iterator under {@code /<table>} from the start key
 * (inclusive) on, taking the first N records (distinct keys, in the minor
 * layout) it yields: records at or after the start key, but not the N that
 * follow it in key order, since records are ordered only within a partition.
 *
 * <p>YCSB makes one instance per client thread. They share one {@link
 * KVStore} per JVM, opened by the first {@link #init} and closed by the last
 * {@link #cleanup}. Each instance keeps its own scratch space; the binding
 * starts no threads.
 */
public class CairnClient extends DB {
  /** Rounds of get + putIfVersion of a partial update before it fails (as cairn bench). */
  static final int UPDATE_TRIES = 10;
  /** The largest page the server returns. */
  static final int MAX_SCAN_BATCH = 10000;
  /** Errors printed in full; later ones are only counted. */
  private static final int PRINTED_ERRORS = 10;

  private static final Object LOCK = new Object();
  private static KVStore shared;
  private static int users;
  private static final AtomicLong ERRORS = new AtomicLong();

  private Settings settings;
  private KVStore store;
  private OperationFactory ops;
  private RecordCodec codec;
  private final RecordCodec.Fields fields = new RecordCodec.Fields();
  private final List<Operation> batch = new ArrayList<>();
  private String[] updNames = new String[16];
  private byte[][] updValues = new byte[16][];

  @Override
  public void init() throws DBException {
    Settings s = Settings.parse(getProperties());
    synchronized (LOCK) {
      if (shared == null) {
        shared = open(s);
      }
      users++;
      store = shared;
    }
    settings = s;
    ops = store.getOperationFactory();
    codec = new RecordCodec(s.fieldNames);
  }

  private static KVStore open(Settings s) throws DBException {
    KVStoreConfig c = new KVStoreConfig(s.store, s.hosts.toArray(new String[0]));
    c.setRequestTimeout(s.timeoutNanos, TimeUnit.NANOSECONDS);
    c.setConsistency(s.consistency.equals("absolute") ? Consistency.ABSOLUTE : Consistency.NONE_REQUIRED);
    c.setDurability(new Durability(syncPolicy(s.durability), Durability.SyncPolicy.NO_SYNC,
        Durability.ReplicaAckPolicy.SIMPLE_MAJORITY));
    c.setUnaryCalls(s.unaryCalls);
    c.setCallSocket(s.callSocket);
    try {
      return KVStoreFactory.getStore(c);
    } catch (RuntimeException e) {
      throw new DBException("cairn: cannot open store " + s.store + " at " + String.join(",", s.hosts)
          + " (" + Settings.HOSTS + ", " + Settings.STORE + "): " + e.getMessage(), e);
    }
  }

  private static Durability.SyncPolicy syncPolicy(String s) {
    switch (s) {
      case "sync":
        return Durability.SyncPolicy.SYNC;
      case "no_sync":
        return Durability.SyncPolicy.NO_SYNC;
      default:
        return Durability.SyncPolicy.WRITE_NO_SYNC;
    }
  }

  @Override
  public void cleanup() throws DBException {
    if (store == null) {
      return;
    }
    store = null;
    synchronized (LOCK) {
      if (--users == 0) {
        KVStore s = shared;
        shared = null;
        long n = ERRORS.get();
        if (n > PRINTED_ERRORS) {
          System.err.println("cairn: " + n + " operations failed in all");
        }
        try {
          s.close();
        } catch (RuntimeException e) {
          throw new DBException("cairn: closing the store: " + e.getMessage(), e);
        }
      }
    }
  }

  private static Status fail(String op, String key, Exception e) {
    long n = ERRORS.incrementAndGet();
    if (n <= PRINTED_ERRORS) {
      System.err.println("cairn: " + op + " " + key + ": " + e);
      if (n == PRINTED_ERRORS) {
        System.err.println("cairn: further errors are counted, not printed");
      }
    }
    return Status.ERROR;
  }

  private static List<String> major(String table, String key) {
    return Arrays.asList(table, key);
  }

  private static boolean wanted(Set<String> fields, String name) {
    return fields == null || fields.contains(name);
  }

  @Override
  public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
    try {
      if (!settings.minor) {
        ValueVersion vv = store.get(Key.createKey(major(table, key)));
        if (vv == null) {
          return Status.NOT_FOUND;
        }
        byte[] b = vv.getValue().getValue();
        codec.decode(b, this.fields);
        RecordCodec.Fields f = this.fields;
        for (int i = 0; i < f.count; i++) {
          if (wanted(fields, f.names[i])) {
            result.put(f.names[i], new ByteArrayByteIterator(b, f.offsets[i], f.lengths[i]));
          }
        }
        f.record = null;
        return Status.OK;
      }
      if (fields != null && fields.size() == 1) {
        String name = fields.iterator().next();
        ValueVersion vv = store.get(Key.createKey(major(table, key), name));
        if (vv == null) {
          return Status.NOT_FOUND;
        }
        result.put(name, new ByteArrayByteIterator(vv.getValue().getValue()));
        return Status.OK;
      }
      SortedMap<Key, ValueVersion> recs = store.multiGet(Key.createKey(major(table, key)), null,
          Depth.PARENT_AND_DESCENDANTS);
      if (recs.isEmpty()) {
        return Status.NOT_FOUND;
      }
      for (Map.Entry<Key, ValueVersion> e : recs.entrySet()) {
        List<String> minor = e.getKey().getMinorPath();
        if (minor.size() == 1 && wanted(fields, minor.get(0))) {
          result.put(minor.get(0), new ByteArrayByteIterator(e.getValue().getValue().getValue()));
        }
      }
      return Status.OK;
    } catch (RecordCodec.BadRecordException | RuntimeException e) {
      return fail("read", key, e);
    }
  }

  @Override
  public Status scan(String table, String startkey, int recordcount, Set<String> fields,
      Vector<HashMap<String, ByteIterator>> result) {
    int n = settings.minor ? recordcount * settings.fieldNames.length : recordcount;
    n = Math.min(Math.max(n, 1), MAX_SCAN_BATCH);
    try {
      Iterator<KeyValueVersion> it = store.storeIterator(Direction.UNORDERED, n,
          Key.createKey(Collections.singletonList(table)), new KeyRange(startkey, true, null, false),
          Depth.PARENT_AND_DESCENDANTS);
      String last = null;
      HashMap<String, ByteIterator> rec = null;
      while (it.hasNext() && (settings.minor || result.size() < recordcount)) {
        KeyValueVersion kv = it.next();
        List<String> maj = kv.getKey().getMajorPath();
        if (maj.size() < 2) {
          continue;
        }
        String name = maj.get(1);
        byte[] b = kv.getValue().getValue();
        if (!settings.minor) {
          codec.decode(b, this.fields);
          RecordCodec.Fields f = this.fields;
          rec = new HashMap<>();
          for (int i = 0; i < f.count; i++) {
            if (wanted(fields, f.names[i])) {
              rec.put(f.names[i], new ByteArrayByteIterator(b, f.offsets[i], f.lengths[i]));
            }
          }
          f.record = null;
          result.add(rec);
          continue;
        }
        if (rec == null || !name.equals(last)) {
          if (result.size() == recordcount) {
            break;
          }
          rec = new HashMap<>();
          result.add(rec);
          last = name;
        }
        List<String> minor = kv.getKey().getMinorPath();
        if (minor.size() == 1 && wanted(fields, minor.get(0))) {
          rec.put(minor.get(0), new ByteArrayByteIterator(b));
        }
      }
      return Status.OK;
    } catch (RecordCodec.BadRecordException | RuntimeException e) {
      return fail("scan", startkey, e);
    }
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    try {
      if (settings.minor) {
        return putFields(table, key, values);
      }
      store.put(Key.createKey(major(table, key)), Value.createValue(codec.encode(values)));
      return Status.OK;
    } catch (OperationExecutionException | RuntimeException e) {
      return fail("insert", key, e);
    }
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    try {
      if (settings.minor) {
        return putFields(table, key, values);
      }
      Key k = Key.createKey(major(table, key));
      if (values.size() == settings.fieldNames.length) {
        Version v = store.putIfPresent(k, Value.createValue(codec.encode(values)));
        return v == null ? Status.NOT_FOUND : Status.OK;
      }
      if (!settings.rmw) {
        Version v = store.updateFields(k, Value.createValue(codec.encode(values)), null);
        return v == null ? Status.NOT_FOUND : Status.OK;
      }
      // A partial update: read, merge, write if the record did not change.
      // The new values are taken out of their iterators once, for every round.
      int n = values.size();
      if (updNames.length < n) {
        updNames = new String[n];
        updValues = new byte[n][];
      }
      int i = 0;
      for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
        updNames[i] = e.getKey();
        updValues[i++] = e.getValue().toArray();
      }
      try {
        for (int t = 0; t < UPDATE_TRIES; t++) {
          ValueVersion vv = store.get(k, Consistency.ABSOLUTE, settings.timeoutNanos, TimeUnit.NANOSECONDS);
          if (vv == null) {
            return Status.NOT_FOUND;
          }
          codec.decode(vv.getValue().getValue(), fields);
          byte[] merged = codec.merge(fields, updNames, updValues, n);
          fields.record = null;
          if (store.putIfVersion(k, Value.createValue(merged), vv.getVersion()) != null) {
            return Status.OK;
          }
        }
      } finally {
        Arrays.fill(updValues, 0, n, null);
      }
      return fail("update", key, new IllegalStateException(
          "the record changed under every one of " + UPDATE_TRIES + " read-and-write attempts"));
    } catch (RecordCodec.BadRecordException | OperationExecutionException | RuntimeException e) {
      return fail("update", key, e);
    }
  }

  /**
   * Writes each field as its own record under the major path, in one atomic
   * execute; a single field (YCSB's update) in one put, which is as atomic
   * and takes a shorter path through the client.
   */
  private Status putFields(String table, String key, Map<String, ByteIterator> values)
      throws OperationExecutionException {
    List<String> major = major(table, key);
    if (values.size() == 1) {
      Map.Entry<String, ByteIterator> e = values.entrySet().iterator().next();
      store.put(Key.createKey(major, e.getKey()), Value.createValue(e.getValue().toArray()));
      return Status.OK;
    }
    batch.clear();
    for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
      batch.add(ops.createPut(Key.createKey(major, e.getKey()), Value.createValue(e.getValue().toArray())));
    }
    try {
      store.execute(batch);
    } finally {
      batch.clear();
    }
    return Status.OK;
  }

  @Override
  public Status delete(String table, String key) {
    try {
      boolean done;
      if (settings.minor) {
        done = store.multiDelete(Key.createKey(major(table, key)), null, Depth.PARENT_AND_DESCENDANTS) > 0;
      } else {
        done = store.delete(Key.createKey(major(table, key)));
      }
      return done ? Status.OK : Status.NOT_FOUND;
    } catch (RuntimeException e) {
      return fail("delete", key, e);
    }
  }
}
