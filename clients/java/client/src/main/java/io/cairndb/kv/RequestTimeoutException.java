package io.cairndb.kv;

/** The operation's deadline passed (a write's outcome may then be unknown: see {@link #maybeApplied}). */
public class RequestTimeoutException extends FaultException {
  private static final long serialVersionUID = 1L;

  RequestTimeoutException(ErrorInfo info) {
    super(info);
  }
}
