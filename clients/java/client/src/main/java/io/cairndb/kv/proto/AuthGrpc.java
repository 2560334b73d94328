package io.cairndb.kv.proto;

import static io.grpc.MethodDescriptor.generateFullMethodName;

/**
 * <pre>
 * Auth logs users in to a secure store (docs/design/20261127_security.md
 * §4). A login gives a session token, which the client sends with every
 * request as gRPC metadata "authorization: Bearer TOKEN" and renews before
 * it expires. A wrong user or password is UNAUTHENTICATED (kind
 * login_failed), slowed down after repeated failures from one user or
 * address; a store that is not secure answers FAILED_PRECONDITION (kind
 * not_secure).
 * </pre>
 */
@io.grpc.stub.annotations.GrpcGenerated
public final class AuthGrpc {

  private AuthGrpc() {}

  public static final java.lang.String SERVICE_NAME = "cairn.v1.Auth";

  // Static method descriptors that strictly reflect the proto.
  private static volatile io.grpc.MethodDescriptor<io.cairndb.kv.proto.LoginRequest,
      io.cairndb.kv.proto.LoginResponse> getLoginMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Login",
      requestType = io.cairndb.kv.proto.LoginRequest.class,
      responseType = io.cairndb.kv.proto.LoginResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.cairndb.kv.proto.LoginRequest,
      io.cairndb.kv.proto.LoginResponse> getLoginMethod() {
    io.grpc.MethodDescriptor<io.cairndb.kv.proto.LoginRequest, io.cairndb.kv.proto.LoginResponse> getLoginMethod;
    if ((getLoginMethod = AuthGrpc.getLoginMethod) == null) {
      synchronized (AuthGrpc.class) {
        if ((getLoginMethod = AuthGrpc.getLoginMethod) == null) {
          AuthGrpc.getLoginMethod = getLoginMethod =
              io.grpc.MethodDescriptor.<io.cairndb.kv.proto.LoginRequest, io.cairndb.kv.proto.LoginResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Login"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.LoginRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.LoginResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AuthMethodDescriptorSupplier("Login"))
              .build();
        }
      }
    }
    return getLoginMethod;
  }

  private static volatile io.grpc.MethodDescriptor<io.cairndb.kv.proto.RenewRequest,
      io.cairndb.kv.proto.RenewResponse> getRenewMethod;

  @io.grpc.stub.annotations.RpcMethod(
      fullMethodName = SERVICE_NAME + '/' + "Renew",
      requestType = io.cairndb.kv.proto.RenewRequest.class,
      responseType = io.cairndb.kv.proto.RenewResponse.class,
      methodType = io.grpc.MethodDescriptor.MethodType.UNARY)
  public static io.grpc.MethodDescriptor<io.cairndb.kv.proto.RenewRequest,
      io.cairndb.kv.proto.RenewResponse> getRenewMethod() {
    io.grpc.MethodDescriptor<io.cairndb.kv.proto.RenewRequest, io.cairndb.kv.proto.RenewResponse> getRenewMethod;
    if ((getRenewMethod = AuthGrpc.getRenewMethod) == null) {
      synchronized (AuthGrpc.class) {
        if ((getRenewMethod = AuthGrpc.getRenewMethod) == null) {
          AuthGrpc.getRenewMethod = getRenewMethod =
              io.grpc.MethodDescriptor.<io.cairndb.kv.proto.RenewRequest, io.cairndb.kv.proto.RenewResponse>newBuilder()
              .setType(io.grpc.MethodDescriptor.MethodType.UNARY)
              .setFullMethodName(generateFullMethodName(SERVICE_NAME, "Renew"))
              .setSampledToLocalTracing(true)
              .setRequestMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.RenewRequest.getDefaultInstance()))
              .setResponseMarshaller(io.grpc.protobuf.ProtoUtils.marshaller(
                  io.cairndb.kv.proto.RenewResponse.getDefaultInstance()))
              .setSchemaDescriptor(new AuthMethodDescriptorSupplier("Renew"))
              .build();
        }
      }
    }
    return getRenewMethod;
  }

  /**
   * Creates a new async stub that supports all call types for the service
   */
  public static AuthStub newStub(io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<AuthStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<AuthStub>() {
        @java.lang.Override
        public AuthStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new AuthStub(channel, callOptions);
        }
      };
    return AuthStub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports all types of calls on the service
   */
  public static AuthBlockingV2Stub newBlockingV2Stub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<AuthBlockingV2Stub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<AuthBlockingV2Stub>() {
        @java.lang.Override
        public AuthBlockingV2Stub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new AuthBlockingV2Stub(channel, callOptions);
        }
      };
    return AuthBlockingV2Stub.newStub(factory, channel);
  }

  /**
   * Creates a new blocking-style stub that supports unary and streaming output calls on the service
   */
  public static AuthBlockingStub newBlockingStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<AuthBlockingStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<AuthBlockingStub>() {
        @java.lang.Override
        public AuthBlockingStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new AuthBlockingStub(channel, callOptions);
        }
      };
    return AuthBlockingStub.newStub(factory, channel);
  }

  /**
   * Creates a new ListenableFuture-style stub that supports unary calls on the service
   */
  public static AuthFutureStub newFutureStub(
      io.grpc.Channel channel) {
    io.grpc.stub.AbstractStub.StubFactory<AuthFutureStub> factory =
      new io.grpc.stub.AbstractStub.StubFactory<AuthFutureStub>() {
        @java.lang.Override
        public AuthFutureStub newStub(io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
          return new AuthFutureStub(channel, callOptions);
        }
      };
    return AuthFutureStub.newStub(factory, channel);
  }

  /**
   * <pre>
   * Auth logs users in to a secure store (docs/design/20261127_security.md
   * §4). A login gives a session token, which the client sends with every
   * request as gRPC metadata "authorization: Bearer TOKEN" and renews before
   * it expires. A wrong user or password is UNAUTHENTICATED (kind
   * login_failed), slowed down after repeated failures from one user or
   * address; a store that is not secure answers FAILED_PRECONDITION (kind
   * not_secure).
   * </pre>
   */
  public interface AsyncService {

    /**
     */
    default void login(io.cairndb.kv.proto.LoginRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.LoginResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getLoginMethod(), responseObserver);
    }

    /**
     */
    default void renew(io.cairndb.kv.proto.RenewRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.RenewResponse> responseObserver) {
      io.grpc.stub.ServerCalls.asyncUnimplementedUnaryCall(getRenewMethod(), responseObserver);
    }
  }

  /**
   * Base class for the server implementation of the service Auth.
   * <pre>
   * Auth logs users in to a secure store (docs/design/20261127_security.md
   * §4). A login gives a session token, which the client sends with every
   * request as gRPC metadata "authorization: Bearer TOKEN" and renews before
   * it expires. A wrong user or password is UNAUTHENTICATED (kind
   * login_failed), slowed down after repeated failures from one user or
   * address; a store that is not secure answers FAILED_PRECONDITION (kind
   * not_secure).
   * </pre>
   */
  public static abstract class AuthImplBase
      implements io.grpc.BindableService, AsyncService {

    @java.lang.Override public final io.grpc.ServerServiceDefinition bindService() {
      return AuthGrpc.bindService(this);
    }
  }

  /**
   * A stub to allow clients to do asynchronous rpc calls to service Auth.
   * <pre>
   * Auth logs users in to a secure store (docs/design/20261127_security.md
   * §4). A login gives a session token, which the client sends with every
   * request as gRPC metadata "authorization: Bearer TOKEN" and renews before
   * it expires. A wrong user or password is UNAUTHENTICATED (kind
   * login_failed), slowed down after repeated failures from one user or
   * address; a store that is not secure answers FAILED_PRECONDITION (kind
   * not_secure).
   * </pre>
   */
  public static final class AuthStub
      extends io.grpc.stub.AbstractAsyncStub<AuthStub> {
    private AuthStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected AuthStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new AuthStub(channel, callOptions);
    }

    /**
     */
    public void login(io.cairndb.kv.proto.LoginRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.LoginResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getLoginMethod(), getCallOptions()), request, responseObserver);
    }

    /**
     */
    public void renew(io.cairndb.kv.proto.RenewRequest request,
        io.grpc.stub.StreamObserver<io.cairndb.kv.proto.RenewResponse> responseObserver) {
      io.grpc.stub.ClientCalls.asyncUnaryCall(
          getChannel().newCall(getRenewMethod(), getCallOptions()), request, responseObserver);
    }
  }

  /**
   * A stub to allow clients to do synchronous rpc calls to service Auth.
   * <pre>
   * Auth logs users in to a secure store (docs/design/20261127_security.md
   * §4). A login gives a session token, which the client sends with every
   * request as gRPC metadata "authorization: Bearer TOKEN" and renews before
   * it expires. A wrong user or password is UNAUTHENTICATED (kind
   * login_failed), slowed down after repeated failures from one user or
   * address; a store that is not secure answers FAILED_PRECONDITION (kind
   * not_secure).
   * </pre>
   */
  public static final class AuthBlockingV2Stub
      extends io.grpc.stub.AbstractBlockingStub<AuthBlockingV2Stub> {
    private AuthBlockingV2Stub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected AuthBlockingV2Stub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new AuthBlockingV2Stub(channel, callOptions);
    }

    /**
     */
    public io.cairndb.kv.proto.LoginResponse login(io.cairndb.kv.proto.LoginRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getLoginMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.cairndb.kv.proto.RenewResponse renew(io.cairndb.kv.proto.RenewRequest request) throws io.grpc.StatusException {
      return io.grpc.stub.ClientCalls.blockingV2UnaryCall(
          getChannel(), getRenewMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do limited synchronous rpc calls to service Auth.
   * <pre>
   * Auth logs users in to a secure store (docs/design/20261127_security.md
   * §4). A login gives a session token, which the client sends with every
   * request as gRPC metadata "authorization: Bearer TOKEN" and renews before
   * it expires. A wrong user or password is UNAUTHENTICATED (kind
   * login_failed), slowed down after repeated failures from one user or
   * address; a store that is not secure answers FAILED_PRECONDITION (kind
   * not_secure).
   * </pre>
   */
  public static final class AuthBlockingStub
      extends io.grpc.stub.AbstractBlockingStub<AuthBlockingStub> {
    private AuthBlockingStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected AuthBlockingStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new AuthBlockingStub(channel, callOptions);
    }

    /**
     */
    public io.cairndb.kv.proto.LoginResponse login(io.cairndb.kv.proto.LoginRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getLoginMethod(), getCallOptions(), request);
    }

    /**
     */
    public io.cairndb.kv.proto.RenewResponse renew(io.cairndb.kv.proto.RenewRequest request) {
      return io.grpc.stub.ClientCalls.blockingUnaryCall(
          getChannel(), getRenewMethod(), getCallOptions(), request);
    }
  }

  /**
   * A stub to allow clients to do ListenableFuture-style rpc calls to service Auth.
   * <pre>
   * Auth logs users in to a secure store (docs/design/20261127_security.md
   * §4). A login gives a session token, which the client sends with every
   * request as gRPC metadata "authorization: Bearer TOKEN" and renews before
   * it expires. A wrong user or password is UNAUTHENTICATED (kind
   * login_failed), slowed down after repeated failures from one user or
   * address; a store that is not secure answers FAILED_PRECONDITION (kind
   * not_secure).
   * </pre>
   */
  public static final class AuthFutureStub
      extends io.grpc.stub.AbstractFutureStub<AuthFutureStub> {
    private AuthFutureStub(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      super(channel, callOptions);
    }

    @java.lang.Override
    protected AuthFutureStub build(
        io.grpc.Channel channel, io.grpc.CallOptions callOptions) {
      return new AuthFutureStub(channel, callOptions);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<io.cairndb.kv.proto.LoginResponse> login(
        io.cairndb.kv.proto.LoginRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getLoginMethod(), getCallOptions()), request);
    }

    /**
     */
    public com.google.common.util.concurrent.ListenableFuture<io.cairndb.kv.proto.RenewResponse> renew(
        io.cairndb.kv.proto.RenewRequest request) {
      return io.grpc.stub.ClientCalls.futureUnaryCall(
          getChannel().newCall(getRenewMethod(), getCallOptions()), request);
    }
  }

  private static final int METHODID_LOGIN = 0;
  private static final int METHODID_RENEW = 1;

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
        case METHODID_LOGIN:
          serviceImpl.login((io.cairndb.kv.proto.LoginRequest) request,
              (io.grpc.stub.StreamObserver<io.cairndb.kv.proto.LoginResponse>) responseObserver);
          break;
        case METHODID_RENEW:
          serviceImpl.renew((io.cairndb.kv.proto.RenewRequest) request,
              (io.grpc.stub.StreamObserver<io.cairndb.kv.proto.RenewResponse>) responseObserver);
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
          getLoginMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.cairndb.kv.proto.LoginRequest,
              io.cairndb.kv.proto.LoginResponse>(
                service, METHODID_LOGIN)))
        .addMethod(
          getRenewMethod(),
          io.grpc.stub.ServerCalls.asyncUnaryCall(
            new MethodHandlers<
              io.cairndb.kv.proto.RenewRequest,
              io.cairndb.kv.proto.RenewResponse>(
                service, METHODID_RENEW)))
        .build();
  }

  private static abstract class AuthBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoFileDescriptorSupplier, io.grpc.protobuf.ProtoServiceDescriptorSupplier {
    AuthBaseDescriptorSupplier() {}

    @java.lang.Override
    public com.google.protobuf.Descriptors.FileDescriptor getFileDescriptor() {
      return io.cairndb.kv.proto.KvProto.getDescriptor();
    }

    @java.lang.Override
    public com.google.protobuf.Descriptors.ServiceDescriptor getServiceDescriptor() {
      return getFileDescriptor().findServiceByName("Auth");
    }
  }

  private static final class AuthFileDescriptorSupplier
      extends AuthBaseDescriptorSupplier {
    AuthFileDescriptorSupplier() {}
  }

  private static final class AuthMethodDescriptorSupplier
      extends AuthBaseDescriptorSupplier
      implements io.grpc.protobuf.ProtoMethodDescriptorSupplier {
    private final java.lang.String methodName;

    AuthMethodDescriptorSupplier(java.lang.String methodName) {
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
      synchronized (AuthGrpc.class) {
        result = serviceDescriptor;
        if (result == null) {
          serviceDescriptor = result = io.grpc.ServiceDescriptor.newBuilder(SERVICE_NAME)
              .setSchemaDescriptor(new AuthFileDescriptorSupplier())
              .addMethod(getLoginMethod())
              .addMethod(getRenewMethod())
              .build();
        }
      }
    }
    return result;
  }
}
