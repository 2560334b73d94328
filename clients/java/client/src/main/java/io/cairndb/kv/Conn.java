package io.cairndb.kv;

import io.cairndb.kv.proto.KVGrpc;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLSocketFactory;

/**
 * One channel to one node address, shared by every thread, with its
 * blocking stub and a failure mark (client/pool.go). The channel runs
 * callbacks on the calling thread (directExecutor: a blocking call then
 * costs no thread hand-off) and makes no retries of its own: the router
 * decides what may be retried.
 */
final class Conn {
  private static final long FAILING_NANOS = TimeUnit.SECONDS.toNanos(1);

  /** The HTTP/2 flow-control window of a connection's streams, in bytes. */
  static final int FLOW_CONTROL_WINDOW = 4 << 20;

  final String addr;
  final ManagedChannel channel;
  final KVGrpc.KVBlockingStub stub;
  /** The connection's call stream; null: every call is unary (setUnaryCalls). */
  final CallStream stream;
  /** The node's call socket; null: calls go on the stream (setCallSocket(false)). */
  final CallSocket socket;
  private volatile long failingUntil;

  Conn(String addr, SslContext tls, SSLSocketFactory socketTLS, Session creds, boolean unary, boolean callSocket,
      long connectTimeoutNanos) {
    this.addr = addr;
    NettyChannelBuilder b = NettyChannelBuilder.forTarget(addr);
    if (tls == null) {
      b.usePlaintext();
    } else {
      b.sslContext(tls);
    }
    this.channel = b
        .directExecutor()
        .disableRetry()
        .maxInboundMessageSize(64 << 20)
        // A fixed window: grpc-java's automatic flow control (on by default)
        // sends a PING after every round trip to size the window, which costs
        // both sides a frame and a wake-up per few calls. The nodes' windows
        // are fixed at the same 4 MiB (Go internal/grpcconn/window.go).
        .flowControlWindow(FLOW_CONTROL_WINDOW)
        .build();
    KVGrpc.KVBlockingStub s = KVGrpc.newBlockingStub(channel);
    this.stub = creds == null ? s : s.withCallCredentials(creds);
    // With a login, the stream opens with the session's token and its calls
    // carry each new token (CallStream.Open.send).
    this.stream = unary ? null : new CallStream(channel, creds);
    this.socket = unary || !callSocket ? null : new CallSocket(addr, socketTLS, creds, connectTimeoutNanos);
    if (socket == null) {
      channel.getState(true); // connect now
    }
  }

  boolean failing(long now) {
    long until = failingUntil;
    return until != 0 && now - until < 0;
  }

  void markFailing() {
    failingUntil = System.nanoTime() + FAILING_NANOS;
  }

  /** The channel has given up connecting for now (its reconnect backoff runs). */
  boolean transientFailure() {
    return channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE;
  }

  /** Before a retry: reconnect at once instead of after gRPC's backoff (up to 2 minutes). */
  void reconnectNow() {
    if (transientFailure()) {
      channel.resetConnectBackoff();
    }
  }

  /** The calls of one attempt that must end by deadline (System.nanoTime()). */
  Calls calls(long deadline) {
    if (socket != null && !socket.off()) {
      return new SocketCalls(socket, stub, deadline);
    }
    if (stream != null && !stream.off()) {
      return stream.calls(stub, deadline);
    }
    return Calls.unary(stub.withDeadlineAfter(Math.max(deadline - System.nanoTime(), 1), TimeUnit.NANOSECONDS));
  }

  /**
   * Waits up to timeoutNanos while the channel is connecting, so that a node
   * whose host does not answer is left for another replica. False if it is
   * still connecting then (the request was not sent). A ready, idle or failed
   * channel returns at once: an RPC on it connects, or fails fast.
   */
  boolean waitConnecting(long timeoutNanos) {
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
    channel.shutdownNow();
  }

  void awaitClosed(long timeoutNanos) throws InterruptedException {
    channel.awaitTermination(timeoutNanos, TimeUnit.NANOSECONDS);
  }
}
