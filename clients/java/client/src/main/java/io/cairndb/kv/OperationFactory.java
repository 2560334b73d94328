package io.cairndb.kv;

/** Makes the operations of {@link KVStore#execute}, as {@code oracle.kv.OperationFactory}. Thread-safe. */
public final class OperationFactory {
  OperationFactory() {}

  public Operation createPut(Key key, Value value) {
    return createPut(key, value, null, false);
  }

  public Operation createPut(Key key, Value value, ReturnValueVersion.Choice prevReturn, boolean abortIfUnsuccessful) {
    return Op.put(Operation.Type.PUT, key, value, null, prevReturn, abortIfUnsuccessful);
  }

  public Operation createPutIfAbsent(Key key, Value value) {
    return createPutIfAbsent(key, value, null, false);
  }

  public Operation createPutIfAbsent(Key key, Value value, ReturnValueVersion.Choice prevReturn,
      boolean abortIfUnsuccessful) {
    return Op.put(Operation.Type.PUT_IF_ABSENT, key, value, null, prevReturn, abortIfUnsuccessful);
  }

  public Operation createPutIfPresent(Key key, Value value) {
    return createPutIfPresent(key, value, null, false);
  }

  public Operation createPutIfPresent(Key key, Value value, ReturnValueVersion.Choice prevReturn,
      boolean abortIfUnsuccessful) {
    return Op.put(Operation.Type.PUT_IF_PRESENT, key, value, null, prevReturn, abortIfUnsuccessful);
  }

  public Operation createPutIfVersion(Key key, Value value, Version version) {
    return createPutIfVersion(key, value, version, null, false);
  }

  public Operation createPutIfVersion(Key key, Value value, Version version, ReturnValueVersion.Choice prevReturn,
      boolean abortIfUnsuccessful) {
    return Op.put(Operation.Type.PUT_IF_VERSION, key, value, Op.need(version), prevReturn, abortIfUnsuccessful);
  }

  public Operation createDelete(Key key) {
    return createDelete(key, null, false);
  }

  public Operation createDelete(Key key, ReturnValueVersion.Choice prevReturn, boolean abortIfUnsuccessful) {
    return Op.delete(Operation.Type.DELETE, key, null, prevReturn, abortIfUnsuccessful);
  }

  public Operation createDeleteIfVersion(Key key, Version version) {
    return createDeleteIfVersion(key, version, null, false);
  }

  public Operation createDeleteIfVersion(Key key, Version version, ReturnValueVersion.Choice prevReturn,
      boolean abortIfUnsuccessful) {
    return Op.delete(Operation.Type.DELETE_IF_VERSION, key, Op.need(version), prevReturn, abortIfUnsuccessful);
  }
}
