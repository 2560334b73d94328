package io.cairndb.kv;

import io.cairndb.kv.proto.KVGrpc;
import io.cairndb.kv.proto.RequestHeader;
import io.cairndb.kv.proto.StoreInfoRequest;
import io.cairndb.kv.proto.StoreInfoResponse;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.StatusRuntimeException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLSocketFactory;

/**
 * Sends each request to the node that should serve it and retries what may
 * be retried, as the Go client does (client/route.go):
 *
 * <ul>
 *   <li>cairn lite (no topology): round robin over the helper hosts,
 *       skipping hosts that failed in the last second.
 *   <li>a replicated store: writes and ABSOLUTE reads go to the shard leader
 *       (cached, else the preferred node), other reads to the handle's home
 *       replica of the shard (Retry.readOrder), or round robin over its
 *       replicas with KVStoreConfig.setSpreadReads; not_leader hints are followed, wrong_shard's
 *       moved_to_shard is adopted at once, a stale topology is refreshed.
 *   <li>a write that may have been applied is never retried (maybeApplied);
 *       CANCELLED and DEADLINE_EXCEEDED are never retried; others back off
 *       10 ms doubling to 500 ms, with jitter, while the deadline allows.
 * </ul>
 *
 * Thread-safe: one Router serves every thread of a store handle.
 */
final class Router {
  /** One RPC on calls whose deadline is set, with the request's header. */
  interface Attempt<T> {
    T call(Calls stub, RequestHeader header);
  }

  static final long INITIAL_BACKOFF = TimeUnit.MILLISECONDS.toNanos(10);
  private static final long MAX_BACKOFF = TimeUnit.MILLISECONDS.toNanos(500);
  private static final int ATTEMPT_SHARE = 3;
  private static final long REFRESH_ATTEMPT = TimeUnit.SECONDS.toNanos(1);
  private static final long MIN_REFRESH_INTERVAL = TimeUnit.MILLISECONDS.toNanos(50);

  final String store;
  private final long connectTimeout;
  private final List<String> hosts;
  private final List<Conn> helpers = new ArrayList<>();
  private final Map<String, Conn> conns = new ConcurrentHashMap<>();
  private final AtomicInteger rr = new AtomicInteger();
  /** KVStoreConfig.setSpreadReads: replica reads round robin, not to this handle's home replica. */
  private final boolean spreadReads;
  /** KVStoreConfig.setUnaryCalls: no call streams. */
  private final boolean unaryCalls;
  /** KVStoreConfig.setCallSocket: calls on the nodes' call sockets. */
  private final boolean callSocket;
  /** TLS for the call sockets of a secure store; null: plaintext. */
  private final SSLSocketFactory socketTLS;
  /** This handle's ranking of the nodes (Retry.readOrder). */
  private final long salt = ThreadLocalRandom.current().nextLong();
  private volatile boolean closed;
  Cluster cluster; // null for cairn lite; set once by open()
  /** The store's max_put_many_records (StoreInfo), set once by open(). */
  volatile int maxPutManyRecords = 1;

  Router(String store, List<String> hosts, long connectTimeoutNanos, String caFile, Session session,
      boolean spreadReads, boolean unaryCalls, boolean callSocket) {
    this.store = store;
    this.callSocket = callSocket;
    this.spreadReads = spreadReads;
    this.unaryCalls = unaryCalls;
    this.hosts = hosts;
    this.connectTimeout = connectTimeoutNanos;
    this.tls = caFile == null ? null : tlsContext(caFile);
    this.socketTLS = caFile == null || !callSocket ? null : Tls.socketFactory(caFile);
    this.session = session;
    for (String h : hosts) {
      helpers.add(conn(h));
    }
  }

  /** TLS to a secure store, the server verified against the store CA alone; null: plaintext. */
  private final SslContext tls;
  /** The login to a secure store; null without credentials. */
  final Session session;

  private static SslContext tlsContext(String caFile) {
    try {
      return GrpcSslContexts.forClient().trustManager(new java.io.File(caFile)).protocols("TLSv1.3").build();
    } catch (javax.net.ssl.SSLException | IllegalArgumentException e) {
      throw new IllegalArgumentException("the store CA " + caFile + ": " + e.getMessage(), e);
    }
  }

  Conn conn(String addr) {
    Conn c = conns.get(addr);
    if (c != null) {
      return c;
    }
    synchronized (conns) {
      if (closed) {
        throw Errors.closed();
      }
      return conns.computeIfAbsent(addr, a -> new Conn(a, tls, socketTLS, session, unaryCalls, callSocket, connectTimeout));
    }
  }

  boolean closed() {
    return closed;
  }

  void close() {
    if (session != null) {
      session.close();
    }
    List<Conn> all;
    synchronized (conns) {
      closed = true;
      all = new ArrayList<>(conns.values());
      conns.clear();
    }
    for (Conn c : all) {
      c.close();
    }
    try {
      for (Conn c : all) {
        c.awaitClosed(TimeUnit.SECONDS.toNanos(1));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  RequestHeader header(long deadline, long seq) {
    long ms = Math.max((deadline - System.nanoTime() + 999_999) / 1_000_000, 1);
    return RequestHeader.newBuilder().setStore(store).setTimeoutMs(ms).setTopologySeq(seq).build();
  }

  /**
   * Asks the helper hosts for StoreInfo until one answers and checks its
   * store name. The answer of a replicated store carries its topology.
   */
  /** Logs in through the first helper host that answers (a wrong password is refused everywhere). */
  void login(long timeoutNanos) {
    StringBuilder failures = new StringBuilder();
    ErrorInfo last = null;
    for (Conn c : helpers) {
      try {
        session.login(c.channel(), timeoutNanos);
        return;
      } catch (StatusRuntimeException err) {
        last = Errors.fromStatus(err, false);
        if (last.code == Status.Code.UNAUTHENTICATED || last.code == Status.Code.PERMISSION_DENIED) {
          throw last.toException();
        }
        failures.append(failures.length() == 0 ? "" : "; ").append(c.addr).append(": ").append(last.text);
      }
    }
    ErrorInfo e = ErrorInfo.of("login: no host answered: " + failures, last.code, last.kind, last.action);
    e.cause = last.cause;
    throw e.toException();
  }

  /**
   * StoreInfo from c within timeoutNanos: on its call socket when it has
   * one, so that opening a store needs no gRPC channel; else, and from a
   * node that takes no store_info on its socket (an older one answers
   * INVALID_ARGUMENT), unary gRPC.
   */
  static StoreInfoResponse storeInfo(Conn c, long timeoutNanos) {
    long deadline = System.nanoTime() + timeoutNanos;
    if (c.socket != null && !c.socket.off()) {
      try {
        return c.socket.call(Wire.STORE_INFO, Wire.body(StoreInfoRequest.getDefaultInstance()),
            StoreInfoResponse.parser()::parseFrom, deadline);
      } catch (CallStream.NoStream e) {
        // the node has no call socket: gRPC below
      } catch (StatusRuntimeException e) {
        if (e.getStatus().getCode() != Status.Code.INVALID_ARGUMENT) {
          throw e;
        }
      }
    }
    return c.stub().withDeadlineAfter(Math.max(deadline - System.nanoTime(), 1), TimeUnit.NANOSECONDS)
        .storeInfo(StoreInfoRequest.getDefaultInstance());
  }

  StoreInfoResponse checkStore(long timeoutNanos) {
    long deadline = System.nanoTime() + timeoutNanos;
    StringBuilder failures = new StringBuilder();
    ErrorInfo answered = null;
    ErrorInfo last = null;
    for (Conn c : helpers) {
      StoreInfoResponse resp;
      try {
        resp = storeInfo(c, Math.max(deadline - System.nanoTime(), 1_000_000));
      } catch (StatusRuntimeException err) {
        last = Errors.fromStatus(err, false);
        failures.append(failures.length() == 0 ? "" : "; ").append(c.addr).append(": ").append(last.text);
        if (answered == null && last.code != Status.Code.UNAVAILABLE && last.code != Status.Code.DEADLINE_EXCEEDED) {
          answered = last;
        }
        continue;
      }
      if (!resp.getStore().equals(store)) {
        throw ErrorInfo.of("node " + c.addr + " serves store \"" + resp.getStore() + "\", not \"" + store + "\"",
            Status.Code.FAILED_PRECONDITION, "store_mismatch", FaultException.Action.FIX_INPUT).toException();
      }
      return resp;
    }
    ErrorInfo src = answered != null ? answered : last;
    ErrorInfo e = ErrorInfo.of((answered != null ? "" : "no host answered: ") + failures, src.code, src.kind,
        src.action);
    e.cause = src.cause;
    throw e.toException();
  }

  /**
   * Runs the attempt until it succeeds, fails in a way that must not be
   * retried, or the deadline leaves no room for another try.
   */
  <T> T call(Route rt, Attempt<T> fn, long timeoutNanos) {
    if (closed) {
      throw Errors.closed();
    }
    long deadline = System.nanoTime() + timeoutNanos;
    return cluster != null ? callCluster(rt, fn, deadline) : callLite(rt, fn, deadline);
  }

  private <T> T callLite(Route rt, Attempt<T> fn, long deadline) {
    long[] backoff = {INITIAL_BACKOFF};
    int n = helpers.size();
    while (true) {
      Conn conn = pickHelper(n);
      ErrorInfo e;
      try {
        return fn.call(withDeadline(conn, deadline - System.nanoTime()), header(deadline, 0));
      } catch (StatusRuntimeException err) {
        e = failure(err, rt.write);
      }
      if (e.code == Status.Code.UNAVAILABLE && e.kind.isEmpty()) {
        conn.markFailing();
      }
      if (!Retry.retryable(e, rt.write) || !Retry.sleep(deadline, backoff)) {
        throw e.toException();
      }
      conn.reconnectNow();
    }
  }

  private Conn pickHelper(int n) {
    int start = rr.getAndIncrement() & Integer.MAX_VALUE;
    if (n == 1) {
      return helpers.get(0);
    }
    long now = System.nanoTime();
    for (int i = 0; i < n; i++) { // skip failing hosts while another one is not
      Conn c = helpers.get((start + i) % n);
      if (!c.transientFailure() && !c.failing(now)) {
        return c;
      }
    }
    return helpers.get(start % n);
  }

  private ErrorInfo failure(StatusRuntimeException err, boolean write) {
    if (closed) {
      throw Errors.closed();
    }
    return Errors.fromStatus(err, write);
  }

  /** The calls with the attempt's deadline; the deadline passed before sending is a RequestTimeoutException. */
  private static Calls withDeadline(Conn c, long nanos) {
    if (nanos <= 0) {
      throw ErrorInfo.of("the deadline passed before the request was sent", Status.Code.DEADLINE_EXCEEDED, "",
          FaultException.Action.NONE).toException();
    }
    return c.calls(System.nanoTime() + nanos);
  }

  private long[] replicasOf(Route rt, Topology t) {
    switch (rt.target) {
      case KEY:
        return t.shards.get(t.shardFor(rt.key)).replicas;
      case SHARD: {
        Topology.Shard sh = t.shards.get(rt.shard);
        if (sh == null) {
          throw ErrorInfo.of("shard " + rt.shard + " is not in the store's topology (seq " + t.seq + ") any more",
              Status.Code.FAILED_PRECONDITION, "wrong_shard", FaultException.Action.NONE).toException();
        }
        return sh.replicas;
      }
      default:
        return t.nodes.keySet().stream().mapToLong(Long::longValue).sorted().toArray();
    }
  }

  private <T> T callCluster(Route rt, Attempt<T> fn, long deadline) {
    Cluster cl = cluster;
    Map<Long, Boolean> avoid = new HashMap<>();
    Map<Long, ErrorInfo> seen = new HashMap<>();
    long[] backoff = {INITIAL_BACKOFF};
    ErrorInfo last = null;
    boolean pause = false;
    int quick = 0;
    while (true) {
      Topology t = cl.topology();
      long shard = rt.target == Route.Target.KEY ? t.shardFor(rt.key) : rt.shard;
      long[] reps = replicasOf(rt, t);
      long now = System.nanoTime();
      Map<Long, Boolean> usable = new HashMap<>();
      boolean any = false;
      for (long r : reps) {
        boolean u = !conn(t.nodes.get(r)).failing(now);
        usable.put(r, u);
        any |= u && !avoid.containsKey(r);
      }
      if (!any) {
        avoid.clear(); // every reachable replica failed this round
        pause = true;
      }
      if (quick > 2 * reps.length) {
        pause = true; // hints lead in circles (an election is under way)
      }
      if (pause && last != null) {
        if (!Retry.sleep(deadline, backoff)) {
          throw Retry.shardFailure(last, shard, reps, rt.leader, seen).toException();
        }
        quick = 0;
      }
      pause = false;
      Topology.Shard sh = t.shards.get(shard);
      long[] reads = rt.leader ? reps
          : Retry.readOrder(reps, salt, spreadReads ? rr.getAndIncrement() & Integer.MAX_VALUE : -1);
      long node = Retry.choose(reps, rt.leader, cl.leader(shard), sh == null ? 0 : sh.preferred, rt.stick,
          usable, avoid, reads);
      Conn conn = conn(t.nodes.get(node));
      long remaining = deadline - System.nanoTime();
      ErrorInfo e;
      if (!conn.waitConnecting(Math.min(connectTimeout, remaining))) {
        e = ErrorInfo.of("no connection to node " + node + " (" + conn.addr + ") within "
            + TimeUnit.NANOSECONDS.toMillis(connectTimeout) + " ms", Status.Code.UNAVAILABLE, "",
            FaultException.Action.RETRY); // the request was never sent
      } else {
        conn.reconnectNow();
        long attempt = rt.bounded ? remaining / ATTEMPT_SHARE : remaining;
        try {
          T resp = fn.call(withDeadline(conn, attempt), header(deadline, t.seq));
          if (rt.leader && shard != 0) {
            cl.setLeader(shard, node);
          }
          rt.stick = node;
          return resp;
        } catch (StatusRuntimeException err) {
          e = failure(err, rt.write);
          if (rt.bounded && e.code == Status.Code.DEADLINE_EXCEEDED && System.nanoTime() < deadline) {
            e = ErrorInfo.of("node " + node + " (" + conn.addr + ") did not answer within "
                + TimeUnit.NANOSECONDS.toMillis(attempt) + " ms", Status.Code.UNAVAILABLE, "",
                FaultException.Action.RETRY);
            e.noAnswer = true;
          }
        }
      }
      last = e;
      seen.put(node, e);
      quick++;
      switch (Retry.classify(e, rt.write)) {
        case GIVE_UP:
          if (e.code == Status.Code.DEADLINE_EXCEEDED) {
            throw Retry.shardFailure(e, shard, reps, rt.leader, seen).toException();
          }
          throw e.toException();
        case FOLLOW_LEADER: {
          avoid.put(node, true);
          cl.forgetLeader(shard, node);
          long hint = e.leaderNode;
          if (hint == 0 || hint == node) {
            break;
          }
          if (!usable.containsKey(hint)) {
            refresh(t.seq, deadline);
          } else if (usable.get(hint)) {
            cl.setLeader(shard, hint);
            avoid.remove(hint);
          }
          break;
        }
        case TRY_ELSEWHERE:
          conn.markFailing();
          avoid.put(node, true);
          cl.forgetLeader(shard, node);
          break;
        case OTHER_REPLICA:
          avoid.put(node, true);
          cl.forgetLeader(shard, node);
          break;
        case REFRESH:
          if (e.kind.equals("wrong_shard") && rt.target == Route.Target.KEY
              && cl.moved(t, rt.key, e.movedToShard, e.partitions)) {
            continue; // the partition moved: its new shard, at once
          }
          refresh(t.seq, deadline);
          if (e.kind.equals("wrong_shard")) {
            avoid.put(node, true);
            cl.forgetLeader(shard, node);
          }
          pause = true;
          break;
        default:
          pause = true;
      }
    }
  }

  /**
   * Asks the store's nodes, then the helper hosts, for StoreInfo and installs
   * the first answer (client/topology.go refreshTopology). At most one
   * refresh per 50 ms, and none if a newer topology than seenSeq is in.
   */
  void refresh(long seenSeq, long deadline) {
    Cluster cl = cluster;
    synchronized (cl.refreshLock) {
      Topology t = cl.topology();
      long now = System.nanoTime();
      if (t.seq > seenSeq || (cl.lastRefreshNanos != 0 && now - cl.lastRefreshNanos < MIN_REFRESH_INTERVAL)) {
        return;
      }
      cl.lastRefreshNanos = now;
      List<String> addrs = new ArrayList<>();
      for (String a : t.nodes.values()) {
        if (!conn(a).failing(now)) {
          addrs.add(a);
        }
      }
      addrs.addAll(hosts);
      for (String a : addrs) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return;
        }
        try {
          StoreInfoResponse resp = storeInfo(conn(a), Math.min(REFRESH_ATTEMPT, left));
          if (resp.getStore().equals(store)) {
            cl.install(resp);
            return;
          }
        } catch (StatusRuntimeException | IllegalStateException ignored) {
          // this node cannot tell: ask the next one
        }
      }
    }
  }

  /** The cached leader of the shard that owns key (0: unknown or lite). */
  long shardOf(Key k) {
    Cluster cl = cluster;
    return cl == null ? 0 : cl.topology().shardFor(k);
  }

  static long jitter(long backoff) {
    return backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1);
  }
}
