package io.cairndb.kv;

import io.grpc.Status;

/**
 * An operation failed, as reported by the server, or by the client for a
 * connection failure (unchecked, as {@code oracle.kv.FaultException}).
 *
 * <p>Each error says what to do about it: {@link #getAction} (RETRY,
 * REFRESH, FIX_INPUT, NONE), {@link #isRetryable} (the same request may
 * succeed later and certainly was not applied), and {@link #maybeApplied}
 * (a write whose outcome is unknown: the client did not retry it; read the
 * record to find out). {@link #getKind} is the server's stable machine name
 * ("not_leader", "disk_full", ...), or "" when none was sent.
 *
 * <p>Bad input is not a FaultException: it is an
 * {@link InvalidArgumentException}, an {@link IllegalArgumentException}.
 */
public class FaultException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** What the caller can do about an error. */
  public enum Action {
    /** Transient: the same request may succeed later. */
    RETRY,
    /** Refresh topology or leader, then retry (the client does this itself). */
    REFRESH,
    /** The request is wrong; retrying will not help. */
    FIX_INPUT,
    /** Nothing the client can do. */
    NONE
  }

  final transient ErrorInfo info;

  FaultException(ErrorInfo info) {
    super(info.message(), info.cause);
    this.info = info;
  }

  /** The server's kind, e.g. "disk_full"; "" if none was sent. */
  public String getKind() {
    return info.kind;
  }

  public Action getAction() {
    return info.action;
  }

  /** The gRPC status code of the failure. */
  public Status.Code getStatusCode() {
    return info.code;
  }

  /** A write whose outcome is unknown: never retried by the client. */
  public boolean maybeApplied() {
    return info.maybeApplied;
  }

  /** The same request may succeed later, and certainly was not applied. */
  public boolean isRetryable() {
    return info.retryable();
  }

  /** "rgN" when no replica of shard N could serve the operation, else "". */
  public String getShard() {
    return info.shard;
  }
}
