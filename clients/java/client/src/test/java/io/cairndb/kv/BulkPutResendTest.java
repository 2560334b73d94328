package io.cairndb.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.cairndb.kv.proto.ErrorDetail;
import io.cairndb.kv.proto.KVGrpc;
import io.cairndb.kv.proto.Limits;
import io.cairndb.kv.proto.OperationResult;
import io.cairndb.kv.proto.PutManyRequest;
import io.cairndb.kv.proto.PutManyResponse;
import io.cairndb.kv.proto.PutManyResult;
import io.cairndb.kv.proto.PutOp;
import io.cairndb.kv.proto.StoreInfoRequest;
import io.cairndb.kv.proto.StoreInfoResponse;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * putMany against a scripted gRPC server (this test's fake, not a store): a record refused for a
 * reason that passes, certainly not applied, is sent again; one whose outcome is unknown, or that
 * the server refused for good, keeps its error.
 */
class BulkPutResendTest {
  private static ErrorDetail detail(String kind, ErrorDetail.Action a, boolean maybeApplied) {
    return ErrorDetail.newBuilder().setKind(kind).setAction(a).setMaybeApplied(maybeApplied).build();
  }

  /** The scripted server: each key's queue of refusals, then success; every request's keys. */
  static final class Scripted extends KVGrpc.KVImplBase {
    final Map<String, Deque<ErrorDetail>> refusals = new HashMap<>();
    final List<List<String>> sent = new ArrayList<>();

    @Override
    public void storeInfo(StoreInfoRequest req, StreamObserver<StoreInfoResponse> out) {
      out.onNext(StoreInfoResponse.newBuilder().setStore(Procs.STORE).setPartitions(4).setVersion("fake")
          .setLimits(Limits.newBuilder().setMaxKeyBytes(10 << 10).setMaxValueBytes(4 << 20).setMaxComponents(64)
              .setMaxPutManyRecords(100))
          .build());
      out.onCompleted();
    }

    @Override
    public synchronized void putMany(PutManyRequest req, StreamObserver<PutManyResponse> out) {
      PutManyResponse.Builder resp = PutManyResponse.newBuilder();
      List<String> keys = new ArrayList<>();
      for (PutOp op : req.getOpsList()) {
        String k = String.join("/", op.getKey().getMajorList());
        keys.add(k);
        Deque<ErrorDetail> q = refusals.get(k);
        if (q != null && !q.isEmpty()) {
          ErrorDetail d = q.poll();
          resp.addResults(PutManyResult.newBuilder().setErrorCode(Status.Code.UNAVAILABLE.value())
              .setErrorMessage(d.getKind()).setDetail(d));
          continue;
        }
        resp.addResults(PutManyResult.newBuilder()
            .setResult(OperationResult.newBuilder().setSuccess(true).setNewVersion(op.getKey().getMajorBytes(0))));
      }
      sent.add(keys);
      out.onNext(resp.build());
      out.onCompleted();
    }
  }

  @Test
  void resendsWhatPasses() throws Exception {
    Scripted kv = new Scripted();
    ErrorDetail.Action retry = ErrorDetail.Action.ACTION_RETRY;
    kv.refusals.put("dropped", new ArrayDeque<>(List.of(detail("dropped", retry, false))));
    kv.refusals.put("moving", new ArrayDeque<>(List.of(detail("partition_moving", retry, false),
        detail("partition_moving", retry, false))));
    kv.refusals.put("moved", new ArrayDeque<>(List.of(detail("wrong_shard", ErrorDetail.Action.ACTION_REFRESH, false))));
    kv.refusals.put("unknown", new ArrayDeque<>(List.of(detail("outcome_unknown", ErrorDetail.Action.ACTION_NONE, true))));
    kv.refusals.put("timeout", new ArrayDeque<>(List.of(detail("ack_timeout", retry, true))));
    kv.refusals.put("big", new ArrayDeque<>(List.of(detail("limit_exceeded", ErrorDetail.Action.ACTION_FIX_INPUT, false))));
    Server srv = ServerBuilder.forPort(0).addService(kv).build().start();
    List<String> names = List.of("ok", "dropped", "moving", "moved", "unknown", "timeout", "big");
    try (KVStore store = KVStoreFactory.getStore(new KVStoreConfig(Procs.STORE, "127.0.0.1:" + srv.getPort())
        .setCallSocket(false).setUnaryCalls(true))) {
      List<KeyValue> recs = new ArrayList<>();
      for (String n : names) {
        recs.add(new KeyValue(Key.createKey(List.of(n)), Value.createValue(new byte[] {1})));
      }
      BulkPutResult r = store.putMany(recs.iterator(), new BulkWriteOptions().setMaxRequestsInFlight(1));
      Map<String, String> failed = Map.of("unknown", "outcome_unknown", "timeout", "ack_timeout");
      for (int i = 0; i < names.size(); i++) {
        String n = names.get(i);
        RuntimeException e = r.getError(i);
        if (n.equals("big")) { // bad input: its own exception, as Oracle's
          assertTrue(e instanceof InvalidArgumentException, n + ": " + e);
          assertEquals("limit_exceeded", ((InvalidArgumentException) e).getKind(), n);
        } else if (failed.containsKey(n)) {
          assertTrue(e instanceof FaultException, n + ": " + e);
          assertEquals(failed.get(n), ((FaultException) e).getKind(), n);
        } else {
          assertNull(e, n);
          assertEquals(Version.of(com.google.protobuf.ByteString.copyFromUtf8(n)), r.getVersion(i), n);
        }
      }
      assertEquals(List.of(names, List.of("dropped", "moving", "moved"), List.of("moving")), kv.sent);
    } finally {
      srv.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  /**
   * Refuses every record as dropped: the first request at once, the second after delayMs, and
   * holds the third and later until released.
   */
  static final class Stalling extends KVGrpc.KVImplBase {
    final CountDownLatch release = new CountDownLatch(1);
    final long delayMs;
    int requests;

    Stalling(long delayMs) {
      this.delayMs = delayMs;
    }

    @Override
    public void storeInfo(StoreInfoRequest req, StreamObserver<StoreInfoResponse> out) {
      new Scripted().storeInfo(req, out);
    }

    @Override
    public void putMany(PutManyRequest req, StreamObserver<PutManyResponse> out) {
      int n;
      synchronized (this) {
        n = ++requests;
      }
      try {
        release.await(n == 1 ? 0 : n == 2 ? delayMs : 60_000, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      PutManyResponse.Builder resp = PutManyResponse.newBuilder();
      for (int i = 0; i < req.getOpsCount(); i++) {
        resp.addResults(PutManyResult.newBuilder().setErrorCode(Status.Code.UNAVAILABLE.value())
            .setErrorMessage("dropped").setDetail(detail("dropped", ErrorDetail.Action.ACTION_RETRY, false)));
      }
      out.onNext(resp.build());
      out.onCompleted();
    }
  }

  /**
   * The resend deadline is the first round's end plus the timeout (2 s). The second round answers
   * after 1.6 s; the third would wait its own whole timeout (ending near 3.6 s) if a resend were
   * not bounded by what is left of the deadline (ending near 2 s).
   */
  @Test
  void resendsEndWithinTheTimeout() throws Exception {
    Stalling kv = new Stalling(1600);
    Server srv = ServerBuilder.forPort(0).addService(kv).build().start();
    try (KVStore store = KVStoreFactory.getStore(new KVStoreConfig(Procs.STORE, "127.0.0.1:" + srv.getPort())
        .setCallSocket(false).setUnaryCalls(true).setRequestTimeout(2, TimeUnit.SECONDS))) {
      List<KeyValue> recs = List.of(new KeyValue(Key.createKey(List.of("slow")), Value.createValue(new byte[] {1})));
      long start = System.nanoTime();
      BulkPutResult r = store.putMany(recs.iterator(), new BulkWriteOptions().setMaxRequestsInFlight(1));
      long tookMs = (System.nanoTime() - start) / 1_000_000;
      assertTrue(r.getError(0) instanceof FaultException, "the record's error: " + r.getError(0));
      synchronized (kv) {
        assertEquals(3, kv.requests, "requests");
      }
      assertTrue(tookMs < 2800, "putMany took " + tookMs + " ms with a 2 s timeout");
    } finally {
      kv.release.countDown();
      srv.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }
}
