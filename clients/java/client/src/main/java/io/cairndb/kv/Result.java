package io.cairndb.kv;

/** An {@link OperationResult} from the wire. */
final class Result implements OperationResult {
  private final boolean success;
  private final Version newVersion;
  private final Value prevValue;
  private final Version prevVersion;

  Result(io.cairndb.kv.proto.OperationResult r, ReturnValueVersion.Choice ret) {
    this.success = r.getSuccess();
    this.newVersion = Version.of(r.getNewVersion());
    boolean wantValue = ret == ReturnValueVersion.Choice.VALUE || ret == ReturnValueVersion.Choice.ALL;
    this.prevValue = r.getPreviousExists() && wantValue ? Value.createValue(r.getPreviousValue().toByteArray()) : null;
    this.prevVersion = r.getPreviousExists() ? Version.of(r.getPreviousVersion()) : null;
  }

  @Override
  public boolean getSuccess() {
    return success;
  }

  @Override
  public Version getNewVersion() {
    return newVersion;
  }

  @Override
  public Value getPreviousValue() {
    return prevValue;
  }

  @Override
  public Version getPreviousVersion() {
    return prevVersion;
  }

  @Override
  public String toString() {
    return "OperationResult(success " + success + ", new " + newVersion + ", previous " + prevVersion + ")";
  }
}
