package io.cairndb.kv;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Routing against a real 3-node cluster (2 shards of 3 replicas, 100
 * partitions), including a shard leader killed with SIGKILL. The kill runs
 * last: the other tests need every node.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterTest {
  private static Procs.Cluster cluster;
  private static StoreImpl store;
  private final String ns = Procs.ns();

  @BeforeAll
  static void start() throws Exception {
    cluster = Procs.startCluster();
    // One helper host: the rest is learnt from the topology.
    store = (StoreImpl) KVStoreFactory.getStore(new KVStoreConfig(Procs.STORE, cluster.hosts()[0])
        .setRequestTimeout(10, TimeUnit.SECONDS));
  }

  @AfterAll
  static void stop() throws Exception {
    if (store != null) {
      store.close();
    }
    if (cluster != null) {
      cluster.close();
    }
  }

  private static Value v(String s) {
    return Value.createValue(s.getBytes(UTF_8));
  }

  private static long leaderOf(long shard) {
    return store.router.cluster.leader(shard);
  }

  @Test
  @Order(1)
  void topologyAndLeaderRouting() {
    Topology t = store.router.cluster.topology();
    assertEquals(100, t.partitions);
    assertEquals(cluster.nodes, new java.util.TreeMap<>(t.nodes));
    assertEquals(Set.of(1L, 2L), t.shards.keySet());
    Set<Long> shards = new HashSet<>();
    for (int i = 0; i < 40; i++) {
      Key k = Key.createKey(List.of(ns, Integer.toString(i)));
      store.put(k, v("x"));
      shards.add(store.shardOf(k));
    }
    assertEquals(Set.of(1L, 2L), shards, "40 major paths cover both shards");
    assertNotEquals(0, leaderOf(1));
    assertNotEquals(0, leaderOf(2));
  }

  @Test
  @Order(2)
  void operationsAndNotLeaderHint() throws Exception {
    Key m = Key.createKey(ns);
    Key a = Key.createKey(ns, "a");
    Version va = store.put(a, v("1"));
    assertEquals(va, store.get(a, Consistency.ABSOLUTE, 0, null).getVersion());
    assertEquals("1", new String(store.get(a, new Consistency.Version(va, 5, TimeUnit.SECONDS), 0, null)
        .getValue().getValue(), UTF_8));
    assertNull(store.putIfAbsent(a, v("2")));
    OperationFactory f = store.getOperationFactory();
    store.execute(List.of(f.createPut(Key.createKey(ns, "b"), v("b")), f.createPut(Key.createKey(ns, "c"), v("c"))));
    assertEquals(3, store.multiGet(m, null, null, Consistency.ABSOLUTE, 0, null).size());
    long s = store.shardOf(m);
    long lead = leaderOf(s);
    long other = 0;
    for (long r : store.router.cluster.topology().shards.get(s).replicas) {
      if (r != lead) {
        other = r;
      }
    }
    store.router.cluster.setLeader(s, other); // stale: that node answers not_leader naming the real one
    store.put(a, v("3"));
    assertEquals(lead, leaderOf(s), "the hint was followed");
    assertEquals(3, store.multiDelete(m, null, null));
  }

  @Test
  @Order(3)
  void storeIteratorCoversBothShards() {
    List<KeyValue> recs = new ArrayList<>();
    for (int i = 0; i < 60; i++) {
      recs.add(new KeyValue(Key.createKey(List.of(ns, Integer.toString(i)), List.of("m")), v("v")));
    }
    BulkPutResult r = store.putMany(recs.iterator(), null);
    assertTrue(r.getFailedIndexes().isEmpty(), r.toString());
    Set<String> got = new HashSet<>();
    store.storeKeysIterator(Direction.UNORDERED, 9, Key.createKey(ns), null, null, Consistency.ABSOLUTE, 0, null)
        .forEachRemaining(k -> got.add(k.toString()));
    assertEquals(60, got.size());
  }

  @Test
  @Order(3)
  void spreadReadsServe() throws Exception {
    Key k = Key.createKey(List.of(ns, "spread"), List.of("x"));
    Version v = store.put(k, v("v"));
    try (KVStore spread = KVStoreFactory.getStore(new KVStoreConfig(Procs.STORE, cluster.hosts()[0])
        .setRequestTimeout(10, TimeUnit.SECONDS).setSpreadReads(true))) {
      for (int i = 0; i < 6; i++) {
        ValueVersion got = spread.get(k, Consistency.ABSOLUTE, 0, null);
        assertEquals(v, got.getVersion());
      }
      for (int i = 0; i < 6; i++) { // NONE_REQUIRED, round robin: every replica applies the put soon
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        ValueVersion got = spread.get(k);
        while (got == null && System.nanoTime() < deadline) {
          Thread.sleep(10); // polling a condition, with a deadline
          got = spread.get(k);
        }
        assertNotNull(got, "a replica never applied the put");
        assertEquals(v, got.getVersion());
      }
    }
  }

  @Test
  @Order(4)
  void leaderKilledWritesKeepSucceeding() throws Exception {
    Key k0 = Key.createKey(List.of(ns), List.of("0"));
    store.put(k0, v("x"));
    long s = store.shardOf(k0);
    long old = leaderOf(s);
    assertNotEquals(0, old);
    cluster.kill(old); // SIGKILL
    try {
      Map<Key, Version> versions = new LinkedHashMap<>();
      for (int i = 1; i <= 60; i++) {
        Key k = Key.createKey(List.of(ns), List.of(Integer.toString(i)));
        try {
          versions.put(k, store.put(k, v(Integer.toString(i))));
        } catch (FaultException e) {
          // Only the first write may have gone out on the dead node's
          // connection: its outcome is unknown, it is not retried, a read tells.
          assertTrue(i == 1 && e.maybeApplied(), "write " + i + ": " + e);
          ValueVersion vv = store.get(k, Consistency.ABSOLUTE, 0, null);
          if (vv != null) {
            versions.put(k, vv.getVersion());
          }
        }
      }
      long now = leaderOf(s);
      assertTrue(now != 0 && now != old, "new leader " + now + ", old " + old);
      for (Map.Entry<Key, Version> e : versions.entrySet()) {
        assertEquals(e.getValue(), store.get(e.getKey(), Consistency.ABSOLUTE, 0, null).getVersion());
      }
      int n = 0;
      for (Key k : versions.keySet()) {
        if (n++ == 10) {
          break;
        }
        assertNotNull(store.get(k, new Consistency.Time(5, TimeUnit.SECONDS, 5, TimeUnit.SECONDS), 0, null));
      }
      List<KeyValue> recs = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        recs.add(new KeyValue(Key.createKey(List.of(ns, "pm", Integer.toString(i))), v("v")));
      }
      BulkPutResult r = store.putMany(recs.iterator(), new BulkWriteOptions().setMaxRequestsInFlight(4));
      assertTrue(r.getFailedIndexes().isEmpty(), "putMany with a node down: " + r);
    } finally {
      cluster.start(old);
    }
    try (KVStore s2 = KVStoreFactory.getStore(new KVStoreConfig(Procs.STORE, cluster.nodes.get(old))
        .setRequestTimeout(10, TimeUnit.SECONDS))) {
      assertEquals("x", new String(s2.get(k0, Consistency.ABSOLUTE, 0, null).getValue().getValue(), UTF_8));
      s2.put(k0, v("after"));
    }
  }
}
