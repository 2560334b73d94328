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

/**
 * The KV calls one attempt makes, with the attempt's deadline, named as
 * grpc-java's blocking stub names them. Each fails with the
 * StatusRuntimeException the unary RPC would throw.
 */
interface Calls {
  GetResponse get(GetRequest r);

  /** The page of records r asks for, their keys and values built as shape says. */
  Multi.Page multiGet(MultiGetCall r, Wire.Shape shape);

  WriteResponse put(PutRequest r);

  WriteResponse delete(DeleteRequest r);

  ExecuteResponse execute(ExecuteRequest r);

  PutManyResponse putMany(PutManyRequest r);

  MultiDeleteResponse multiDelete(MultiDeleteRequest r);

  StoreScanResponse storeScan(StoreScanRequest r);

  /** Every call a unary RPC on stub (whose deadline is set). */
  static Calls unary(KVGrpc.KVBlockingStub stub) {
    return new Calls() {
      @Override
      public GetResponse get(GetRequest r) {
        return stub.get(r);
      }

      @Override
      public Multi.Page multiGet(MultiGetCall r, Wire.Shape shape) {
        MultiGetResponse m = stub.multiGet(r.toProto());
        return Multi.Page.of(m.getRecordsList(), m.getResume(), shape);
      }

      @Override
      public WriteResponse put(PutRequest r) {
        return stub.put(r);
      }

      @Override
      public WriteResponse delete(DeleteRequest r) {
        return stub.delete(r);
      }

      @Override
      public ExecuteResponse execute(ExecuteRequest r) {
        return stub.execute(r);
      }

      @Override
      public PutManyResponse putMany(PutManyRequest r) {
        return stub.putMany(r);
      }

      @Override
      public MultiDeleteResponse multiDelete(MultiDeleteRequest r) {
        return stub.multiDelete(r);
      }

      @Override
      public StoreScanResponse storeScan(StoreScanRequest r) {
        return stub.storeScan(r);
      }
    };
  }
}
