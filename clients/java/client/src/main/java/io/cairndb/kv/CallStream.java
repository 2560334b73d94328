package io.cairndb.kv;

import com.google.rpc.Status;
import io.cairndb.kv.proto.CallsRequest;
import io.cairndb.kv.proto.CallsResponse;
import io.cairndb.kv.proto.DeleteRequest;
import io.cairndb.kv.proto.ExecuteRequest;
import io.cairndb.kv.proto.ExecuteResponse;
import io.cairndb.kv.proto.GetRequest;
import io.cairndb.kv.proto.GetResponse;
import io.cairndb.kv.proto.KVGrpc;
import io.cairndb.kv.proto.KVStreamGrpc;
import io.cairndb.kv.proto.MultiDeleteRequest;
import io.cairndb.kv.proto.MultiDeleteResponse;
import io.cairndb.kv.proto.MultiGetRequest;
import io.cairndb.kv.proto.MultiGetResponse;
import io.cairndb.kv.proto.PutManyRequest;
import io.cairndb.kv.proto.PutManyResponse;
import io.cairndb.kv.proto.PutRequest;
import io.cairndb.kv.proto.StoreScanRequest;
import io.cairndb.kv.proto.StoreScanResponse;
import io.cairndb.kv.proto.WriteResponse;
import io.cairndb.kv.proto.StreamAnswer;
import io.cairndb.kv.proto.StreamCall;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.StreamObserver;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A connection's call stream (cairn.v1.KVStream/Calls,
 * docs/design/20261127_call_stream.md): KV calls multiplexed on one
 * long-lived gRPC stream, each tagged with an id and answered as the unary
 * RPC would answer it, as the Go client does (client/callstream.go). A call
 * then costs one DATA frame each way instead of a new HTTP/2 stream with its
 * headers and trailers.
 *
 * <p>The stream opens on the first call and again on the first call after
 * it broke. A call waits in {@code waiting} from before it is sent until its
 * answer, its deadline, or the stream breaking; each of those removes it, so
 * only one of them completes it. With a login, the stream's first call
 * carries the session's token, and so does the first call after each
 * renewal: the node checks every call with the stream's latest token, as
 * it checks a unary call's. A server without the stream (an older server)
 * answers UNIMPLEMENTED: the connection then calls
 * unary for good ({@link #off}), and the calls that were waiting are made
 * unary (the server never ran them).
 *
 * <p>Thread-safe: every thread of a store handle shares a connection's
 * stream.
 */
final class CallStream {
  /** Thrown by {@link #call} when the server has no call stream: call unary. */
  static final class NoStream extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NoStream() {
      super("the server has no call stream", null, false, false);
    }
  }

  static final NoStream NO_STREAM = new NoStream();

  private final KVStreamGrpc.KVStreamStub stub;
  private final Session session; // null: no login
  private final AtomicLong ids = new AtomicLong();
  private volatile boolean off;
  private Open cur; // guarded by this

  CallStream(ManagedChannel channel, Session session) {
    KVStreamGrpc.KVStreamStub s = KVStreamGrpc.newStub(channel);
    this.stub = session == null ? s : s.withCallCredentials(session);
    this.session = session;
  }

  /** Whether the server answered UNIMPLEMENTED: every call is unary now. */
  boolean off() {
    return off;
  }

  /**
   * Sends c and waits for its answer until deadline (System.nanoTime()).
   * Throws the StatusRuntimeException the unary RPC would have thrown (the
   * answer's status, UNAVAILABLE when the stream broke, DEADLINE_EXCEEDED),
   * or NoStream.
   */
  StreamAnswer call(StreamCall.Builder c, long deadline) {
    if (off) {
      throw NO_STREAM;
    }
    Open s = open();
    long id = ids.incrementAndGet();
    CompletableFuture<StreamAnswer> f = new CompletableFuture<>();
    s.waiting.put(id, f);
    RuntimeException broke = s.err;
    if (broke != null) {
      s.waiting.remove(id);
      throw broke;
    }
    s.send(c.setId(id));
    try {
      return f.get(Math.max(deadline - System.nanoTime(), 0), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      s.waiting.remove(id);
      throw io.grpc.Status.DEADLINE_EXCEEDED.withDescription("no answer on the call stream before the deadline")
          .asRuntimeException();
    } catch (InterruptedException e) {
      s.waiting.remove(id);
      Thread.currentThread().interrupt();
      throw io.grpc.Status.CANCELLED.withDescription("interrupted").withCause(e).asRuntimeException();
    } catch (ExecutionException e) {
      throw (RuntimeException) e.getCause(); // fail() completes with StatusRuntimeException or NoStream
    }
  }

  private synchronized Open open() {
    if (cur == null) {
      Open s = new Open();
      s.out = stub.calls(s);
      cur = s;
    }
    return cur;
  }

  private synchronized void forget(Open s) {
    if (cur == s) {
      cur = null;
    }
  }

  /**
   * The calls of one attempt until deadline: on this stream, or unary on
   * the connection's stub (its deadline set then) for StoreScan and when
   * the server has no stream (the call was not sent).
   */
  Calls calls(KVGrpc.KVBlockingStub unary, long deadline) {
    return new Calls() {
      private KVGrpc.KVBlockingStub stub() {
        return unary.withDeadlineAfter(Math.max(deadline - System.nanoTime(), 1), TimeUnit.NANOSECONDS);
      }

      /** c on the stream, its response taken by get; unary if the server has no stream (c did not run). */
      private <T> T via(StreamCall.Builder c, Function<StreamAnswer, T> get, Supplier<T> unaryCall) {
        try {
          return get.apply(call(c, deadline));
        } catch (NoStream e) {
          return unaryCall.get();
        }
      }

      @Override
      public GetResponse get(GetRequest r) {
        return via(StreamCall.newBuilder().setGet(r), StreamAnswer::getGet, () -> stub().get(r));
      }

      @Override
      public Multi.Page multiGet(MultiGetCall c, Wire.Shape shape) {
        MultiGetRequest r = c.toProto();
        MultiGetResponse m = via(StreamCall.newBuilder().setMultiGet(r), StreamAnswer::getMultiGet,
            () -> stub().multiGet(r));
        return Multi.Page.of(m.getRecordsList(), m.getResume(), shape);
      }

      @Override
      public WriteResponse put(PutRequest r) {
        return via(StreamCall.newBuilder().setPut(r), StreamAnswer::getPut, () -> stub().put(r));
      }

      @Override
      public WriteResponse delete(DeleteRequest r) {
        return via(StreamCall.newBuilder().setDelete(r), StreamAnswer::getDelete, () -> stub().delete(r));
      }

      @Override
      public ExecuteResponse execute(ExecuteRequest r) {
        return via(StreamCall.newBuilder().setExecute(r), StreamAnswer::getExecute, () -> stub().execute(r));
      }

      @Override
      public PutManyResponse putMany(PutManyRequest r) {
        return via(StreamCall.newBuilder().setPutMany(r), StreamAnswer::getPutMany, () -> stub().putMany(r));
      }

      @Override
      public MultiDeleteResponse multiDelete(MultiDeleteRequest r) {
        return via(StreamCall.newBuilder().setMultiDelete(r), StreamAnswer::getMultiDelete,
            () -> stub().multiDelete(r));
      }

      @Override
      public StoreScanResponse storeScan(StoreScanRequest r) {
        return stub().storeScan(r);
      }
    };
  }

  private static boolean hasErrorDetail(StatusRuntimeException e) {
    Status s = StatusProto.fromThrowable(e);
    if (s == null) {
      return false;
    }
    for (com.google.protobuf.Any a : s.getDetailsList()) {
      if (a.getTypeUrl().endsWith("/cairn.v1.ErrorDetail")) {
        return true;
      }
    }
    return false;
  }

  /** The status an answer carries, or null for a response. */
  static StatusRuntimeException answerError(StreamAnswer a) {
    if (a.getCode() == 0) {
      return null;
    }
    return StatusProto.toStatusRuntimeException(Status.newBuilder().setCode(a.getCode())
        .setMessage(a.getMessage()).addAllDetails(a.getDetailsList()).build());
  }

  /** One gRPC stream and the calls waiting on it. */
  private final class Open implements StreamObserver<CallsResponse> {
    final Map<Long, CompletableFuture<StreamAnswer>> waiting = new ConcurrentHashMap<>();
    StreamObserver<CallsRequest> out; // set once, before any call can use it
    volatile RuntimeException err; // why the stream broke; null while it works

    private String sentToken = ""; // the stream's token: the last one a call carried (guarded by this)

    /** Sends c, with the session's token if the stream does not have it yet (its first call, a renewal). */
    synchronized void send(StreamCall.Builder c) {
      if (session != null) {
        String tok = session.token();
        if (!tok.equals(sentToken)) {
          c.setToken(tok);
          sentToken = tok;
        }
      }
      out.onNext(CallsRequest.newBuilder().addCalls(c).build()); // a broken stream drops it; onError answers the waiting calls
    }

    @Override
    public void onNext(CallsResponse r) {
      for (StreamAnswer a : r.getAnswersList()) {
        CompletableFuture<StreamAnswer> f = waiting.remove(a.getId());
        if (f == null) {
          continue; // its caller gave up
        }
        StatusRuntimeException e = answerError(a);
        if (e == null) {
          f.complete(a);
        } else {
          f.completeExceptionally(e);
        }
      }
    }

    /**
     * The stream ended. UNIMPLEMENTED turns the stream off. A status with an
     * ErrorDetail, which only the node ends a stream with, is passed on (at
     * shutdown, kind shutting_down says the waiting calls never ran).
     * Anything else is a broken connection, or one call's failure (say, too
     * large to send) that ended the whole stream and says nothing of the
     * others: UNAVAILABLE with no detail, so a sent write is reported as
     * maybe applied (its cause kept: Errors tells a connection never made).
     */
    @Override
    public void onError(Throwable t) {
      io.grpc.Status st = io.grpc.Status.fromThrowable(t);
      if (st.getCode() == io.grpc.Status.Code.UNIMPLEMENTED) {
        fail(NO_STREAM);
      } else if (t instanceof StatusRuntimeException && hasErrorDetail((StatusRuntimeException) t)) {
        fail((StatusRuntimeException) t);
      } else {
        fail(io.grpc.Status.UNAVAILABLE.withDescription("call stream broke: " + st).withCause(t).asRuntimeException());
      }
    }

    @Override
    public void onCompleted() {
      fail(io.grpc.Status.UNAVAILABLE.withDescription("the call stream ended").asRuntimeException());
    }

    /** Breaks the stream: every waiting call gets e, and the next call opens a new stream. */
    private void fail(RuntimeException e) {
      if (e == NO_STREAM) {
        off = true;
      }
      err = e;
      forget(this);
      for (Long id : waiting.keySet()) {
        CompletableFuture<StreamAnswer> f = waiting.remove(id);
        if (f != null) {
          f.completeExceptionally(e);
        }
      }
    }
  }
}
