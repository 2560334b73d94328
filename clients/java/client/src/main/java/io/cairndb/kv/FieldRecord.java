package io.cairndb.kv;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The field record: a value format Cairn's server understands, so that {@link KVStore#updateFields} and
 * {@link KVStore#mergeFields} change some fields of a record in one round trip. The bytes are those drawn in
 * api/fieldrec (Go): {@code 0x01 | uvarint n | n x (uvarint len(name) | name | uvarint len(v) | v)}, names in
 * UTF-8, fields in their order.
 */
public final class FieldRecord {
  private FieldRecord() {}

  /** The fields, in the map's iteration order, as a field record. */
  public static byte[] encode(Map<String, byte[]> fields) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(0x01);
    uvarint(out, fields.size());
    for (Map.Entry<String, byte[]> e : fields.entrySet()) {
      byte[] name = e.getKey().getBytes(StandardCharsets.UTF_8);
      uvarint(out, name.length);
      out.write(name, 0, name.length);
      uvarint(out, e.getValue().length);
      out.write(e.getValue(), 0, e.getValue().length);
    }
    return out.toByteArray();
  }

  /** The fields of a field record, in order; IllegalArgumentException if {@code b} is not one. */
  public static Map<String, byte[]> decode(byte[] b) {
    if (b.length == 0 || b[0] != 0x01) {
      throw new IllegalArgumentException("not a field record: wrong format byte");
    }
    int[] at = {1};
    long n = readUvarint(b, at);
    Map<String, byte[]> out = new LinkedHashMap<>();
    for (long i = 0; i < n; i++) {
      String name = new String(chunk(b, at), StandardCharsets.UTF_8);
      out.put(name, chunk(b, at));
    }
    if (at[0] != b.length) {
      throw new IllegalArgumentException("not a field record: " + (b.length - at[0]) + " trailing bytes");
    }
    return out;
  }

  private static byte[] chunk(byte[] b, int[] at) {
    long n = readUvarint(b, at);
    if (n > b.length - at[0]) {
      throw new IllegalArgumentException("not a field record: truncated");
    }
    byte[] v = java.util.Arrays.copyOfRange(b, at[0], at[0] + (int) n);
    at[0] += (int) n;
    return v;
  }

  private static void uvarint(ByteArrayOutputStream out, long v) {
    while ((v & ~0x7FL) != 0) {
      out.write((int) ((v & 0x7F) | 0x80));
      v >>>= 7;
    }
    out.write((int) v);
  }

  private static long readUvarint(byte[] b, int[] at) {
    long v = 0;
    int start = at[0];
    for (int shift = 0; shift < 64; shift += 7) {
      if (at[0] >= b.length) {
        throw new IllegalArgumentException("not a field record: truncated");
      }
      int c = b[at[0]++] & 0xFF;
      v |= (long) (c & 0x7F) << shift;
      if (c < 0x80) {
        if (at[0] - start > 1 && c == 0) {
          throw new IllegalArgumentException("not a field record: a length is not minimally encoded");
        }
        return v;
      }
    }
    throw new IllegalArgumentException("not a field record: a length overflows");
  }
}
