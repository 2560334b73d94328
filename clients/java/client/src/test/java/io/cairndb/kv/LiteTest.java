package io.cairndb.kv;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.SortedMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Every operation against a real cairn lite. */
class LiteTest {
  private static KVStore store;
  private String ns;

  @BeforeAll
  static void open() throws Exception {
    store = KVStoreFactory.getStore(new KVStoreConfig(Procs.STORE, Procs.lite().addr));
  }

  @AfterAll
  static void close() {
    store.close();
  }

  LiteTest() {
    ns = Procs.ns();
  }

  private static Value v(String s) {
    return Value.createValue(s.getBytes(UTF_8));
  }

  private static String s(ValueVersion vv) {
    return new String(vv.getValue().getValue(), UTF_8);
  }

  private Key k(String... minor) {
    return Key.createKey(List.of(ns), List.of(minor));
  }

  @Test
  void putGetDelete() {
    assertNull(store.get(k("a")));
    Version v1 = store.put(k("a"), v("one"));
    ValueVersion got = store.get(k("a"));
    assertEquals("one", s(got));
    assertEquals(v1, got.getVersion());
    assertEquals(0, got.getExpirationTime());
    Version v2 = store.put(k("a"), v("two"));
    assertNotEquals(v1, v2);
    assertEquals(v2.toString(), Version.fromString(v2.toString()).toString());
    assertTrue(store.delete(k("a")));
    assertFalse(store.delete(k("a")));
    assertNull(store.get(k("a"), Consistency.ABSOLUTE, 2, TimeUnit.SECONDS));
  }

  @Test
  void fieldRecords() {
    java.util.Map<String, byte[]> f = new java.util.LinkedHashMap<>();
    f.put("field0", "a".getBytes(UTF_8));
    f.put("field1", new byte[0]);
    // The bytes api/fieldrec (Go) writes for these fields.
    assertEquals("0102066669656c64300161066669656c643100", java.util.HexFormat.of().formatHex(FieldRecord.encode(f)));
    assertNull(store.updateFields(k("f"), Value.createValue(FieldRecord.encode(f)), null), "no record");
    assertNotNull(store.mergeFields(k("f"), Value.createValue(FieldRecord.encode(f)), null));
    java.util.Map<String, byte[]> upd = new java.util.LinkedHashMap<>();
    upd.put("field9", "new".getBytes(UTF_8));
    upd.put("field0", "b".getBytes(UTF_8));
    Version v = store.updateFields(k("f"), Value.createValue(FieldRecord.encode(upd)), null);
    ValueVersion got = store.get(k("f"));
    assertEquals(v, got.getVersion());
    java.util.Map<String, byte[]> rec = FieldRecord.decode(got.getValue().getValue());
    assertEquals(java.util.List.of("field0", "field1", "field9"), new java.util.ArrayList<>(rec.keySet()));
    assertEquals("b", new String(rec.get("field0"), UTF_8));
    store.put(k("plain"), v("text"));
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
        () -> store.mergeFields(k("plain"), Value.createValue(FieldRecord.encode(upd)), null));
    assertEquals("not_field_record", e.getKind(), e.getMessage());
    assertEquals("text", s(store.get(k("plain"))));
    assertThrows(IllegalArgumentException.class, () -> FieldRecord.decode(new byte[] {1, 1, 5, 'a'}));
  }

  @Test
  void conditionsAndReturnValues() {
    Version v1 = store.putIfAbsent(k("c"), v("1"));
    assertNotNull(v1);
    assertNull(store.putIfAbsent(k("c"), v("2")), "a record exists");
    assertNull(store.putIfPresent(k("none"), v("2")), "no record");
    ReturnValueVersion prev = new ReturnValueVersion(ReturnValueVersion.Choice.ALL);
    Version v2 = store.putIfPresent(k("c"), v("2"), prev, null, 0, null);
    assertNotNull(v2);
    assertEquals("1", new String(prev.getValue().getValue(), UTF_8));
    assertEquals(v1, prev.getVersion());
    assertNull(store.putIfVersion(k("c"), v("3"), v1), "stale version");
    Version v3 = store.putIfVersion(k("c"), v("3"), v2);
    assertNotNull(v3);
    assertFalse(store.deleteIfVersion(k("c"), v2));
    ReturnValueVersion onlyVersion = new ReturnValueVersion(ReturnValueVersion.Choice.VERSION);
    assertTrue(store.deleteIfVersion(k("c"), v3, onlyVersion, Durability.COMMIT_SYNC, 5, TimeUnit.SECONDS));
    assertEquals(v3, onlyVersion.getVersion());
    assertNull(onlyVersion.getValue(), "VERSION does not return the value");
  }

  @Test
  void ttlAndDurability() {
    long before = System.currentTimeMillis();
    store.put(k("t"), v("x"), null, new WriteOptions().setTTL(TimeToLive.ofHours(1))
        .setDurability(new Durability(Durability.SyncPolicy.NO_SYNC, Durability.SyncPolicy.NO_SYNC,
            Durability.ReplicaAckPolicy.NONE)));
    long exp = store.get(k("t")).getExpirationTime();
    assertTrue(exp >= before + 3_600_000 - 1000 && exp <= System.currentTimeMillis() + 3_600_000 + 1000, "exp " + exp);
    store.put(k("t"), v("y"), null, Durability.COMMIT_SYNC, 3, TimeUnit.SECONDS);
    assertEquals(0, store.get(k("t")).getExpirationTime(), "a put without TTL never expires");
  }

  @Test
  void consistencyKinds() {
    Version ver = store.put(k("r"), v("x"));
    assertEquals("x", s(store.get(k("r"), Consistency.ABSOLUTE, 0, null)));
    assertEquals("x", s(store.get(k("r"), Consistency.NONE_REQUIRED, 0, null)));
    assertEquals("x", s(store.get(k("r"), new Consistency.Time(1, TimeUnit.SECONDS, 1, TimeUnit.SECONDS), 0, null)));
    assertEquals("x", s(store.get(k("r"), new Consistency.Version(ver, 1, TimeUnit.SECONDS), 0, null)));
  }

  @Test
  void multiGetRangeDepthAndMultiDelete() {
    Key parent = Key.createKey(ns);
    store.put(parent, v("p"));
    for (String m : List.of("a", "b", "c", "d")) {
      store.put(k(m), v(m));
    }
    store.put(Key.createKey(List.of(ns), List.of("b", "x")), v("bx"));
    SortedMap<Key, ValueVersion> all = store.multiGet(parent, null, null);
    assertEquals(List.of("/" + ns, "/" + ns + "/-/a", "/" + ns + "/-/b", "/" + ns + "/-/b/x", "/" + ns + "/-/c",
        "/" + ns + "/-/d"), all.keySet().stream().map(Key::toString).collect(Collectors.toList()));
    assertEquals(4, store.multiGet(parent, null, Depth.CHILDREN_ONLY).size());
    assertEquals(5, store.multiGetKeys(parent, null, Depth.PARENT_AND_CHILDREN).size());
    SortedMap<Key, ValueVersion> bc = store.multiGet(parent, new KeyRange("b", true, "c", false),
        Depth.CHILDREN_ONLY, Consistency.ABSOLUTE, 5, TimeUnit.SECONDS);
    assertEquals(List.of("b"), bc.keySet().stream().map(x -> x.getMinorPath().get(0)).collect(Collectors.toList()));
    assertEquals(List.of("", "b", "b/x"), store.multiGetKeys(parent, new KeyRange("b"), Depth.PARENT_AND_DESCENDANTS)
        .stream().map(x -> String.join("/", x.getMinorPath())).collect(Collectors.toList()));
    assertEquals(2, store.multiDelete(parent, new KeyRange("c", true, null, false), Depth.CHILDREN_ONLY));
    assertEquals(4, store.multiDelete(parent, null, null));
    assertTrue(store.multiGet(parent, null, null).isEmpty());
  }

  @Test
  void iteratorsPage() {
    Key parent = Key.createKey(ns);
    for (int i = 0; i < 10; i++) {
      store.put(k(String.format("%02d", i)), v(Integer.toString(i)));
    }
    List<String> fwd = new ArrayList<>();
    store.multiGetIterator(Direction.FORWARD, 3, parent, null, null)
        .forEachRemaining(r -> fwd.add(r.getKey().getMinorPath().get(0)));
    assertEquals(10, fwd.size());
    assertEquals("00", fwd.get(0));
    List<String> rev = new ArrayList<>();
    store.multiGetKeysIterator(Direction.REVERSE, 4, parent, null, null)
        .forEachRemaining(key -> rev.add(key.getMinorPath().get(0)));
    assertEquals("09", rev.get(0));
    assertEquals(10, rev.size());
    List<Key> scanned = new ArrayList<>();
    store.storeIterator(Direction.UNORDERED, 3, parent, null, null).forEachRemaining(r -> {
      assertNotNull(r.getValue());
      scanned.add(r.getKey());
    });
    assertEquals(10, scanned.size());
    Iterator<Key> keys = store.storeKeysIterator(Direction.UNORDERED, 2, parent, null, null);
    int n = 0;
    for (; keys.hasNext(); n++) {
      assertEquals(ns, keys.next().getMajorPath().get(0));
    }
    assertEquals(10, n);
    boolean seen = false;
    for (Iterator<KeyValueVersion> it = store.storeIterator(Direction.UNORDERED, 50); it.hasNext();) {
      seen |= it.next().getKey().getMajorPath().get(0).equals(ns);
    }
    assertTrue(seen, "the whole-store scan finds this test's records");
    assertThrows(IllegalArgumentException.class, () -> store.storeIterator(Direction.FORWARD, 10));
  }

  @Test
  void executeCommitsOrAborts() throws Exception {
    OperationFactory f = store.getOperationFactory();
    Version va = store.put(k("a"), v("a0"));
    List<OperationResult> res = store.execute(List.of(
        f.createPut(k("a"), v("a1"), ReturnValueVersion.Choice.VALUE, true),
        f.createPutIfAbsent(k("b"), v("b1")),
        f.createDelete(k("none"))));
    assertTrue(res.get(0).getSuccess());
    assertArrayEquals("a0".getBytes(UTF_8), res.get(0).getPreviousValue().getValue());
    assertNotNull(res.get(1).getNewVersion());
    assertFalse(res.get(2).getSuccess());
    OperationExecutionException e = assertThrows(OperationExecutionException.class, () -> store.execute(List.of(
        f.createPut(k("c"), v("c1")),
        f.createPutIfVersion(k("a"), v("a2"), va, ReturnValueVersion.Choice.VERSION, true))));
    assertEquals(1, e.getFailedOperationIndex());
    assertFalse(e.getFailedOperationResult().getSuccess());
    assertEquals(store.get(k("a")).getVersion(), e.getFailedOperationResult().getPreviousVersion());
    assertNull(store.get(k("c")), "an aborted batch writes nothing");
    InvalidArgumentException multi = assertThrows(InvalidArgumentException.class, () -> store.execute(List.of(
        f.createPut(k("a"), v("x")), f.createPut(Key.createKey("other" + ns), v("y")))));
    assertEquals("multiple_major_paths", multi.getKind());
  }

  @Test
  void putManyReportsEachRecord() {
    List<KeyValue> recs = new ArrayList<>();
    for (int i = 0; i < 250; i++) {
      recs.add(new KeyValue(Key.createKey(List.of(ns, Integer.toString(i % 7)), List.of(Integer.toString(i))),
          v("v" + i)));
    }
    recs.set(42, new KeyValue(recs.get(42).getKey(), Value.createValue(new byte[70_000]))); // over the lite's limit
    BulkPutResult r = store.putMany(recs.iterator(), new BulkWriteOptions().setMaxRequestsInFlight(3));
    assertEquals(250, r.size());
    assertEquals(List.of(42), r.getFailedIndexes());
    InvalidArgumentException e = (InvalidArgumentException) r.getError(42);
    assertEquals("limit_exceeded", e.getKind());
    assertEquals("max_value_bytes", e.getLimit());
    assertEquals(65536, e.getMax());
    for (int i : List.of(0, 41, 43, 249)) {
      assertEquals(r.getVersion(i), store.get(recs.get(i).getKey()).getVersion(), "record " + i);
    }
  }

  @Test
  void errorsAreTyped() throws Exception {
    InvalidArgumentException big = assertThrows(InvalidArgumentException.class,
        () -> store.put(k("big"), Value.createValue(new byte[70_000])));
    assertEquals("limit_exceeded", big.getKind());
    assertEquals(Status.Code.INVALID_ARGUMENT, big.getStatusCode());
    assertFalse(big.isRetryable());
    InvalidArgumentException badVersion = assertThrows(InvalidArgumentException.class,
        () -> store.putIfVersion(k("bv"), v("x"), Version.fromByteArray(new byte[] {1})));
    assertEquals("bad_version", badVersion.getKind(), badVersion.getMessage());
    RequestTimeoutException slow = assertThrows(RequestTimeoutException.class,
        () -> store.put(k("slow"), v("x"), null, null, 1, TimeUnit.NANOSECONDS));
    assertEquals(Status.Code.DEADLINE_EXCEEDED, slow.getStatusCode());
    assertFalse(slow.isRetryable());
    assertThrows(IllegalArgumentException.class, () -> store.put(null, v("x")));
    assertThrows(IllegalArgumentException.class, () -> new KVStoreConfig(Procs.STORE, "nohostport"));
  }

  @Test
  void storeMismatchUnreachableAndClosed() throws Exception {
    InvalidArgumentException mismatch = assertThrows(InvalidArgumentException.class,
        () -> KVStoreFactory.getStore(new KVStoreConfig("another", Procs.lite().addr)));
    assertEquals("store_mismatch", mismatch.getKind());
    FaultException down = assertThrows(FaultException.class, () -> KVStoreFactory.getStore(
        new KVStoreConfig(Procs.STORE, "127.0.0.1:1").setRequestTimeout(1, TimeUnit.SECONDS)));
    assertEquals(Status.Code.UNAVAILABLE, down.getStatusCode());
    assertTrue(down.getMessage().contains("no host answered"), down.getMessage());
    KVStore s2 = KVStoreFactory.getStore(new KVStoreConfig(Procs.STORE, "127.0.0.1:1", Procs.lite().addr));
    s2.put(k("two"), v("x")); // the dead helper is skipped
    s2.close();
    s2.close();
    FaultException closed = assertThrows(FaultException.class, () -> s2.get(k("two")));
    assertEquals(Status.Code.CANCELLED, closed.getStatusCode());
  }

  @Test
  void readsRetryAcrossARestart() throws Exception {
    Path root = Files.createTempDirectory("cairn-java-restart-");
    Procs.Lite lt = Procs.startLite(root);
    String port = lt.addr.substring(lt.addr.lastIndexOf(':') + 1);
    try (KVStore s = KVStoreFactory.getStore(new KVStoreConfig(Procs.STORE, lt.addr)
        .setRequestTimeout(10, TimeUnit.SECONDS))) {
      s.put(k("x"), v("before"));
      lt.stop();
      lt = Procs.startLite(root, "--port", port);
      assertEquals("before", s(s.get(k("x"))), "the read is retried until the node is back");
      s.put(k("x"), v("after"));
    } finally {
      lt.stop();
      Procs.rmrf(root);
    }
  }
}
