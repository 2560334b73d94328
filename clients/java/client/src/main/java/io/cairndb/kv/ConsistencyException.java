package io.cairndb.kv;

/** No replica could serve the read at the requested consistency in time (kind consistency_timeout). */
public class ConsistencyException extends FaultException {
  private static final long serialVersionUID = 1L;

  ConsistencyException(ErrorInfo info) {
    super(info);
  }
}
