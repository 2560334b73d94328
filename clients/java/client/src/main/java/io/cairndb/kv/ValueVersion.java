package io.cairndb.kv;

/** A record's value and version, and when it expires. */
public class ValueVersion {
  private final Value value;
  private final Version version;
  private final long expirationTime;

  /** A value and version that never expire. */
  public ValueVersion(Value value, Version version) {
    this(value, version, 0);
  }

  ValueVersion(Value value, Version version, long expirationTime) {
    this.value = value;
    this.version = version;
    this.expirationTime = expirationTime;
  }

  /** The value (null for a keys-only read). */
  public Value getValue() {
    return value;
  }

  /** The version. */
  public Version getVersion() {
    return version;
  }

  /** When the record expires, in Unix milliseconds; 0 if it never does. */
  public long getExpirationTime() {
    return expirationTime;
  }

  @Override
  public String toString() {
    return "ValueVersion(" + value + ", " + version + ")";
  }
}
