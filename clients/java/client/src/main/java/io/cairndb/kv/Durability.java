package io.cairndb.kv;

/**
 * What a write waits for before it is acknowledged: how the leader (master)
 * and the replicas sync it, and how many replicas must hold it. As in
 * {@code oracle.kv.Durability}; Cairn's replicas sync as the leader does, so
 * the replica policy is sent but today only the master's decides.
 */
public final class Durability {
  /** How a node syncs a write before acknowledging it. */
  public enum SyncPolicy {
    /** fsync before the ack: survives power loss. */
    SYNC(io.cairndb.kv.proto.SyncPolicy.SYNC_POLICY_SYNC),
    /** written to the OS: survives a process crash (the server default). */
    WRITE_NO_SYNC(io.cairndb.kv.proto.SyncPolicy.SYNC_POLICY_WRITE_NO_SYNC),
    /** may stay buffered in the process. */
    NO_SYNC(io.cairndb.kv.proto.SyncPolicy.SYNC_POLICY_NO_SYNC);

    final io.cairndb.kv.proto.SyncPolicy pb;

    SyncPolicy(io.cairndb.kv.proto.SyncPolicy pb) {
      this.pb = pb;
    }
  }

  /** How many replicas must hold a write before the ack. */
  public enum ReplicaAckPolicy {
    ALL(io.cairndb.kv.proto.ReplicaAckPolicy.REPLICA_ACK_POLICY_ALL),
    /** the server default */
    SIMPLE_MAJORITY(io.cairndb.kv.proto.ReplicaAckPolicy.REPLICA_ACK_POLICY_SIMPLE_MAJORITY),
    NONE(io.cairndb.kv.proto.ReplicaAckPolicy.REPLICA_ACK_POLICY_NONE);

    final io.cairndb.kv.proto.ReplicaAckPolicy pb;

    ReplicaAckPolicy(io.cairndb.kv.proto.ReplicaAckPolicy pb) {
      this.pb = pb;
    }
  }

  public static final Durability COMMIT_SYNC =
      new Durability(SyncPolicy.SYNC, SyncPolicy.NO_SYNC, ReplicaAckPolicy.SIMPLE_MAJORITY);
  public static final Durability COMMIT_NO_SYNC =
      new Durability(SyncPolicy.NO_SYNC, SyncPolicy.NO_SYNC, ReplicaAckPolicy.SIMPLE_MAJORITY);
  public static final Durability COMMIT_WRITE_NO_SYNC =
      new Durability(SyncPolicy.WRITE_NO_SYNC, SyncPolicy.NO_SYNC, ReplicaAckPolicy.SIMPLE_MAJORITY);

  private final SyncPolicy masterSync;
  private final SyncPolicy replicaSync;
  private final ReplicaAckPolicy replicaAck;
  final io.cairndb.kv.proto.Durability pb;

  public Durability(SyncPolicy masterSync, SyncPolicy replicaSync, ReplicaAckPolicy replicaAck) {
    if (masterSync == null || replicaSync == null || replicaAck == null) {
      throw new IllegalArgumentException("Durability: a policy is null");
    }
    this.masterSync = masterSync;
    this.replicaSync = replicaSync;
    this.replicaAck = replicaAck;
    this.pb = io.cairndb.kv.proto.Durability.newBuilder()
        .setMasterSync(masterSync.pb)
        .setReplicaSync(replicaSync.pb)
        .setReplicaAck(replicaAck.pb)
        .build();
  }

  public SyncPolicy getMasterSync() {
    return masterSync;
  }

  public SyncPolicy getReplicaSync() {
    return replicaSync;
  }

  public ReplicaAckPolicy getReplicaAck() {
    return replicaAck;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Durability && ((Durability) o).pb.equals(pb);
  }

  @Override
  public int hashCode() {
    return pb.hashCode();
  }

  @Override
  public String toString() {
    return "Durability(" + masterSync + ", " + replicaSync + ", " + replicaAck + ")";
  }
}
