package io.cairndb.kv;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cairndb.kv.proto.CallsRequest;
import io.cairndb.kv.proto.CallsResponse;
import io.cairndb.kv.proto.ErrorDetail;
import io.cairndb.kv.proto.GetRequest;
import io.cairndb.kv.proto.GetResponse;
import io.cairndb.kv.proto.KVGrpc;
import io.cairndb.kv.proto.KVStreamGrpc;
import io.cairndb.kv.proto.OperationResult;
import io.cairndb.kv.proto.Record;
import io.cairndb.kv.proto.StoreInfoRequest;
import io.cairndb.kv.proto.StoreInfoResponse;
import io.cairndb.kv.proto.StreamAnswer;
import io.cairndb.kv.proto.StreamCall;
import io.cairndb.kv.proto.WriteResponse;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The call stream (CallStream): used by default, off on request, and a fallback to unary. */
class CallStreamTest {
  private final String ns = Procs.ns();

  private Key key(String major) {
    return Key.createKey(List.of(ns, major));
  }

  private static Value v(String s) {
    return Value.createValue(s.getBytes(UTF_8));
  }

  /** Writes and reads go over the connection's stream against a real lite, and it stays on. */
  @Test
  void callsTravelOnTheStream() throws Exception {
    String addr = Procs.lite().addr;
    StoreImpl store = (StoreImpl) KVStoreFactory.getStore(new KVStoreConfig(Procs.STORE, addr).setCallSocket(false));
    try {
      Version ver = store.put(key("s"), v("one"));
      ValueVersion got = store.get(key("s"));
      assertEquals("one", new String(got.getValue().getValue(), UTF_8));
      assertEquals(ver, got.getVersion());
      assertTrue(store.delete(key("s")));
      CallStream s = store.router.conn(addr).stream();
      assertNotNull(s, "a handle without a login has a call stream");
      assertFalse(s.off(), "lite serves the call stream");
    } finally {
      store.close();
    }
  }

  /** setUnaryCalls(true): no stream, and every call still works. */
  @Test
  void unaryCallsServe() throws Exception {
    String addr = Procs.lite().addr;
    StoreImpl store = (StoreImpl) KVStoreFactory.getStore(new KVStoreConfig(Procs.STORE, addr).setUnaryCalls(true));
    try {
      store.put(key("u"), v("two"));
      assertEquals("two", new String(store.get(key("u")).getValue().getValue(), UTF_8));
      assertNull(store.router.conn(addr).stream());
    } finally {
      store.close();
    }
  }

  /**
   * A server without KVStream (an older one, or a secure store before StreamCall.token) answers the
   * stream UNIMPLEMENTED: the call is made unary, and so is every later one.
   */
  @Test
  void fallsBackWithoutStream() throws Exception {
    AtomicInteger unaryGets = new AtomicInteger();
    Server srv = NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(new KVGrpc.KVImplBase() {
      @Override
      public void storeInfo(StoreInfoRequest r, StreamObserver<StoreInfoResponse> out) {
        out.onNext(StoreInfoResponse.newBuilder().setStore("s").build());
        out.onCompleted();
      }

      @Override
      public void get(GetRequest r, StreamObserver<GetResponse> out) {
        unaryGets.incrementAndGet();
        out.onNext(GetResponse.newBuilder().setFound(true).setRecord(Record.newBuilder().setKey(r.getKey())
            .setValue(com.google.protobuf.ByteString.copyFromUtf8("unary"))
            .setVersion(com.google.protobuf.ByteString.copyFrom(new byte[16]))).build());
        out.onCompleted();
      }
    }).build().start();
    String addr = "127.0.0.1:" + srv.getPort();
    StoreImpl store = (StoreImpl) KVStoreFactory.getStore(new KVStoreConfig("s", addr).setCallSocket(false));
    try {
      for (int i = 0; i < 3; i++) {
        assertEquals("unary", new String(store.get(key("f")).getValue().getValue(), UTF_8), "get " + i);
      }
      assertEquals(3, unaryGets.get());
      assertTrue(store.router.conn(addr).stream().off());
    } finally {
      store.close();
      srv.shutdownNow();
    }
  }

  /** A server whose first stream takes one call and ends with first; later streams answer every put. */
  private static Server putStream(io.grpc.StatusRuntimeException first, AtomicInteger streams) throws Exception {
    return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0)).addService(new KVGrpc.KVImplBase() {
      @Override
      public void storeInfo(StoreInfoRequest r, StreamObserver<StoreInfoResponse> out) {
        out.onNext(StoreInfoResponse.newBuilder().setStore("s").build());
        out.onCompleted();
      }
    }).addService(new KVStreamGrpc.KVStreamImplBase() {
      @Override
      public StreamObserver<CallsRequest> calls(StreamObserver<CallsResponse> out) {
        int n = streams.getAndIncrement();
        return new StreamObserver<CallsRequest>() {
          @Override
          public void onNext(CallsRequest req) {
            if (n == 0) {
              out.onError(first);
              return;
            }
            StreamCall c = req.getCalls(0);
            out.onNext(CallsResponse.newBuilder().addAnswers(StreamAnswer.newBuilder().setId(c.getId())
                .setPut(WriteResponse.newBuilder().setResult(OperationResult.newBuilder().setSuccess(true)
                    .setNewVersion(com.google.protobuf.ByteString.copyFrom(new byte[16]))))).build());
          }

          @Override
          public void onError(Throwable t) {}

          @Override
          public void onCompleted() {
            out.onCompleted();
          }
        };
      }
    }).build().start();
  }

  /**
   * A write sent on a stream that breaks before its answer may have been
   * applied, whatever status ended the stream (one call too large to send
   * ends it with RESOURCE_EXHAUSTED): it is reported so and not resent.
   */
  @Test
  void lostWriteIsMaybeApplied() throws Exception {
    for (io.grpc.Status end : new io.grpc.Status[] {io.grpc.Status.UNAVAILABLE.withDescription("the connection broke"),
        io.grpc.Status.RESOURCE_EXHAUSTED.withDescription("another call was too large")}) {
      AtomicInteger streams = new AtomicInteger();
      Server srv = putStream(end.asRuntimeException(), streams);
      KVStore store = KVStoreFactory.getStore(new KVStoreConfig("s", "127.0.0.1:" + srv.getPort()).setCallSocket(false));
      try {
        FaultException e = assertThrows(FaultException.class, () -> store.put(key("w"), v("x")), end.toString());
        assertTrue(e.maybeApplied(), end + ": " + e);
        assertEquals(1, streams.get(), end + ": the write was sent again");
      } finally {
        store.close();
        srv.shutdownNow();
      }
    }
  }

  /** A node closing a stream at shutdown says (shutting_down) that the calls it did not answer never ran: retried. */
  @Test
  void shutdownRetriesWrite() throws Exception {
    com.google.rpc.Status closing = com.google.rpc.Status.newBuilder().setCode(io.grpc.Status.Code.UNAVAILABLE.value())
        .setMessage("the node is shutting down").addDetails(com.google.protobuf.Any.pack(ErrorDetail.newBuilder()
            .setKind("shutting_down").setAction(ErrorDetail.Action.ACTION_RETRY).build())).build();
    AtomicInteger streams = new AtomicInteger();
    Server srv = putStream(io.grpc.protobuf.StatusProto.toStatusRuntimeException(closing), streams);
    KVStore store = KVStoreFactory.getStore(new KVStoreConfig("s", "127.0.0.1:" + srv.getPort()).setCallSocket(false));
    try {
      assertNotNull(store.put(key("r"), v("x")));
      assertEquals(2, streams.get());
    } finally {
      store.close();
      srv.shutdownNow();
    }
  }
}
