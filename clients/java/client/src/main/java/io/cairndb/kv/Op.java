package io.cairndb.kv;

import com.google.protobuf.UnsafeByteOperations;
import io.cairndb.kv.proto.Condition;
import io.cairndb.kv.proto.DeleteOp;
import io.cairndb.kv.proto.PutOp;

/** An operation of an execute batch: its wire form, built once. */
final class Op implements Operation {
  private final Type type;
  private final Key key;
  private final boolean abort;
  private final ReturnValueVersion.Choice ret;
  final Value value; // null for deletes
  final Version match;

  private Op(Type type, Key key, Value value, Version match, ReturnValueVersion.Choice ret, boolean abort) {
    if (key == null) {
      throw new IllegalArgumentException("an operation's key is null");
    }
    if (value == null && (type != Type.DELETE && type != Type.DELETE_IF_VERSION)) {
      throw new IllegalArgumentException("a put's value is null (use an empty Value)");
    }
    this.type = type;
    this.key = key;
    this.value = value;
    this.match = match;
    this.ret = ret;
    this.abort = abort;
  }

  static Op put(Type t, Key key, Value value, Version match, ReturnValueVersion.Choice ret, boolean abort) {
    return new Op(t, key, value, match, ret, abort);
  }

  static Op delete(Type t, Key key, Version match, ReturnValueVersion.Choice ret, boolean abort) {
    return new Op(t, key, null, match, ret, abort);
  }

  static Version need(Version v) {
    if (v == null) {
      throw new IllegalArgumentException("the version to match is null");
    }
    return v;
  }

  @Override
  public Key getKey() {
    return key;
  }

  @Override
  public Type getType() {
    return type;
  }

  @Override
  public boolean getAbortIfUnsuccessful() {
    return abort;
  }

  ReturnValueVersion.Choice returnChoice() {
    return ret;
  }

  io.cairndb.kv.proto.Operation pb(long ttlMs) {
    io.cairndb.kv.proto.Operation.Builder b = io.cairndb.kv.proto.Operation.newBuilder().setAbortIfUnsuccessful(abort);
    io.cairndb.kv.proto.ReturnValueVersion r = ret == null
        ? io.cairndb.kv.proto.ReturnValueVersion.RETURN_VALUE_VERSION_UNSPECIFIED : ret.pb;
    if (value != null) {
      b.setPut(putOp(key, value, condition(type), match, r, ttlMs));
    } else {
      b.setDelete(deleteOp(key, condition(type), match, r));
    }
    return b.build();
  }

  static Condition condition(Type t) {
    switch (t) {
      case PUT_IF_ABSENT:
        return Condition.CONDITION_IF_ABSENT;
      case PUT_IF_PRESENT:
        return Condition.CONDITION_IF_PRESENT;
      case PUT_IF_VERSION:
      case DELETE_IF_VERSION:
        return Condition.CONDITION_IF_VERSION;
      default:
        return Condition.CONDITION_UNSPECIFIED;
    }
  }

  static PutOp putOp(Key key, Value value, Condition cond, Version match, io.cairndb.kv.proto.ReturnValueVersion r,
      long ttlMs) {
    return putOp(key, value, cond, match, r, ttlMs, false);
  }

  static PutOp putOp(Key key, Value value, Condition cond, Version match, io.cairndb.kv.proto.ReturnValueVersion r,
      long ttlMs, boolean mergeFields) {
    PutOp.Builder b = PutOp.newBuilder().setKey(key.pb()).setValue(UnsafeByteOperations.unsafeWrap(value.getValue()))
        .setCondition(cond).setReturn(r).setTtlMs(ttlMs).setMergeFields(mergeFields);
    if (match != null) {
      b.setMatchVersion(match.bytes());
    }
    return b.build();
  }

  static DeleteOp deleteOp(Key key, Condition cond, Version match, io.cairndb.kv.proto.ReturnValueVersion r) {
    DeleteOp.Builder b = DeleteOp.newBuilder().setKey(key.pb()).setCondition(cond).setReturn(r);
    if (match != null) {
      b.setMatchVersion(match.bytes());
    }
    return b.build();
  }
}
