package io.cairndb.kv;

import io.grpc.Status;

/**
 * What the client knows about one failure: the server's ErrorDetail if it
 * sent one, the gRPC status, and the routing hints (not_leader's leader,
 * wrong_shard's moved_to_shard). Filled in by {@link Errors}; immutable
 * once built.
 */
final class ErrorInfo {
  String text = "";
  Status.Code code = Status.Code.UNKNOWN;
  String kind = "";
  FaultException.Action action = FaultException.Action.NONE;
  boolean maybeApplied;
  String limit = "";
  long max;
  long seen;
  String shard = "";
  long leaderNode;
  long movedToShard;
  int partitions;
  /** A bounded read's attempt got no answer in its share of the deadline. */
  boolean noAnswer;
  Throwable cause;

  static ErrorInfo input(String message, String kind) {
    ErrorInfo e = new ErrorInfo();
    e.text = message;
    e.code = Status.Code.INVALID_ARGUMENT;
    e.kind = kind;
    e.action = FaultException.Action.FIX_INPUT;
    return e;
  }

  static ErrorInfo of(String message, Status.Code code, String kind, FaultException.Action action) {
    ErrorInfo e = new ErrorInfo();
    e.text = message;
    e.code = code;
    e.kind = kind;
    e.action = action;
    return e;
  }

  /** As the Go client's Error.Retryable. */
  boolean retryable() {
    if (maybeApplied || code == Status.Code.CANCELLED || code == Status.Code.DEADLINE_EXCEEDED) {
      return false;
    }
    if (kind.equals("consistency_timeout") || kind.equals("disk_full")) {
      return false;
    }
    return action == FaultException.Action.RETRY || action == FaultException.Action.REFRESH
        || (code == Status.Code.UNAVAILABLE && kind.isEmpty());
  }

  String message() {
    StringBuilder sb = new StringBuilder("cairn: ").append(text).append(" (").append(code);
    if (!kind.isEmpty()) {
      sb.append(", kind ").append(kind);
    }
    if (!limit.isEmpty()) {
      sb.append(", limit ").append(limit).append(" max ").append(max).append(" seen ").append(seen);
    }
    sb.append(", action ").append(action).append(')');
    if (maybeApplied) {
      sb.append("; the write may have been applied");
    }
    return sb.toString();
  }

  /** The exception that fits this failure. */
  RuntimeException toException() {
    if (maybeApplied && kind.equals("ack_timeout")) {
      return new DurabilityException(this);
    }
    if (action == FaultException.Action.FIX_INPUT && !maybeApplied) {
      return new InvalidArgumentException(this);
    }
    if (kind.equals("consistency_timeout")) {
      return new ConsistencyException(this);
    }
    if (code == Status.Code.DEADLINE_EXCEEDED) {
      return new RequestTimeoutException(this);
    }
    return new FaultException(this);
  }
}
