package io.cairndb.kv;

/** A record read by an iterator: its key, value and version. */
public class KeyValueVersion {
  private final Key key;
  private final Value value;
  private final Version version;
  private final long expirationTime;

  KeyValueVersion(Key key, Value value, Version version, long expirationTime) {
    this.key = key;
    this.value = value;
    this.version = version;
    this.expirationTime = expirationTime;
  }

  public Key getKey() {
    return key;
  }

  /** The value (null for a keys-only iterator). */
  public Value getValue() {
    return value;
  }

  public Version getVersion() {
    return version;
  }

  /** When the record expires, in Unix milliseconds; 0 if it never does. */
  public long getExpirationTime() {
    return expirationTime;
  }

  @Override
  public String toString() {
    return "KeyValueVersion(" + key + ", " + value + ", " + version + ")";
  }
}
