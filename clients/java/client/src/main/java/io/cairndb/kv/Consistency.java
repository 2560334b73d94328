package io.cairndb.kv;

import io.cairndb.kv.proto.ConsistencyKind;
import java.util.concurrent.TimeUnit;

/**
 * Which replica may serve a read, and how fresh it must be. As
 * {@code oracle.kv.Consistency}: {@link #ABSOLUTE} reads go to the shard
 * leader; {@link #NONE_REQUIRED} (the default) reads go to any of the
 * shard's replicas (the store handle's home replica, see
 * {@link KVStoreConfig#setSpreadReads}); {@link Time} and {@link Version} ask a replica to be
 * within a lag of the leader, or to have applied a version, waiting up to a
 * timeout for it.
 */
public abstract class Consistency {
  /** Linearizable: served by the shard leader. */
  public static final Consistency ABSOLUTE = new Fixed("ABSOLUTE", ConsistencyKind.CONSISTENCY_KIND_ABSOLUTE);
  /** Any replica, however stale. */
  public static final Consistency NONE_REQUIRED =
      new Fixed("NONE_REQUIRED", ConsistencyKind.CONSISTENCY_KIND_NONE_REQUIRED);

  final io.cairndb.kv.proto.Consistency pb;

  Consistency(io.cairndb.kv.proto.Consistency pb) {
    this.pb = pb;
  }

  /** True for reads the shard leader must serve. */
  boolean leaderOnly() {
    return this == ABSOLUTE;
  }

  /** True if any replica answers at once (no catching up to wait for). */
  boolean bounded() {
    return this instanceof Fixed;
  }

  private static final class Fixed extends Consistency {
    private final String name;

    Fixed(String name, ConsistencyKind kind) {
      super(io.cairndb.kv.proto.Consistency.newBuilder().setKind(kind).build());
      this.name = name;
    }

    @Override
    public String toString() {
      return name;
    }
  }

  /** A replica within {@code permissibleLag} of the leader. */
  public static final class Time extends Consistency {
    public Time(long permissibleLag, TimeUnit lagUnit, long timeout, TimeUnit timeoutUnit) {
      super(io.cairndb.kv.proto.Consistency.newBuilder()
          .setKind(ConsistencyKind.CONSISTENCY_KIND_TIME_LAG)
          .setPermissibleLagMs(millis(permissibleLag, lagUnit, "lag"))
          .setTimeoutMs(millis(timeout, timeoutUnit, "timeout"))
          .build());
    }

    @Override
    public String toString() {
      return "Time(lag " + pb.getPermissibleLagMs() + " ms, timeout " + pb.getTimeoutMs() + " ms)";
    }
  }

  /** A replica that has applied {@code version}. */
  public static final class Version extends Consistency {
    private final io.cairndb.kv.Version version;

    public Version(io.cairndb.kv.Version version, long timeout, TimeUnit timeoutUnit) {
      super(io.cairndb.kv.proto.Consistency.newBuilder()
          .setKind(ConsistencyKind.CONSISTENCY_KIND_VERSION)
          .setVersion(checkVersion(version).bytes())
          .setTimeoutMs(millis(timeout, timeoutUnit, "timeout"))
          .build());
      this.version = version;
    }

    public io.cairndb.kv.Version getVersion() {
      return version;
    }

    @Override
    public String toString() {
      return "Version(" + version + ", timeout " + pb.getTimeoutMs() + " ms)";
    }

    private static io.cairndb.kv.Version checkVersion(io.cairndb.kv.Version v) {
      if (v == null) {
        throw new IllegalArgumentException("Consistency.Version: the version is null");
      }
      return v;
    }
  }

  static long millis(long n, TimeUnit unit, String what) {
    if (n < 0 || unit == null) {
      throw new IllegalArgumentException("Consistency: " + what + " must be non-negative with a unit");
    }
    return unit.toMillis(n);
  }
}
