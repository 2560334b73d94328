package io.cairndb.kv;

import io.cairndb.kv.proto.ShardStatus;
import io.cairndb.kv.proto.StoreInfoResponse;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What the client knows about a replicated store: its topology and, per
 * shard, the node it believes leads. Both are hints that the servers correct
 * (not_leader, wrong_shard); nothing depends on them being right. The rules
 * are the Go client's (client/route.go, client/topology.go). Thread-safe:
 * the topology is swapped whole, the leader map is concurrent.
 */
final class Cluster {
  private volatile Topology topo;
  private final Map<Long, Long> leaders = new ConcurrentHashMap<>();
  final Object refreshLock = new Object();
  long lastRefreshNanos; // guarded by refreshLock

  Cluster(StoreInfoResponse resp) {
    topo = Topology.from(resp.getTopology());
    install(resp);
  }

  Topology topology() {
    return topo;
  }

  /**
   * Adopts a newer topology from a StoreInfo answer, and the answering
   * node's view of leaders for shards whose leader is not cached. True if
   * the topology changed.
   */
  synchronized boolean install(StoreInfoResponse resp) {
    if (!resp.hasTopology()) {
      return false;
    }
    Topology t = Topology.from(resp.getTopology());
    boolean changed = t.seq > topo.seq;
    if (changed) {
      topo = t;
      leaders.entrySet().removeIf(e -> {
        Topology.Shard sh = t.shards.get(e.getKey());
        return sh == null || !sh.hasReplica(e.getValue());
      });
    }
    for (ShardStatus st : resp.getLocalShardsList()) {
      if (leaders.containsKey(st.getShard()) || st.getLeader() == 0) {
        continue;
      }
      Topology.Shard sh = topo.shards.get(st.getShard());
      if (sh != null && sh.hasReplica(st.getLeader())) {
        leaders.put(st.getShard(), st.getLeader());
      }
    }
    return changed;
  }

  /** The cached leader of shard s, 0 if none. */
  long leader(long s) {
    Long n = leaders.get(s);
    return n == null ? 0 : n;
  }

  void setLeader(long s, long n) {
    Long old = leaders.get(s);
    if (old == null || old != n) {
      leaders.put(s, n);
    }
  }

  void forgetLeader(long s, long n) {
    leaders.remove(s, n);
  }

  /**
   * wrong_shard named the shard the partition moved to: adopts a copy of t
   * in which it belongs there (same seq). True if the request should be
   * retried at once.
   */
  synchronized boolean moved(Topology t, Key k, long to, int partitions) {
    if (to == 0 || partitions != t.partitions || !t.shards.containsKey(to)) {
      return false;
    }
    if (topo != t) {
      return true;
    }
    if (t.partitionShard[Partitions.partitionOf(k.majorHash(), t.partitions)] == to) {
      return false;
    }
    topo = t.withPartitionMoved(k, to);
    return true;
  }
}
