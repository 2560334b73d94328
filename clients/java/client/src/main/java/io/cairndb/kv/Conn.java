package io.cairndb.kv;

import io.cairndb.kv.proto.KVGrpc;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocketFactory;

/**
 * The connection to one node address, shared by every thread: its call
 * socket, its gRPC channel with a blocking stub and a call stream
 * (GrpcChannel; opened on first use when there is a call socket), and a
 * failure mark (client/pool.go).
 */
final class Conn {
  private static final long FAILING_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** The HTTP/2 flow-control window of a connection's streams, in bytes. */
  static final int FLOW_CONTROL_WINDOW = GrpcChannel.FLOW_CONTROL_WINDOW;

  final String addr;
  /** The node's call socket; null: calls go on the stream (setCallSocket(false)). */
  final CallSocket socket;
  private final SslContext tls;
  private final Session creds;
  private final boolean unary;
  private volatile Grpc grpc; // opened on first use when there is a call socket
  private boolean closed; // guarded by this
  private volatile long failingUntil;

  /** The gRPC side of a connection: its channel, blocking stub and call stream. */
  private static final class Grpc {
    final ManagedChannel channel;
    final KVGrpc.KVBlockingStub stub;
    final CallStream stream; // null: every call is unary (setUnaryCalls)

    Grpc(ManagedChannel channel, Session creds, boolean unary) {
      this.channel = channel;
      KVGrpc.KVBlockingStub s = KVGrpc.newBlockingStub(channel);
      this.stub = creds == null ? s : s.withCallCredentials(creds);
      // With a login, the stream opens with the session's token and its calls
      // carry each new token (CallStream.Open.send).
      this.stream = unary ? null : new CallStream(channel, creds);
    }
  }

  Conn(String addr, SslContext tls, SSLSocketFactory socketTLS, Session creds, boolean unary, boolean callSocket,
      long connectTimeoutNanos) {
    this.addr = addr;
    this.tls = tls;
    this.creds = creds;
    this.unary = unary;
    this.socket = unary || !callSocket ? null : new CallSocket(addr, socketTLS, creds, connectTimeoutNanos);
    if (socket == null) {
      grpc().channel.getState(true); // connect now
    }
  }

  /**
   * The gRPC side, opened on first use. With a call socket, a store that
   * is only read and written (no login, no scan, a node with the socket)
   * never opens it, and the JVM never loads grpc-java's transport
   * (about 0.7 s of CPU at start-up; docs/benchmarks.md, "Issue 12,
   * fifteenth").
   */
  private Grpc grpc() {
    Grpc g = grpc;
    if (g != null) {
      return g;
    }
    synchronized (this) {
      if (closed) {
        throw Errors.closed();
      }
      if (grpc == null) {
        grpc = new Grpc(GrpcChannel.open(addr, tls), creds, unary);
      }
      return grpc;
    }
  }

  /** The channel, opened if it was not (logins). */
  ManagedChannel channel() {
    return grpc().channel;
  }

  /** The blocking stub, its channel opened if it was not. */
  KVGrpc.KVBlockingStub stub() {
    return grpc().stub;
  }

  /** The call stream (opening the gRPC side); null with setUnaryCalls. */
  CallStream stream() {
    return grpc().stream;
  }

  /** Whether the gRPC side has been opened (for tests). */
  boolean grpcOpened() {
    return grpc != null;
  }

  boolean failing(long now) {
    long until = failingUntil;
    return until != 0 && now - until < 0;
  }

  void markFailing() {
    failingUntil = System.nanoTime() + FAILING_NANOS;
  }

  /** The channel has given up connecting for now (its reconnect backoff runs); false if it was never opened. */
  boolean transientFailure() {
    Grpc g = grpc;
    return g != null && g.channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE;
  }

  /** Before a retry: reconnect at once instead of after gRPC's backoff (up to 2 minutes). */
  void reconnectNow() {
    if (transientFailure()) {
      grpc.channel.resetConnectBackoff();
    }
  }

  /** The calls of one attempt that must end by deadline (System.nanoTime()). */
  Calls calls(long deadline) {
    if (socket != null && !socket.off()) {
      return new SocketCalls(socket, this, deadline);
    }
    Grpc g = grpc();
    if (g.stream != null && !g.stream.off()) {
      return g.stream.calls(g.stub, deadline);
    }
    return Calls.unary(g.stub.withDeadlineAfter(Math.max(deadline - System.nanoTime(), 1), TimeUnit.NANOSECONDS));
  }

  /**
   * Waits up to timeoutNanos while the channel is connecting, so that a node
   * whose host does not answer is left for another replica. False if it is
   * still connecting then (the request was not sent). A ready, idle or failed
   * channel returns at once: an RPC on it connects, or fails fast.
   */
  boolean waitConnecting(long timeoutNanos) {
    Grpc g = grpc;
    if (g == null) {
      return true; // no channel: the call socket connects as it calls
    }
    ManagedChannel channel = g.channel;
    long deadline = System.nanoTime() + timeoutNanos;
    while (true) {
      ConnectivityState s = channel.getState(false);
      if (s != ConnectivityState.CONNECTING) {
        return true;
      }
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      CountDownLatch changed = new CountDownLatch(1);
      channel.notifyWhenStateChanged(s, changed::countDown);
      try {
        changed.await(left, TimeUnit.NANOSECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return true;
      }
    }
  }

  void close() {
    if (socket != null) {
      socket.close();
    }
    Grpc g;
    synchronized (this) {
      closed = true;
      g = grpc;
    }
    if (g != null) {
      g.channel.shutdownNow();
    }
  }

  void awaitClosed(long timeoutNanos) throws InterruptedException {
    Grpc g = grpc;
    if (g != null) {
      g.channel.awaitTermination(timeoutNanos, TimeUnit.NANOSECONDS);
    }
  }
}
