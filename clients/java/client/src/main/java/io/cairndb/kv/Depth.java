package io.cairndb.kv;

/** Which records under a parent key a multi-key operation touches. */
public enum Depth {
  CHILDREN_ONLY(io.cairndb.kv.proto.Depth.DEPTH_CHILDREN_ONLY),
  PARENT_AND_CHILDREN(io.cairndb.kv.proto.Depth.DEPTH_PARENT_AND_CHILDREN),
  DESCENDANTS_ONLY(io.cairndb.kv.proto.Depth.DEPTH_DESCENDANTS_ONLY),
  /** The default (null means this). */
  PARENT_AND_DESCENDANTS(io.cairndb.kv.proto.Depth.DEPTH_PARENT_AND_DESCENDANTS);

  final io.cairndb.kv.proto.Depth pb;

  Depth(io.cairndb.kv.proto.Depth pb) {
    this.pb = pb;
  }

  static io.cairndb.kv.proto.Depth pb(Depth d) {
    return d == null ? io.cairndb.kv.proto.Depth.DEPTH_UNSPECIFIED : d.pb;
  }
}
