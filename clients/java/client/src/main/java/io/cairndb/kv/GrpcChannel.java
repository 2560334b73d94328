package io.cairndb.kv;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;

/**
 * Builds a connection's gRPC channel. It is a class of its own so that
 * only opening a channel loads grpc-java's Netty transport (Conn opens one
 * on first use).
 */
final class GrpcChannel {
  /** The HTTP/2 flow-control window of a connection's streams, in bytes. */
  static final int FLOW_CONTROL_WINDOW = 4 << 20;

  private GrpcChannel() {}

  /**
   * A channel to addr (TLS with tls, plaintext if null). It runs callbacks
   * on the calling thread (directExecutor: a blocking call then costs no
   * thread hand-off) and makes no retries of its own: the router decides
   * what may be retried.
   */
  static ManagedChannel open(String addr, SslContext tls) {
    NettyChannelBuilder b = NettyChannelBuilder.forTarget(addr);
    if (tls == null) {
      b.usePlaintext();
    } else {
      b.sslContext(tls);
    }
    return b
        .directExecutor()
        .disableRetry()
        .maxInboundMessageSize(64 << 20)
        // A fixed window: grpc-java's automatic flow control (on by default)
        // sends a PING after every round trip to size the window, which costs
        // both sides a frame and a wake-up per few calls. The nodes' windows
        // are fixed at the same 4 MiB (Go internal/grpcconn/window.go).
        .flowControlWindow(FLOW_CONTROL_WINDOW)
        .build();
  }
}
