package io.cairndb.kv;

/**
 * The order of an iterator's records. {@link #FORWARD} and {@link #REVERSE}
 * are key order within one major path (multiGetIterator); a store iterator
 * crosses partitions and is {@link #UNORDERED}.
 */
public enum Direction {
  FORWARD(io.cairndb.kv.proto.Direction.DIRECTION_FORWARD),
  REVERSE(io.cairndb.kv.proto.Direction.DIRECTION_REVERSE),
  UNORDERED(io.cairndb.kv.proto.Direction.DIRECTION_UNORDERED);

  final io.cairndb.kv.proto.Direction pb;

  Direction(io.cairndb.kv.proto.Direction pb) {
    this.pb = pb;
  }
}
