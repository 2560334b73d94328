package io.cairndb.kv;

import io.cairndb.kv.proto.DeleteRequest;
import io.cairndb.kv.proto.ExecuteRequest;
import io.cairndb.kv.proto.ExecuteResponse;
import io.cairndb.kv.proto.GetRequest;
import io.cairndb.kv.proto.GetResponse;
import io.cairndb.kv.proto.KVGrpc;
import io.cairndb.kv.proto.MultiDeleteRequest;
import io.cairndb.kv.proto.MultiDeleteResponse;
import io.cairndb.kv.proto.MultiGetResponse;
import io.cairndb.kv.proto.PutManyRequest;
import io.cairndb.kv.proto.PutManyResponse;
import io.cairndb.kv.proto.PutRequest;
import io.cairndb.kv.proto.StoreScanRequest;
import io.cairndb.kv.proto.StoreScanResponse;
import io.cairndb.kv.proto.WriteResponse;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The calls of one attempt on a node's call socket, in Wire's frames, until
 * deadline. StoreScan is unary on the connection's stub (its deadline set
 * then; the gRPC channel opens for it), and so is a call the node took no
 * call socket for (it was not sent): the connection uses its gRPC stream
 * from then on.
 */
final class SocketCalls implements Calls {
  private final CallSocket socket;
  private final Conn conn; // its gRPC stub, opened only if a call needs it
  private final long deadline;

  SocketCalls(CallSocket socket, Conn conn, long deadline) {
    this.socket = socket;
    this.conn = conn;
    this.deadline = deadline;
  }

  private KVGrpc.KVBlockingStub stub() {
    return conn.stub().withDeadlineAfter(Math.max(deadline - System.nanoTime(), 1), TimeUnit.NANOSECONDS);
  }

  /** r as call op on the socket, its response read by dec; unary if the node has no call socket. */
  private <T> T via(int op, Wire.Body r, Wire.Decoder<T> dec, Supplier<T> unaryCall) {
    try {
      return socket.call(op, r, dec, deadline);
    } catch (CallStream.NoStream e) {
      return unaryCall.get();
    }
  }

  @Override
  public GetResponse get(GetRequest r) {
    return via(Wire.GET, Wire.body(r), GetResponse.parser()::parseFrom, () -> stub().get(r));
  }

  @Override
  public Multi.Page multiGet(MultiGetCall r, Wire.Shape shape) {
    return via(Wire.MULTI_GET, r, (b, off, len) -> Wire.page(b, off, len, shape), () -> {
      MultiGetResponse m = stub().multiGet(r.toProto());
      return Multi.Page.of(m.getRecordsList(), m.getResume(), shape);
    });
  }

  @Override
  public WriteResponse put(PutRequest r) {
    return via(Wire.PUT, Wire.body(r), WriteResponse.parser()::parseFrom, () -> stub().put(r));
  }

  @Override
  public WriteResponse delete(DeleteRequest r) {
    return via(Wire.DELETE, Wire.body(r), WriteResponse.parser()::parseFrom, () -> stub().delete(r));
  }

  @Override
  public ExecuteResponse execute(ExecuteRequest r) {
    return via(Wire.EXECUTE, Wire.body(r), ExecuteResponse.parser()::parseFrom, () -> stub().execute(r));
  }

  @Override
  public PutManyResponse putMany(PutManyRequest r) {
    return via(Wire.PUT_MANY, Wire.body(r), PutManyResponse.parser()::parseFrom, () -> stub().putMany(r));
  }

  @Override
  public MultiDeleteResponse multiDelete(MultiDeleteRequest r) {
    return via(Wire.MULTI_DELETE, Wire.body(r), MultiDeleteResponse.parser()::parseFrom, () -> stub().multiDelete(r));
  }

  @Override
  public StoreScanResponse storeScan(StoreScanRequest r) {
    return stub().storeScan(r);
  }
}
