package io.cairndb.kv;

/**
 * Asks a write to return what the record held before it, as
 * {@code oracle.kv.ReturnValueVersion}: pass one in, and after the write
 * {@link #getValue} and {@link #getVersion} hold the previous record's value
 * and version (null where none existed or where the choice did not ask).
 * One instance per call; not thread-safe.
 */
public class ReturnValueVersion extends ValueVersion {
  /** What to return about the previous record. */
  public enum Choice {
    NONE(io.cairndb.kv.proto.ReturnValueVersion.RETURN_VALUE_VERSION_NONE),
    VALUE(io.cairndb.kv.proto.ReturnValueVersion.RETURN_VALUE_VERSION_VALUE),
    VERSION(io.cairndb.kv.proto.ReturnValueVersion.RETURN_VALUE_VERSION_VERSION),
    ALL(io.cairndb.kv.proto.ReturnValueVersion.RETURN_VALUE_VERSION_ALL);

    final io.cairndb.kv.proto.ReturnValueVersion pb;

    Choice(io.cairndb.kv.proto.ReturnValueVersion pb) {
      this.pb = pb;
    }
  }

  private final Choice choice;
  private Value prevValue;
  private Version prevVersion;

  public ReturnValueVersion(Choice choice) {
    super(null, null);
    if (choice == null) {
      throw new IllegalArgumentException("ReturnValueVersion: the choice is null");
    }
    this.choice = choice;
  }

  public Choice getReturnChoice() {
    return choice;
  }

  @Override
  public Value getValue() {
    return prevValue;
  }

  @Override
  public Version getVersion() {
    return prevVersion;
  }

  void set(io.cairndb.kv.proto.OperationResult r) {
    boolean exists = r.getPreviousExists();
    prevValue = exists && (choice == Choice.VALUE || choice == Choice.ALL)
        ? Value.createValue(r.getPreviousValue().toByteArray()) : null;
    prevVersion = exists ? Version.of(r.getPreviousVersion()) : null;
  }

  static io.cairndb.kv.proto.ReturnValueVersion pb(ReturnValueVersion r) {
    return r == null ? io.cairndb.kv.proto.ReturnValueVersion.RETURN_VALUE_VERSION_UNSPECIFIED : r.choice.pb;
  }
}
