package io.cairndb.kv;

import com.google.protobuf.ByteString;
import java.util.HexFormat;

/**
 * A record's version: opaque bytes that change with every write, printed as
 * lowercase hex. Compare versions only for equality; pass one to
 * {@link KVStore#putIfVersion}, {@link KVStore#deleteIfVersion} or a
 * {@link Consistency.Version}.
 */
public final class Version {
  private final ByteString bytes;

  Version(ByteString bytes) {
    this.bytes = bytes;
  }

  /** The version with these bytes (as {@link #toByteArray} returned them). */
  public static Version fromByteArray(byte[] b) {
    if (b == null || b.length == 0) {
      throw new IllegalArgumentException("a version is non-empty bytes");
    }
    return new Version(ByteString.copyFrom(b));
  }

  /** Reads a version printed by {@link #toString}. */
  public static Version fromString(String hex) {
    byte[] b;
    try {
      b = HexFormat.of().parseHex(hex == null ? "" : hex);
    } catch (IllegalArgumentException e) {
      b = new byte[0];
    }
    if (b.length == 0) {
      throw new InvalidArgumentException("version \"" + hex + "\" is not a non-empty hex string", "malformed_version");
    }
    return new Version(ByteString.copyFrom(b));
  }

  static Version of(ByteString b) {
    return b.isEmpty() ? null : new Version(b);
  }

  ByteString bytes() {
    return bytes;
  }

  /** A copy of the version's bytes. */
  public byte[] toByteArray() {
    return bytes.toByteArray();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Version && ((Version) o).bytes.equals(bytes);
  }

  @Override
  public int hashCode() {
    return bytes.hashCode();
  }

  /** Lowercase hex. */
  @Override
  public String toString() {
    return HexFormat.of().formatHex(bytes.toByteArray());
  }
}
