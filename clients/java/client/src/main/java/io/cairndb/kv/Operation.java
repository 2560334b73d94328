package io.cairndb.kv;

/** One write of an {@link KVStore#execute} batch, made by {@link OperationFactory}. */
public interface Operation {
  /** What an operation does. */
  enum Type { PUT, PUT_IF_ABSENT, PUT_IF_PRESENT, PUT_IF_VERSION, DELETE, DELETE_IF_VERSION }

  Key getKey();

  Type getType();

  /** If true and the operation is not done, the whole batch is aborted. */
  boolean getAbortIfUnsuccessful();
}
