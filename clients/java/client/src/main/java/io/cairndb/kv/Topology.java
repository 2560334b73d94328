package io.cairndb.kv;

import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;

/**
 * A replicated store's topology as the client routes by it: nodes (id to
 * address), shards (replicas and preferred leader), and each partition's
 * shard. Immutable; built from StoreInfo's answer, checked on the way.
 */
final class Topology {
  /** One shard: its replica node ids and the node that should lead. */
  static final class Shard {
    final long id;
    final long[] replicas;
    final long preferred;

    Shard(long id, long[] replicas, long preferred) {
      this.id = id;
      this.replicas = replicas;
      this.preferred = preferred;
    }

    boolean hasReplica(long node) {
      for (long r : replicas) {
        if (r == node) {
          return true;
        }
      }
      return false;
    }
  }

  final long seq;
  final int partitions;
  final Map<Long, String> nodes;
  final Map<Long, Shard> shards;
  final long[] partitionShard;

  private Topology(long seq, int partitions, Map<Long, String> nodes, Map<Long, Shard> shards, long[] ps) {
    this.seq = seq;
    this.partitions = partitions;
    this.nodes = nodes;
    this.shards = shards;
    this.partitionShard = ps;
  }

  static Topology from(io.cairndb.kv.proto.Topology t) {
    Map<Long, String> nodes = new HashMap<>();
    for (io.cairndb.kv.proto.TopologyNode n : t.getNodesList()) {
      nodes.put(n.getId(), n.getAddr());
    }
    Map<Long, Shard> shards = new HashMap<>();
    for (io.cairndb.kv.proto.TopologyShard s : t.getShardsList()) {
      long[] reps = s.getReplicasList().stream().mapToLong(Long::longValue).toArray();
      for (long r : reps) {
        if (!nodes.containsKey(r)) {
          throw new IllegalStateException("topology seq " + t.getSeq() + ": shard " + s.getId()
              + " has unknown replica " + r);
        }
      }
      shards.put(s.getId(), new Shard(s.getId(), reps, s.getPreferred()));
    }
    long[] ps = t.getPartitionShardList().stream().mapToLong(Long::longValue).toArray();
    if (t.getPartitions() == 0 || ps.length != t.getPartitions()) {
      throw new IllegalStateException("topology seq " + t.getSeq() + ": " + ps.length + " partition owners for "
          + t.getPartitions() + " partitions");
    }
    for (long s : ps) {
      if (!shards.containsKey(s)) {
        throw new IllegalStateException("topology seq " + t.getSeq() + ": a partition belongs to unknown shard " + s);
      }
    }
    return new Topology(t.getSeq(), t.getPartitions(), Collections.unmodifiableMap(nodes),
        Collections.unmodifiableMap(shards), ps);
  }

  long shardFor(Key k) {
    return partitionShard[Partitions.partitionOf(k.majorHash(), partitions)];
  }

  /** A copy in which key's partition belongs to shard {@code to} (same seq). */
  Topology withPartitionMoved(Key k, long to) {
    long[] ps = Arrays.copyOf(partitionShard, partitionShard.length);
    ps[Partitions.partitionOf(k.majorHash(), partitions)] = to;
    return new Topology(seq, partitions, nodes, shards, ps);
  }
}
