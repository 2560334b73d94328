package io.cairndb.kv;

import io.cairndb.kv.proto.ExecuteRequest;
import io.cairndb.kv.proto.ExecuteResponse;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;

/** execute(): one atomic batch of writes under one major path. */
final class Batch {
  private Batch() {}

  static List<OperationResult> execute(StoreImpl s, List<Operation> ops, Durability d, long ttlMs, long timeoutNanos)
      throws OperationExecutionException {
    if (ops == null || ops.isEmpty()) {
      throw new IllegalArgumentException("execute: no operations");
    }
    ExecuteRequest.Builder req = ExecuteRequest.newBuilder().setDurability(s.durability(d));
    List<String> major = null;
    for (int i = 0; i < ops.size(); i++) {
      Operation o = ops.get(i);
      if (!(o instanceof Op)) {
        throw new IllegalArgumentException("execute: operation " + i + " was not made by an OperationFactory");
      }
      Key k = o.getKey();
      if (major == null) {
        major = k.getMajorPath();
      } else if (!major.equals(k.getMajorPath())) {
        throw new InvalidArgumentException("execute: operation " + i + " key " + k + " and operation 0 key "
            + ops.get(0).getKey() + " have different major paths; an atomic batch must stay within one major path",
            "multiple_major_paths");
      }
      req.addOps(((Op) o).pb(ttlMs));
    }
    ExecuteResponse resp = s.router.call(Route.write(ops.get(0).getKey()),
        (stub, h) -> stub.execute(req.setHeader(h).build()), timeoutNanos);
    if (!resp.getCommitted()) {
      int i = resp.getFailedIndex();
      if (i < 0 || i >= ops.size()) {
        throw internal("execute: server reported failed operation " + i + " of " + ops.size());
      }
      Op op = (Op) ops.get(i);
      throw new OperationExecutionException(op, i, new Result(resp.getFailedResult(), op.returnChoice()));
    }
    if (resp.getResultsCount() != ops.size()) {
      throw internal("execute: server returned " + resp.getResultsCount() + " results for " + ops.size() + " ops");
    }
    List<OperationResult> out = new ArrayList<>(ops.size());
    for (int i = 0; i < ops.size(); i++) {
      out.add(new Result(resp.getResults(i), ((Op) ops.get(i)).returnChoice()));
    }
    return out;
  }

  private static FaultException internal(String msg) {
    return new FaultException(ErrorInfo.of(msg, Status.Code.INTERNAL, "", FaultException.Action.NONE));
  }
}
