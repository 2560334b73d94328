package io.cairndb.kv;

/** The result of one operation of {@link KVStore#execute}, as {@code oracle.kv.OperationResult}. */
public interface OperationResult {
  /** Whether the operation was done (a condition that did not hold: false). */
  boolean getSuccess();

  /** The version a successful put wrote; null otherwise. */
  Version getNewVersion();

  /** The previous value, when the return choice asked for it and a record existed. */
  Value getPreviousValue();

  /** The previous version, when the return choice asked for it and a record existed. */
  Version getPreviousVersion();
}
