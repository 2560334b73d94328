package io.cairndb.kv.proto;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class KVGrpc {

  private KVGrpc() {}

  public static final java.lang.String SERVICE_NAME = "cairn.v1.KV";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<io.cairndb.kv.proto.GetRequest,
      io.cairndb.kv.proto.GetResponse> getGetMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Get",
      requestType = io.cairndb.kv.proto.GetRequest.class,
      responseType = io.cairndb.kv.proto.GetResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.cairndb.kv.proto.GetRequest,
      io.cairndb.kv.proto.GetResponse> getGetMethod() {
    io.grpc.MethodDescriptor<io.cairndb.kv.proto.GetRequest, io.cairndb.kv.proto.GetResponse> getGetMethod;
    if ((getGetMethod = KVGrpc.getGetMethod) == null) {
      synchronized (KVGrpc.class) {
        if ((getGetMethod = KVGrpc.getGetMethod) == null) {
          KVGrpc.getGetMethod = getGetMethod =
              io.grpc.MethodDescriptor.<io.cairndb.kv.proto.GetRequest, io.cairndb.kv.proto.GetResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Get"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.GetRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.GetResponse.getDefaultInstance()))
              .setSchemaDescriptor(new KVMethodDescriptorSupplier("Get"))
              .build();
        }
      }
    }
    return getGetMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.cairndb.kv.proto.PutRequest,
      io.cairndb.kv.proto.WriteResponse> getPutMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Put",
      requestType = io.cairndb.kv.proto.PutRequest.class,
      responseType = io.cairndb.kv.proto.WriteResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.cairndb.kv.proto.PutRequest,
      io.cairndb.kv.proto.WriteResponse> getPutMethod() {
    io.grpc.MethodDescriptor<io.cairndb.kv.proto.PutRequest, io.cairndb.kv.proto.WriteResponse> getPutMethod;
    if ((getPutMethod = KVGrpc.getPutMethod) == null) {
      synchronized (KVGrpc.class) {
        if ((getPutMethod = KVGrpc.getPutMethod) == null) {
          KVGrpc.getPutMethod = getPutMethod =
              io.grpc.MethodDescriptor.<io.cairndb.kv.proto.PutRequest, io.cairndb.kv.proto.WriteResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Put"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.PutRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.WriteResponse.getDefaultInstance()))
              .setSchemaDescriptor(new KVMethodDescriptorSupplier("Put"))
              .build();
        }
      }
    }
    return getPutMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.cairndb.kv.proto.DeleteRequest,
      io.cairndb.kv.proto.WriteResponse> getDeleteMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Delete",
      requestType = io.cairndb.kv.proto.DeleteRequest.class,
      responseType = io.cairndb.kv.proto.WriteResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.cairndb.kv.proto.DeleteRequest,
      io.cairndb.kv.proto.WriteResponse> getDeleteMethod() {
    io.grpc.MethodDescriptor<io.cairndb.kv.proto.DeleteRequest, io.cairndb.kv.proto.WriteResponse> getDeleteMethod;
    if ((getDeleteMethod = KVGrpc.getDeleteMethod) == null) {
      synchronized (KVGrpc.class) {
        if ((getDeleteMethod = KVGrpc.getDeleteMethod) == null) {
          KVGrpc.getDeleteMethod = getDeleteMethod =
              io.grpc.MethodDescriptor.<io.cairndb.kv.proto.DeleteRequest, io.cairndb.kv.proto.WriteResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Delete"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.DeleteRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.WriteResponse.getDefaultInstance()))
              .setSchemaDescriptor(new KVMethodDescriptorSupplier("Delete"))
              .build();
        }
      }
    }
    return getDeleteMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.cairndb.kv.proto.ExecuteRequest,
      io.cairndb.kv.proto.ExecuteResponse> getExecuteMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Execute",
      requestType = io.cairndb.kv.proto.ExecuteRequest.class,
      responseType = io.cairndb.kv.proto.ExecuteResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.cairndb.kv.proto.ExecuteRequest,
      io.cairndb.kv.proto.ExecuteResponse> getExecuteMethod() {
    io.grpc.MethodDescriptor<io.cairndb.kv.proto.ExecuteRequest, io.cairndb.kv.proto.ExecuteResponse> getExecuteMethod;
    if ((getExecuteMethod = KVGrpc.getExecuteMethod) == null) {
      synchronized (KVGrpc.class) {
        if ((getExecuteMethod = KVGrpc.getExecuteMethod) == null) {
          KVGrpc.getExecuteMethod = getExecuteMethod =
              io.grpc.MethodDescriptor.<io.cairndb.kv.proto.ExecuteRequest, io.cairndb.kv.proto.ExecuteResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Execute"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.ExecuteRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.ExecuteResponse.getDefaultInstance()))
              .setSchemaDescriptor(new KVMethodDescriptorSupplier("Execute"))
              .build();
        }
      }
    }
    return getExecuteMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.cairndb.kv.proto.PutManyRequest,
      io.cairndb.kv.proto.PutManyResponse> getPutManyMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "PutMany",
      requestType = io.cairndb.kv.proto.PutManyRequest.class,
      responseType = io.cairndb.kv.proto.PutManyResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.cairndb.kv.proto.PutManyRequest,
      io.cairndb.kv.proto.PutManyResponse> getPutManyMethod() {
    io.grpc.MethodDescriptor<io.cairndb.kv.proto.PutManyRequest, io.cairndb.kv.proto.PutManyResponse> getPutManyMethod;
    if ((getPutManyMethod = KVGrpc.getPutManyMethod) == null) {
      synchronized (KVGrpc.class) {
        if ((getPutManyMethod = KVGrpc.getPutManyMethod) == null) {
          KVGrpc.getPutManyMethod = getPutManyMethod =
              io.grpc.MethodDescriptor.<io.cairndb.kv.proto.PutManyRequest, io.cairndb.kv.proto.PutManyResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "PutMany"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.PutManyRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.PutManyResponse.getDefaultInstance()))
              .setSchemaDescriptor(new KVMethodDescriptorSupplier("PutMany"))
              .build();
        }
      }
    }
    return getPutManyMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.cairndb.kv.proto.MultiGetRequest,
      io.cairndb.kv.proto.MultiGetResponse> getMultiGetMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "MultiGet",
      requestType = io.cairndb.kv.proto.MultiGetRequest.class,
      responseType = io.cairndb.kv.proto.MultiGetResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.cairndb.kv.proto.MultiGetRequest,
      io.cairndb.kv.proto.MultiGetResponse> getMultiGetMethod() {
    io.grpc.MethodDescriptor<io.cairndb.kv.proto.MultiGetRequest, io.cairndb.kv.proto.MultiGetResponse> getMultiGetMethod;
    if ((getMultiGetMethod = KVGrpc.getMultiGetMethod) == null) {
      synchronized (KVGrpc.class) {
        if ((getMultiGetMethod = KVGrpc.getMultiGetMethod) == null) {
          KVGrpc.getMultiGetMethod = getMultiGetMethod =
              io.grpc.MethodDescriptor.<io.cairndb.kv.proto.MultiGetRequest, io.cairndb.kv.proto.MultiGetResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "MultiGet"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.MultiGetRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.MultiGetResponse.getDefaultInstance()))
              .setSchemaDescriptor(new KVMethodDescriptorSupplier("MultiGet"))
              .build();
        }
      }
    }
    return getMultiGetMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.cairndb.kv.proto.MultiDeleteRequest,
      io.cairndb.kv.proto.MultiDeleteResponse> getMultiDeleteMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "MultiDelete",
      requestType = io.cairndb.kv.proto.MultiDeleteRequest.class,
      responseType = io.cairndb.kv.proto.MultiDeleteResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.cairndb.kv.proto.MultiDeleteRequest,
      io.cairndb.kv.proto.MultiDeleteResponse> getMultiDeleteMethod() {
    io.grpc.MethodDescriptor<io.cairndb.kv.proto.MultiDeleteRequest, io.cairndb.kv.proto.MultiDeleteResponse> getMultiDeleteMethod;
    if ((getMultiDeleteMethod = KVGrpc.getMultiDeleteMethod) == null) {
      synchronized (KVGrpc.class) {
        if ((getMultiDeleteMethod = KVGrpc.getMultiDeleteMethod) == null) {
          KVGrpc.getMultiDeleteMethod = getMultiDeleteMethod =
              io.grpc.MethodDescriptor.<io.cairndb.kv.proto.MultiDeleteRequest, io.cairndb.kv.proto.MultiDeleteResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "MultiDelete"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.MultiDeleteRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.MultiDeleteResponse.getDefaultInstance()))
              .setSchemaDescriptor(new KVMethodDescriptorSupplier("MultiDelete"))
              .build();
        }
      }
    }
    return getMultiDeleteMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.cairndb.kv.proto.StoreScanRequest,
      io.cairndb.kv.proto.StoreScanResponse> getStoreScanMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "StoreScan",
      requestType = io.cairndb.kv.proto.StoreScanRequest.class,
      responseType = io.cairndb.kv.proto.StoreScanResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.cairndb.kv.proto.StoreScanRequest,
      io.cairndb.kv.proto.StoreScanResponse> getStoreScanMethod() {
    io.grpc.MethodDescriptor<io.cairndb.kv.proto.StoreScanRequest, io.cairndb.kv.proto.StoreScanResponse> getStoreScanMethod;
    if ((getStoreScanMethod = KVGrpc.getStoreScanMethod) == null) {
      synchronized (KVGrpc.class) {
        if ((getStoreScanMethod = KVGrpc.getStoreScanMethod) == null) {
          KVGrpc.getStoreScanMethod = getStoreScanMethod =
              io.grpc.MethodDescriptor.<io.cairndb.kv.proto.StoreScanRequest, io.cairndb.kv.proto.StoreScanResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "StoreScan"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.StoreScanRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.StoreScanResponse.getDefaultInstance()))
              .setSchemaDescriptor(new KVMethodDescriptorSupplier("StoreScan"))
              .build();
        }
      }
    }
    return getStoreScanMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.cairndb.kv.proto.StoreInfoRequest,
      io.cairndb.kv.proto.StoreInfoResponse> getStoreInfoMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "StoreInfo",
      requestType = io.cairndb.kv.proto.StoreInfoRequest.class,
      responseType = io.cairndb.kv.proto.StoreInfoResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.cairndb.kv.proto.StoreInfoRequest,
      io.cairndb.kv.proto.StoreInfoResponse> getStoreInfoMethod() {
    io.grpc.MethodDescriptor<io.cairndb.kv.proto.StoreInfoRequest, io.cairndb.kv.proto.StoreInfoResponse> getStoreInfoMethod;
    if ((getStoreInfoMethod = KVGrpc.getStoreInfoMethod) == null) {
      synchronized (KVGrpc.class) {
        if ((getStoreInfoMethod = KVGrpc.getStoreInfoMethod) == null) {
          KVGrpc.getStoreInfoMethod = getStoreInfoMethod =
              io.grpc.MethodDescriptor.<io.cairndb.kv.proto.StoreInfoRequest, io.cairndb.kv.proto.StoreInfoResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "StoreInfo"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.StoreInfoRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.StoreInfoResponse.getDefaultInstance()))
              .setSchemaDescriptor(new KVMethodDescriptorSupplier("StoreInfo"))
              .build();
        }
      }
    }
    return getStoreInfoMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static KVStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<KVStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<KVStub>() {
        @java.lang.Override
        public KVStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new KVStub(channel, callOptions);
        }
      };
    return KVStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static KVBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<KVBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<KVBlockingV2Stub>() {
        @java.lang.Override
        public KVBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new KVBlockingV2Stub(channel, callOptions);
        }
      };
    return KVBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static KVBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<KVBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<KVBlockingStub>() {
        @java.lang.Override
        public KVBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new KVBlockingStub(channel, callOptions);
        }
      };
    return KVBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static KVFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<KVFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<KVFutureStub>() {
        @java.lang.Override
        public KVFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new KVFutureStub(channel, callOptions);
        }
      };
    return KVFutureStub.newStub(factory, channel);
  }

  /**
   */
  public interface AsyncService {

    /**
     */
    default void get(io.cairndb.kv.proto.GetRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.GetResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getGetMethod(), responseObserver);
    }

    /**
     */
    default void put(io.cairndb.kv.proto.PutRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.WriteResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getPutMethod(), responseObserver);
    }

    /**
     */
    default void delete(io.cairndb.kv.proto.DeleteRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.WriteResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getDeleteMethod(), responseObserver);
    }

    /**
     */
    default void execute(io.cairndb.kv.proto.ExecuteRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.ExecuteResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getExecuteMethod(), responseObserver);
    }

    /**
     */
    default void putMany(io.cairndb.kv.proto.PutManyRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.PutManyResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getPutManyMethod(), responseObserver);
    }

    /**
     */
    default void multiGet(io.cairndb.kv.proto.MultiGetRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.MultiGetResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getMultiGetMethod(), responseObserver);
    }

    /**
     */
    default void multiDelete(io.cairndb.kv.proto.MultiDeleteRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.MultiDeleteResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getMultiDeleteMethod(), responseObserver);
    }

    /**
     */
    default void storeScan(io.cairndb.kv.proto.StoreScanRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.StoreScanResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getStoreScanMethod(), responseObserver);
    }

    /**
     */
    default void storeInfo(io.cairndb.kv.proto.StoreInfoRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.StoreInfoResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getStoreInfoMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service KV.
   */
  public static abstract class KVImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return KVGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service KV.
   */
  public static final class KVStub
      extends io.grpc.stub.AbstractAsyncStub<KVStub> {
    private KVStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected KVStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new KVStub(channel, callOptions);
    }

    /**
     */
    public void get(io.cairndb.kv.proto.GetRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.GetResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getGetMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void put(io.cairndb.kv.proto.PutRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.WriteResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getPutMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void delete(io.cairndb.kv.proto.DeleteRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.WriteResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getDeleteMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void execute(io.cairndb.kv.proto.ExecuteRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.ExecuteResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getExecuteMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void putMany(io.cairndb.kv.proto.PutManyRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.PutManyResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getPutManyMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void multiGet(io.cairndb.kv.proto.MultiGetRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.MultiGetResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getMultiGetMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void multiDelete(io.cairndb.kv.proto.MultiDeleteRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.MultiDeleteResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getMultiDeleteMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void storeScan(io.cairndb.kv.proto.StoreScanRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.StoreScanResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getStoreScanMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void storeInfo(io.cairndb.kv.proto.StoreInfoRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.StoreInfoResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getStoreInfoMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service KV.
   */
  public static final class KVBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<KVBlockingV2Stub> {
    private KVBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected KVBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new KVBlockingV2Stub(channel, callOptions);
    }

    /**
     */
    public io.cairndb.kv.proto.GetResponse get(io.cairndb.kv.proto.GetRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getGetMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.cairndb.kv.proto.WriteResponse put(io.cairndb.kv.proto.PutRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getPutMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.cairndb.kv.proto.WriteResponse delete(io.cairndb.kv.proto.DeleteRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getDeleteMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.cairndb.kv.proto.ExecuteResponse execute(io.cairndb.kv.proto.ExecuteRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getExecuteMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.cairndb.kv.proto.PutManyResponse putMany(io.cairndb.kv.proto.PutManyRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getPutManyMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.cairndb.kv.proto.MultiGetResponse multiGet(io.cairndb.kv.proto.MultiGetRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getMultiGetMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.cairndb.kv.proto.MultiDeleteResponse multiDelete(io.cairndb.kv.proto.MultiDeleteRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getMultiDeleteMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.cairndb.kv.proto.StoreScanResponse storeScan(io.cairndb.kv.proto.StoreScanRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getStoreScanMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.cairndb.kv.proto.StoreInfoResponse storeInfo(io.cairndb.kv.proto.StoreInfoRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getStoreInfoMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service KV.
   */
  public static final class KVBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<KVBlockingStub> {
    private KVBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected KVBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new KVBlockingStub(channel, callOptions);
    }

    /**
     */
    public io.cairndb.kv.proto.GetResponse get(io.cairndb.kv.proto.GetRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getGetMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.cairndb.kv.proto.WriteResponse put(io.cairndb.kv.proto.PutRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getPutMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.cairndb.kv.proto.WriteResponse delete(io.cairndb.kv.proto.DeleteRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getDeleteMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.cairndb.kv.proto.ExecuteResponse execute(io.cairndb.kv.proto.ExecuteRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getExecuteMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.cairndb.kv.proto.PutManyResponse putMany(io.cairndb.kv.proto.PutManyRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getPutManyMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.cairndb.kv.proto.MultiGetResponse multiGet(io.cairndb.kv.proto.MultiGetRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getMultiGetMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.cairndb.kv.proto.MultiDeleteResponse multiDelete(io.cairndb.kv.proto.MultiDeleteRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getMultiDeleteMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.cairndb.kv.proto.StoreScanResponse storeScan(io.cairndb.kv.proto.StoreScanRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getStoreScanMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.cairndb.kv.proto.StoreInfoResponse storeInfo(io.cairndb.kv.proto.StoreInfoRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getStoreInfoMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service KV.
   */
  public static final class KVFutureStub
      extends io.grpc.stub.AbstractFutureStub<KVFutureStub> {
    private KVFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected KVFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new KVFutureStub(channel, callOptions);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<io.cairndb.kv.proto.GetResponse> get(
        io.cairndb.kv.proto.GetRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getGetMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<io.cairndb.kv.proto.WriteResponse> put(
        io.cairndb.kv.proto.PutRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getPutMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<io.cairndb.kv.proto.WriteResponse> delete(
        io.cairndb.kv.proto.DeleteRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getDeleteMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<io.cairndb.kv.proto.ExecuteResponse> execute(
        io.cairndb.kv.proto.ExecuteRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getExecuteMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<io.cairndb.kv.proto.PutManyResponse> putMany(
        io.cairndb.kv.proto.PutManyRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getPutManyMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<io.cairndb.kv.proto.MultiGetResponse> multiGet(
        io.cairndb.kv.proto.MultiGetRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getMultiGetMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<io.cairndb.kv.proto.MultiDeleteResponse> multiDelete(
        io.cairndb.kv.proto.MultiDeleteRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getMultiDeleteMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<io.cairndb.kv.proto.StoreScanResponse> storeScan(
        io.cairndb.kv.proto.StoreScanRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getStoreScanMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<io.cairndb.kv.proto.StoreInfoResponse> storeInfo(
        io.cairndb.kv.proto.StoreInfoRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getStoreInfoMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_GET = 0;
  private static final int METHODID_PUT = 1;
  private static final int METHODID_DELETE = 2;
  private static final int METHODID_EXECUTE = 3;
  private static final int METHODID_PUT_MANY = 4;
  private static final int METHODID_MULTI_GET = 5;
  private static final int METHODID_MULTI_DELETE = 6;
  private static final int METHODID_STORE_SCAN = 7;
  private static final int METHODID_STORE_INFO = 8;

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
        case METHODID_GET:
          serviceImpl.get((io.cairndb.kv.proto.GetRequest) request,
              (io.grpc.stub.StreamObserver<io.cairndb.kv.proto.GetResponse>) responseObserver);
          break;
        case METHODID_PUT:
          serviceImpl.put((io.cairndb.kv.proto.PutRequest) request,
              (io.grpc.stub.StreamObserver<io.cairndb.kv.proto.WriteResponse>) responseObserver);
          break;
        case METHODID_DELETE:
          serviceImpl.delete((io.cairndb.kv.proto.DeleteRequest) request,
              (io.grpc.stub.StreamObserver<io.cairndb.kv.proto.WriteResponse>) responseObserver);
          break;
        case METHODID_EXECUTE:
          serviceImpl.execute((io.cairndb.kv.proto.ExecuteRequest) request,
              (io.grpc.stub.StreamObserver<io.cairndb.kv.proto.ExecuteResponse>) responseObserver);
          break;
        case METHODID_PUT_MANY:
          serviceImpl.putMany((io.cairndb.kv.proto.PutManyRequest) request,
              (io.grpc.stub.StreamObserver<io.cairndb.kv.proto.PutManyResponse>) responseObserver);
          break;
        case METHODID_MULTI_GET:
          serviceImpl.multiGet((io.cairndb.kv.proto.MultiGetRequest) request,
              (io.grpc.stub.StreamObserver<io.cairndb.kv.proto.MultiGetResponse>) responseObserver);
          break;
        case METHODID_MULTI_DELETE:
          serviceImpl.multiDelete((io.cairndb.kv.proto.MultiDeleteRequest) request,
              (io.grpc.stub.StreamObserver<io.cairndb.kv.proto.MultiDeleteResponse>) responseObserver);
          break;
        case METHODID_STORE_SCAN:
          serviceImpl.storeScan((io.cairndb.kv.proto.StoreScanRequest) request,
              (io.grpc.stub.StreamObserver<io.cairndb.kv.proto.StoreScanResponse>) responseObserver);
          break;
        case METHODID_STORE_INFO:
          serviceImpl.storeInfo((io.cairndb.kv.proto.StoreInfoRequest) request,
              (io.grpc.stub.StreamObserver<io.cairndb.kv.proto.StoreInfoResponse>) responseObserver);
          break;
        default:
          throw new AssertionError();
      }
    }

    @java.lang.Override
    @java.lang.SuppressWarnings("unchecked")
    public io.grpc.stub.StreamObserver<Req> invoke(
        io.grpc.stub.StreamObserver<Resp> responseObserver) {
      switch (methodId) {
        default:
          throw new AssertionError();
      }
    }
  }

  public static final io.grpc.ServerServiceDefinition bindService(AsyncService service) {
    return io.grpc.ServerServiceDefinition.builder(getServiceDescriptor())
        .addMethod(
          getGetMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.cairndb.kv.proto.GetRequest,
              io.cairndb.kv.proto.GetResponse>(
                service, METHODID_GET)))
        .addMethod(
          getPutMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.cairndb.kv.proto.PutRequest,
              io.cairndb.kv.proto.WriteResponse>(
                service, METHODID_PUT)))
        .addMethod(
          getDeleteMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.cairndb.kv.proto.DeleteRequest,
              io.cairndb.kv.proto.WriteResponse>(
                service, METHODID_DELETE)))
        .addMethod(
          getExecuteMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.cairndb.kv.proto.ExecuteRequest,
              io.cairndb.kv.proto.ExecuteResponse>(
                service, METHODID_EXECUTE)))
        .addMethod(
          getPutManyMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.cairndb.kv.proto.PutManyRequest,
              io.cairndb.kv.proto.PutManyResponse>(
                service, METHODID_PUT_MANY)))
        .addMethod(
          getMultiGetMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.cairndb.kv.proto.MultiGetRequest,
              io.cairndb.kv.proto.MultiGetResponse>(
                service, METHODID_MULTI_GET)))
        .addMethod(
          getMultiDeleteMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.cairndb.kv.proto.MultiDeleteRequest,
              io.cairndb.kv.proto.MultiDeleteResponse>(
                service, METHODID_MULTI_DELETE)))
        .addMethod(
          getStoreScanMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.cairndb.kv.proto.StoreScanRequest,
              io.cairndb.kv.proto.StoreScanResponse>(
                service, METHODID_STORE_SCAN)))
        .addMethod(
          getStoreInfoMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.cairndb.kv.proto.StoreInfoRequest,
              io.cairndb.kv.proto.StoreInfoResponse>(
                service, METHODID_STORE_INFO)))
        .build();
  }

  private static abstract class KVBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    KVBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return io.cairndb.kv.proto.KvProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("KV");
    }
  }

  private static final class KVFileDescriptorSupplier
      extends KVBaseDescriptorSupplier {
    KVFileDescriptorSupplier() {}
  }

  private static final class KVMethodDescriptorSupplier
      extends KVBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    KVMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (KVGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new KVFileDescriptorSupplier())
              .addMethod(getGetMethod())
              .addMethod(getPutMethod())
              .addMethod(getDeleteMethod())
              .addMethod(getExecuteMethod())
              .addMethod(getPutManyMethod())
              .addMethod(getMultiGetMethod())
              .addMethod(getMultiDeleteMethod())
              .addMethod(getStoreScanMethod())
              .addMethod(getStoreInfoMethod())
              .build();
        }
      }
    }
    return result;
  }
}
