package io.cairndb.kv;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.cairndb.kv.proto.ErrorDetail;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.net.ConnectException;
import java.util.EnumSet;
import java.util.Set;

/** Turns gRPC failures into {@link ErrorInfo}, as the Go client's convertError does. */
final class Errors {
  private Errors() {}

  private static final Set<Status.Code> MAYBE_APPLIED_CODES = EnumSet.of(
      Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED, Status.Code.CANCELLED, Status.Code.UNKNOWN,
      Status.Code.INTERNAL, Status.Code.ABORTED, Status.Code.DATA_LOSS);

  /**
   * The failure of one RPC. {@code write} and whether the request may have
   * left the client decide maybe_applied when the server attached no
   * ErrorDetail: a write whose connection broke may have been applied.
   */
  static ErrorInfo fromStatus(StatusRuntimeException err, boolean write) {
    Status st = err.getStatus();
    ErrorInfo e = new ErrorInfo();
    e.code = st.getCode();
    e.text = st.getDescription() == null ? e.code.toString() : st.getDescription();
    e.cause = err;
    ErrorDetail d = detail(err);
    if (d != null) {
      copyDetail(e, d);
      return e;
    }
    if (e.code == Status.Code.UNAVAILABLE || e.code == Status.Code.DEADLINE_EXCEEDED) {
      e.action = FaultException.Action.RETRY;
    } else if (e.code == Status.Code.INVALID_ARGUMENT) {
      e.action = FaultException.Action.FIX_INPUT;
    }
    boolean sent = !(e.code == Status.Code.UNAVAILABLE && notConnected(st.getCause()));
    e.maybeApplied = write && sent && MAYBE_APPLIED_CODES.contains(e.code);
    return e;
  }

  /** One PutMany record's failure, as a single put of it would have failed. */
  static ErrorInfo fromRecord(io.cairndb.kv.proto.PutManyResult r) {
    ErrorInfo e = new ErrorInfo();
    e.code = Status.fromCodeValue(r.getErrorCode()).getCode();
    e.text = r.getErrorMessage();
    if (r.hasDetail()) {
      copyDetail(e, r.getDetail());
    }
    return e;
  }

  private static void copyDetail(ErrorInfo e, ErrorDetail d) {
    e.kind = d.getKind();
    e.action = action(d.getAction());
    e.maybeApplied = d.getMaybeApplied();
    e.limit = d.getLimit();
    e.max = d.getMax();
    e.seen = d.getSeen();
    e.leaderNode = d.getLeaderNode();
    e.movedToShard = d.getMovedToShard();
    e.partitions = d.getPartitions();
  }

  /** A connection that was never made: the request did not leave the client. */
  private static boolean notConnected(Throwable t) {
    for (int i = 0; t != null && i < 8; i++, t = t.getCause()) {
      if (t instanceof ConnectException) {
        return true;
      }
    }
    return false;
  }

  private static ErrorDetail detail(StatusRuntimeException err) {
    com.google.rpc.Status s;
    try {
      s = StatusProto.fromThrowable(err);
    } catch (RuntimeException e) {
      return null; // a malformed status: treated as no detail
    }
    if (s == null) {
      return null;
    }
    for (Any a : s.getDetailsList()) {
      if (a.getTypeUrl().endsWith("/cairn.v1.ErrorDetail")) {
        try {
          return ErrorDetail.parseFrom(a.getValue());
        } catch (InvalidProtocolBufferException e) {
          return null;
        }
      }
    }
    return null;
  }

  private static FaultException.Action action(ErrorDetail.Action a) {
    switch (a) {
      case ACTION_RETRY:
        return FaultException.Action.RETRY;
      case ACTION_REFRESH:
        return FaultException.Action.REFRESH;
      case ACTION_FIX_INPUT:
        return FaultException.Action.FIX_INPUT;
      default:
        return FaultException.Action.NONE;
    }
  }

  static FaultException closed() {
    return new FaultException(ErrorInfo.of("the store handle is closed", Status.Code.CANCELLED, "",
        FaultException.Action.NONE));
  }
}
