package io.cairndb.kv;

/**
 * Where one operation goes: the shard that owns a key (KEY), one shard of a
 * store scan (SHARD), or any node (ANY); whether it writes, whether the
 * leader must serve it, and whether any replica answers at once (bounded:
 * then each attempt gets only a share of the deadline, so that a silent
 * node leaves time to try another).
 */
final class Route {
  enum Target { KEY, SHARD, ANY }

  final Target target;
  final Key key;
  final long shard;
  final boolean write;
  final boolean leader;
  final boolean bounded;
  /** An iterator's replica: tried first, updated to the one that answered. */
  long stick;

  private Route(Target target, Key key, long shard, boolean write, boolean leader, boolean bounded) {
    this.target = target;
    this.key = key;
    this.shard = shard;
    this.write = write;
    this.leader = leader;
    this.bounded = bounded;
  }

  static Route write(Key k) {
    return new Route(Target.KEY, k, 0, true, true, false);
  }

  static Route read(Key k, Consistency c) {
    return new Route(Target.KEY, k, 0, false, c.leaderOnly(), c.bounded());
  }

  static Route shard(long shard, Consistency c) {
    return new Route(Target.SHARD, null, shard, false, c.leaderOnly(), c.bounded());
  }

  /** A write to the leader of one shard (a PutMany request). */
  static Route shardWrite(long shard) {
    return new Route(Target.SHARD, null, shard, true, true, false);
  }

  static Route any() {
    return new Route(Target.ANY, null, 0, false, false, true);
  }
}
