package io.cairndb.kv;

import io.cairndb.kv.proto.AuthGrpc;
import io.cairndb.kv.proto.LoginRequest;
import io.cairndb.kv.proto.LoginResponse;
import io.cairndb.kv.proto.RenewRequest;
import io.cairndb.kv.proto.RenewResponse;
import io.grpc.CallCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A login to a secure store (docs/design/20261127_security.md §4): the session token that every call carries as
 * {@code authorization: Bearer TOKEN} (these are the stubs' call credentials), renewed in the background at two
 * thirds of its lifetime, and made again by a new login if a renewal is refused (client/session.go).
 */
final class Session extends CallCredentials {
  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private final String user;
  private final String password;
  private volatile String token = "";
  private volatile AuthGrpc.AuthBlockingStub auth;
  private final ScheduledExecutorService renewer = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "cairn-session-renew");
    t.setDaemon(true);
    return t;
  });

  Session(String user, String password) {
    this.user = user;
    this.password = password;
  }

  @Override
  public void applyRequestMetadata(RequestInfo info, Executor executor, MetadataApplier applier) {
    Metadata md = new Metadata();
    String t = token;
    if (!t.isEmpty()) {
      md.put(AUTHORIZATION, "Bearer " + t);
    }
    applier.apply(md);
  }

  /** The current token ("" before the login). */
  String token() {
    return token;
  }

  /** Logs in through channel; throws the refusal. */
  void login(ManagedChannel channel, long timeoutNanos) {
    AuthGrpc.AuthBlockingStub stub = AuthGrpc.newBlockingStub(channel);
    LoginResponse r = stub.withDeadlineAfter(timeoutNanos, TimeUnit.NANOSECONDS)
        .login(LoginRequest.newBuilder().setUser(user).setPassword(password).build());
    auth = stub;
    set(r.getToken(), r.getExpiresAtMs());
  }

  private void set(String tok, long expiresAtMs) {
    token = tok;
    long life = Math.max(expiresAtMs - System.currentTimeMillis(), 300);
    if (!renewer.isShutdown()) {
      renewer.schedule(this::renew, life * 2 / 3, TimeUnit.MILLISECONDS);
    }
  }

  private void renew() {
    AuthGrpc.AuthBlockingStub stub = auth.withDeadlineAfter(5, TimeUnit.SECONDS);
    try {
      RenewResponse r = stub.renew(RenewRequest.newBuilder().setToken(token).build());
      set(r.getToken(), r.getExpiresAtMs());
      return;
    } catch (StatusRuntimeException refused) {
      // the user or its role changed, or the token ran out: log in again
    }
    try {
      LoginResponse r = stub.login(LoginRequest.newBuilder().setUser(user).setPassword(password).build());
      set(r.getToken(), r.getExpiresAtMs());
    } catch (StatusRuntimeException e) {
      if (!renewer.isShutdown()) {
        renewer.schedule(this::renew, 1, TimeUnit.SECONDS); // calls fail with the node's reason meanwhile
      }
    }
  }

  void close() {
    renewer.shutdownNow();
  }
}
