package io.cairndb.kv;

import java.util.Arrays;

/**
 * A record's value: opaque bytes. The array passed to {@link #createValue} is
 * not copied, and {@link #getValue} returns the same array: do not change it
 * while the value is in use.
 */
public final class Value {
  static final Value EMPTY = new Value(new byte[0]);

  private final byte[] bytes;

  private Value(byte[] bytes) {
    this.bytes = bytes;
  }

  /** A value holding {@code bytes} (not copied). */
  public static Value createValue(byte[] bytes) {
    if (bytes == null) {
      throw new IllegalArgumentException("a value's bytes are null (use an empty array)");
    }
    return new Value(bytes);
  }

  /** The bytes (not a copy). */
  public byte[] getValue() {
    return bytes;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Value && Arrays.equals(((Value) o).bytes, bytes);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(bytes);
  }

  @Override
  public String toString() {
    return "Value(" + bytes.length + " bytes)";
  }
}
