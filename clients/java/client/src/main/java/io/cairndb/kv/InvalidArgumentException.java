package io.cairndb.kv;

import io.grpc.Status;

/**
 * The request is wrong (malformed key, value over a limit, bad range...):
 * retrying will not help. An {@link IllegalArgumentException}, where Oracle's
 * API throws one, carrying the server's kind; for limit errors
 * {@link #getLimit} names the limit (e.g. "max_value_bytes").
 */
public class InvalidArgumentException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  final transient ErrorInfo info;

  InvalidArgumentException(ErrorInfo info) {
    super(info.message(), info.cause);
    this.info = info;
  }

  InvalidArgumentException(String message, String kind) {
    this(ErrorInfo.input(message, kind));
  }

  public String getKind() {
    return info.kind;
  }

  /** Always FIX_INPUT. */
  public FaultException.Action getAction() {
    return FaultException.Action.FIX_INPUT;
  }

  public Status.Code getStatusCode() {
    return info.code;
  }

  /** False: the request was refused. */
  public boolean isRetryable() {
    return false;
  }

  /** For limit errors: the limit's name; else "". */
  public String getLimit() {
    return info.limit;
  }

  /** For limit errors: the limit. */
  public long getMax() {
    return info.max;
  }

  /** For limit errors: the size seen. */
  public long getSeen() {
    return info.seen;
  }
}
