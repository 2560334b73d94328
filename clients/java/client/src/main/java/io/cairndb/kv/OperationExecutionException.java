package io.cairndb.kv;

/**
 * {@link KVStore#execute}: an operation marked abort-if-unsuccessful was not
 * done, so nothing in the batch was written. Checked, as Oracle's.
 */
public class OperationExecutionException extends Exception {
  private static final long serialVersionUID = 1L;

  private final transient Operation failedOperation;
  private final int failedOperationIndex;
  private final transient OperationResult failedOperationResult;

  OperationExecutionException(Operation op, int index, OperationResult result) {
    super("execute: operation " + index + " (" + op.getType() + " " + op.getKey()
        + ") was not done and aborted the batch; nothing was written");
    this.failedOperation = op;
    this.failedOperationIndex = index;
    this.failedOperationResult = result;
  }

  public Operation getFailedOperation() {
    return failedOperation;
  }

  public int getFailedOperationIndex() {
    return failedOperationIndex;
  }

  public OperationResult getFailedOperationResult() {
    return failedOperationResult;
  }
}
