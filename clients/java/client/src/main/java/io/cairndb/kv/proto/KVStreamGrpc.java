package io.cairndb.kv.proto;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * KVStream carries KV's calls (all but StoreScan and StoreInfo) multiplexed
 * on one long-lived gRPC stream per connection, so a call costs one DATA
 * frame each way instead of a new HTTP/2 stream with its header frames
 * (docs/design/20261127_call_stream.md). Each call is answered as KV's
 * unary RPC would answer it. On a secure store the stream opens with a
 * token (the authorization header, as a unary call) and each call is
 * checked again, with the stream's token (StreamCall.token) and the role
 * its op needs, as its unary RPC would be.
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class KVStreamGrpc {

  private KVStreamGrpc() {}

  public static final java.lang.String SERVICE_NAME = "cairn.v1.KVStream";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<io.cairndb.kv.proto.CallsRequest,
      io.cairndb.kv.proto.CallsResponse> getCallsMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Calls",
      requestType = io.cairndb.kv.proto.CallsRequest.class,
      responseType = io.cairndb.kv.proto.CallsResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING)
  public static io.grpc.MethodDescriptor<io.cairndb.kv.proto.CallsRequest,
      io.cairndb.kv.proto.CallsResponse> getCallsMethod() {
    io.grpc.MethodDescriptor<io.cairndb.kv.proto.CallsRequest, io.cairndb.kv.proto.CallsResponse> getCallsMethod;
    if ((getCallsMethod = KVStreamGrpc.getCallsMethod) == null) {
      synchronized (KVStreamGrpc.class) {
        if ((getCallsMethod = KVStreamGrpc.getCallsMethod) == null) {
          KVStreamGrpc.getCallsMethod = getCallsMethod =
              io.grpc.MethodDescriptor.<io.cairndb.kv.proto.CallsRequest, io.cairndb.kv.proto.CallsResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Calls"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.CallsRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.CallsResponse.getDefaultInstance()))
              .setSchemaDescriptor(new KVStreamMethodDescriptorSupplier("Calls"))
              .build();
        }
      }
    }
    return getCallsMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static KVStreamStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<KVStreamStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<KVStreamStub>() {
        @java.lang.Override
        public KVStreamStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new KVStreamStub(channel, callOptions);
        }
      };
    return KVStreamStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static KVStreamBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<KVStreamBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<KVStreamBlockingV2Stub>() {
        @java.lang.Override
        public KVStreamBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new KVStreamBlockingV2Stub(channel, callOptions);
        }
      };
    return KVStreamBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static KVStreamBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<KVStreamBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<KVStreamBlockingStub>() {
        @java.lang.Override
        public KVStreamBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new KVStreamBlockingStub(channel, callOptions);
        }
      };
    return KVStreamBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static KVStreamFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<KVStreamFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<KVStreamFutureStub>() {
        @java.lang.Override
        public KVStreamFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new KVStreamFutureStub(channel, callOptions);
        }
      };
    return KVStreamFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * KVStream carries KV's calls (all but StoreScan and StoreInfo) multiplexed
   * on one long-lived gRPC stream per connection, so a call costs one DATA
   * frame each way instead of a new HTTP/2 stream with its header frames
   * (docs/design/20261127_call_stream.md). Each call is answered as KV's
   * unary RPC would answer it. On a secure store the stream opens with a
   * token (the authorization header, as a unary call) and each call is
   * checked again, with the stream's token (StreamCall.token) and the role
   * its op needs, as its unary RPC would be.
   * </pre>
   */
  public interface AsyncService {

    /**
     */
    default io.grpc.stub.StreamObserver<io.cairndb.kv.proto.CallsRequest> calls(
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.CallsResponse> responseObserver) {
      return io.grpc.stub.ServerCalls.asyncUnimplementedStreamingCall(getCallsMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service KVStream.
   * <pre>
   * KVStream carries KV's calls (all but StoreScan and StoreInfo) multiplexed
   * on one long-lived gRPC stream per connection, so a call costs one DATA
   * frame each way instead of a new HTTP/2 stream with its header frames
   * (docs/design/20261127_call_stream.md). Each call is answered as KV's
   * unary RPC would answer it. On a secure store the stream opens with a
   * token (the authorization header, as a unary call) and each call is
   * checked again, with the stream's token (StreamCall.token) and the role
   * its op needs, as its unary RPC would be.
   * </pre>
   */
  public static abstract class KVStreamImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return KVStreamGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service KVStream.
   * <pre>
   * KVStream carries KV's calls (all but StoreScan and StoreInfo) multiplexed
   * on one long-lived gRPC stream per connection, so a call costs one DATA
   * frame each way instead of a new HTTP/2 stream with its header frames
   * (docs/design/20261127_call_stream.md). Each call is answered as KV's
   * unary RPC would answer it. On a secure store the stream opens with a
   * token (the authorization header, as a unary call) and each call is
   * checked again, with the stream's token (StreamCall.token) and the role
   * its op needs, as its unary RPC would be.
   * </pre>
   */
  public static final class KVStreamStub
      extends io.grpc.stub.AbstractAsyncStub<KVStreamStub> {
    private KVStreamStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected KVStreamStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new KVStreamStub(channel, callOptions);
    }

    /**
     */
    public io.grpc.stub.StreamObserver<io.cairndb.kv.proto.CallsRequest> calls(
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.CallsResponse> responseObserver) {
      return io.grpc.stub.ClientCalls.asyncBidiStreamingCall(
          getChannel().newCall(getCallsMethod(), getCallOptions()), responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service KVStream.
   * <pre>
   * KVStream carries KV's calls (all but StoreScan and StoreInfo) multiplexed
   * on one long-lived gRPC stream per connection, so a call costs one DATA
   * frame each way instead of a new HTTP/2 stream with its header frames
   * (docs/design/20261127_call_stream.md). Each call is answered as KV's
   * unary RPC would answer it. On a secure store the stream opens with a
   * token (the authorization header, as a unary call) and each call is
   * checked again, with the stream's token (StreamCall.token) and the role
   * its op needs, as its unary RPC would be.
   * </pre>
   */
  public static final class KVStreamBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<KVStreamBlockingV2Stub> {
    private KVStreamBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected KVStreamBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new KVStreamBlockingV2Stub(channel, callOptions);
    }

    /**
     */
    @io.grpc.ExperimentalApi("https://github.com/grpc/grpc-java/issues/10918")
    public io.grpc.stub.BlockingClientCall<io.cairndb.kv.proto.CallsRequest, io.cairndb.kv.proto.CallsResponse>
        calls() {
      return io.grpc.stub.ClientCalls.blockingBidiStreamingCall(
          getChannel(), getCallsMethod(), getCallOptions());
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service KVStream.
   * <pre>
   * KVStream carries KV's calls (all but StoreScan and StoreInfo) multiplexed
   * on one long-lived gRPC stream per connection, so a call costs one DATA
   * frame each way instead of a new HTTP/2 stream with its header frames
   * (docs/design/20261127_call_stream.md). Each call is answered as KV's
   * unary RPC would answer it. On a secure store the stream opens with a
   * token (the authorization header, as a unary call) and each call is
   * checked again, with the stream's token (StreamCall.token) and the role
   * its op needs, as its unary RPC would be.
   * </pre>
   */
  public static final class KVStreamBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<KVStreamBlockingStub> {
    private KVStreamBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected KVStreamBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new KVStreamBlockingStub(channel, callOptions);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service KVStream.
   * <pre>
   * KVStream carries KV's calls (all but StoreScan and StoreInfo) multiplexed
   * on one long-lived gRPC stream per connection, so a call costs one DATA
   * frame each way instead of a new HTTP/2 stream with its header frames
   * (docs/design/20261127_call_stream.md). Each call is answered as KV's
   * unary RPC would answer it. On a secure store the stream opens with a
   * token (the authorization header, as a unary call) and each call is
   * checked again, with the stream's token (StreamCall.token) and the role
   * its op needs, as its unary RPC would be.
   * </pre>
   */
  public static final class KVStreamFutureStub
      extends io.grpc.stub.AbstractFutureStub<KVStreamFutureStub> {
    private KVStreamFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected KVStreamFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new KVStreamFutureStub(channel, callOptions);
    }
  }

  private static final int METHODID_CALLS = 0;

  private static final class MethodHandlers<Req, Resp> implements
      io.grpc.stub.ServerCalls.UnaryMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ServerStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.ClientStreamingMethod<Req, Resp>,
      io.grpc.stub.ServerCalls.BidiStreamingMethod<Req, Resp> {
    private final AsyncService serviceImpl;
    private final int methodId;

    MethodHandlers(AsyncService serviceImpl, int methodId) {
      this.serviceImpl = serviceImpl;
      this.methodId = methodId;
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public void invoke(Req request, io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        default:
          throw new AssertionError();
      }
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public io.grpc.stub.StreamObserver<Req> invoke(
        io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        case METHODID_CALLS:
          return (io.grpc.stub.StreamObserver<Req>) serviceImpl.calls(
              (io.grpc.stub.StreamObserver<io.cairndb.kv.proto.CallsResponse>) responseObserver);
        default:
          throw new AssertionError();
      }
    }
  }

  public static final io.grpc.ServerServiceDefinition bindService(AsyncService service) {
    return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
        .addMethod(
          getCallsMethod(),
          io.grpc.stub.ServerCalls.asyncBidiStreamingCall(
            new MethodHandlers<
              io.cairndb.kv.proto.CallsRequest,
              io.cairndb.kv.proto.CallsResponse>(
                service, METHODID_CALLS)))
        .build();
  }

  private static abstract class KVStreamBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    KVStreamBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return io.cairndb.kv.proto.KvProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("KVStream");
    }
  }

  private static final class KVStreamFileDescriptorSupplier
      extends KVStreamBaseDescriptorSupplier {
    KVStreamFileDescriptorSupplier() {}
  }

  private static final class KVStreamMethodDescriptorSupplier
      extends KVStreamBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    KVStreamMethodDescriptorSupplier(java.lang.String methodName) {
      this.methodName = methodName;
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.MethodDescriptor getMethodDescriptor() {
      return getServiceDescriptor().findMethodByName(methodName);
    }
  }

  private static volatile io.grpc.ServiceDescriptor serviceDescriptor;

  public static io.grpc.ServiceDescriptor getServiceDescriptor() {
    io.grpc.ServiceDescriptor result = serviceDescriptor;
    if (result == null) {
      synchronized (KVStreamGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new KVStreamFileDescriptorSupplier())
              .addMethod(getCallsMethod())
              .build();
        }
      }
    }
    return result;
  }
}
