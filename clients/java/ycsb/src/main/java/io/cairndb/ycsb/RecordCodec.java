package io.cairndb.ycsb;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import site.ycsb.ByteIterator;

/**
 * The value layout of {@code cairn bench} (internal/bench/layout.go): a whole
 * YCSB record stored as one value under the key {@code /<table>/<key>}.
 *
 * <pre>
 * +------+-----------------+-------------------------------------------------+
 * | 0x01 | uvarint nfields | nfields times:                                  |
 * |      |                 | uvarint len(name) | name | uvarint len(v) | v    |
 * +------+-----------------+-------------------------------------------------+
 * </pre>
 *
 * <p>0x01 is the format version; uvarints are unsigned LEB128 (Go's
 * encoding/binary), and only their minimal encoding is accepted, so a record
 * has exactly one encoding. Names are UTF-8. Fields appear in the order
 * written. YCSB's default record (10 fields "field0".."field9" of 100 bytes)
 * is 1 + 1 + 10*(1+6+1+100) = 1082 bytes.
 *
 * <p>An instance keeps scratch space and is used by one thread (YCSB gives
 * each client thread its own {@link CairnClient}). Decoding does not copy
 * values: {@link Fields} holds offsets into the stored bytes, and a name
 * equal to one of the known names is returned as that very String.
 */
final class RecordCodec {
  /** The format version, the first byte of every record. */
  static final int VERSION = 0x01;

  private final String[] known;
  private final byte[][] knownUtf8;

  // Scratch for merge: the parts of the record being written.
  private byte[][] partName = new byte[16][];
  private byte[][] partSrc = new byte[16][];
  private int[] partOff = new int[16];
  private int[] partLen = new int[16];

  /** knownNames are returned interned by decode (YCSB's field names). */
  RecordCodec(String[] knownNames) {
    known = knownNames.clone();
    knownUtf8 = new byte[known.length][];
    for (int i = 0; i < known.length; i++) {
      knownUtf8[i] = known[i].getBytes(StandardCharsets.UTF_8);
    }
  }

  /** The fields of a decoded record: names, and values as slices of {@link #record}. */
  static final class Fields {
    byte[] record;
    int count;
    String[] names = new String[16];
    int[] offsets = new int[16];
    int[] lengths = new int[16];

    void add(String name, int off, int len) {
      if (count == names.length) {
        int n = count * 2;
        names = Arrays.copyOf(names, n);
        offsets = Arrays.copyOf(offsets, n);
        lengths = Arrays.copyOf(lengths, n);
      }
      names[count] = name;
      offsets[count] = off;
      lengths[count] = len;
      count++;
    }

    /** The value of field i, copied. */
    byte[] value(int i) {
      return Arrays.copyOfRange(record, offsets[i], offsets[i] + lengths[i]);
    }
  }

  /** Thrown when stored bytes are not a record in the value layout. */
  static final class BadRecordException extends Exception {
    BadRecordException(String msg) {
      super("value is not a record in cairn bench's value layout: " + msg);
    }
  }

  // ---- decoding

  /** Decodes b into out (which then refers to b). */
  void decode(byte[] b, Fields out) throws BadRecordException {
    out.record = b;
    out.count = 0;
    if (b.length == 0 || b[0] != VERSION) {
      throw new BadRecordException(b.length == 0 ? "empty" : "format version " + (b[0] & 0xff) + ", want 1");
    }
    int[] pos = {1};
    long n = uvarint(b, pos);
    if (n > b.length - 1) {
      throw new BadRecordException("field count " + Long.toUnsignedString(n) + " exceeds the record's " + b.length + " bytes");
    }
    for (long i = 0; i < n; i++) {
      int nameLen = chunk(b, pos);
      int nameOff = pos[0];
      pos[0] += nameLen;
      int valLen = chunk(b, pos);
      out.add(name(b, nameOff, nameLen, out.count), pos[0], valLen);
      pos[0] += valLen;
    }
    if (pos[0] != b.length) {
      throw new BadRecordException((b.length - pos[0]) + " trailing bytes");
    }
  }

  /** Reads a uvarint length at pos[0] and checks that many bytes follow it. */
  private static int chunk(byte[] b, int[] pos) throws BadRecordException {
    long n = uvarint(b, pos);
    if (n < 0 || n > b.length - pos[0]) {
      throw new BadRecordException("length " + Long.toUnsignedString(n) + " at offset " + pos[0] + " runs past the end");
    }
    return (int) n;
  }

  /** Go's binary.Uvarint, accepting only the minimal encoding. */
  static long uvarint(byte[] b, int[] pos) throws BadRecordException {
    long x = 0;
    int p = pos[0];
    for (int i = 0; i < 10; i++) {
      if (p >= b.length) {
        throw new BadRecordException("truncated uvarint");
      }
      int c = b[p++] & 0xff;
      if (c < 0x80) {
        if (i == 9 && c > 1) {
          throw new BadRecordException("uvarint overflows 64 bits");
        }
        if (c == 0 && i > 0) {
          throw new BadRecordException("uvarint not minimally encoded");
        }
        pos[0] = p;
        return x | (long) c << (7 * i);
      }
      x |= (long) (c & 0x7f) << (7 * i);
    }
    throw new BadRecordException("uvarint overflows 64 bits");
  }

  /** The known name equal to b[off:off+len] (trying hint first), else a new String. */
  private String name(byte[] b, int off, int len, int hint) {
    int k = known.length;
    for (int j = 0; j < k; j++) {
      int i = (hint + j) % k;
      byte[] kb = knownUtf8[i];
      if (kb.length == len && Arrays.equals(kb, 0, len, b, off, off + len)) {
        return known[i];
      }
    }
    return new String(b, off, len, StandardCharsets.UTF_8);
  }

  // ---- encoding

  /** The UTF-8 bytes of name (shared for known names). */
  private byte[] utf8(String name) {
    for (int i = 0; i < known.length; i++) {
      if (known[i] == name) {
        return knownUtf8[i];
      }
    }
    for (int i = 0; i < known.length; i++) {
      if (known[i].equals(name)) {
        return knownUtf8[i];
      }
    }
    return name.getBytes(StandardCharsets.UTF_8);
  }

  static int uvarintSize(long v) {
    int n = 1;
    while ((v & ~0x7fL) != 0) {
      v >>>= 7;
      n++;
    }
    return n;
  }

  static int putUvarint(byte[] b, int p, long v) {
    while ((v & ~0x7fL) != 0) {
      b[p++] = (byte) ((v & 0x7f) | 0x80);
      v >>>= 7;
    }
    b[p++] = (byte) v;
    return p;
  }

  /**
   * Encodes YCSB's values, consuming each iterator once. The result is
   * allocated at its exact size and the values are written into it directly
   * (ByteIterator.nextBuf), with no intermediate copy.
   */
  byte[] encode(Map<String, ByteIterator> values) {
    int n = values.size();
    long size = 1 + uvarintSize(n);
    for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
      int nl = utf8(e.getKey()).length;
      long vl = e.getValue().bytesLeft();
      size += uvarintSize(nl) + nl + uvarintSize(vl) + vl;
    }
    if (size > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("record of " + size + " bytes is too large");
    }
    byte[] b = new byte[(int) size];
    b[0] = VERSION;
    int p = putUvarint(b, 1, n);
    for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
      byte[] name = utf8(e.getKey());
      ByteIterator it = e.getValue();
      int vl = (int) it.bytesLeft();
      p = putUvarint(b, p, name.length);
      System.arraycopy(name, 0, b, p, name.length);
      p += name.length;
      p = putUvarint(b, p, vl);
      // nextBuf fills from p up to the array's end or the iterator's end;
      // bytes it may write past this value are overwritten by the next field.
      int end = it.nextBuf(b, p);
      if (end != p + vl) {
        throw new IllegalStateException("field " + e.getKey() + ": iterator gave " + (end - p) + " bytes, said " + vl);
      }
      p = end;
    }
    return b;
  }

  /** Encodes names[i] = values[i] for i < n, in order. */
  byte[] encode(String[] names, byte[][] values, int n) {
    ensureParts(n);
    for (int i = 0; i < n; i++) {
      setPart(i, utf8(names[i]), values[i], 0, values[i].length);
    }
    return writeParts(n);
  }

  /**
   * Encodes old with each field named in upd replaced by its new value, then
   * the fields of upd that old did not have, in upd's order (as cairn bench's
   * mergeFields).
   */
  byte[] merge(Fields old, String[] updNames, byte[][] updValues, int nUpd) {
    ensureParts(old.count + nUpd);
    int n = 0;
    for (int i = 0; i < old.count; i++) {
      String name = old.names[i];
      int j = indexOf(updNames, nUpd, name);
      if (j >= 0) {
        setPart(n++, utf8(name), updValues[j], 0, updValues[j].length);
      } else {
        setPart(n++, utf8(name), old.record, old.offsets[i], old.lengths[i]);
      }
    }
    for (int j = 0; j < nUpd; j++) {
      if (indexOf(old.names, old.count, updNames[j]) < 0) {
        setPart(n++, utf8(updNames[j]), updValues[j], 0, updValues[j].length);
      }
    }
    return writeParts(n);
  }

  private static int indexOf(String[] names, int n, String name) {
    for (int i = 0; i < n; i++) {
      if (names[i] == name || names[i].equals(name)) {
        return i;
      }
    }
    return -1;
  }

  private void ensureParts(int n) {
    if (partName.length < n) {
      int c = Math.max(n, partName.length * 2);
      partName = new byte[c][];
      partSrc = new byte[c][];
      partOff = new int[c];
      partLen = new int[c];
    }
  }

  private void setPart(int i, byte[] name, byte[] src, int off, int len) {
    partName[i] = name;
    partSrc[i] = src;
    partOff[i] = off;
    partLen[i] = len;
  }

  private byte[] writeParts(int n) {
    long size = 1 + uvarintSize(n);
    for (int i = 0; i < n; i++) {
      size += uvarintSize(partName[i].length) + partName[i].length + uvarintSize(partLen[i]) + partLen[i];
    }
    if (size > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("record of " + size + " bytes is too large");
    }
    byte[] b = new byte[(int) size];
    b[0] = VERSION;
    int p = putUvarint(b, 1, n);
    for (int i = 0; i < n; i++) {
      p = putUvarint(b, p, partName[i].length);
      System.arraycopy(partName[i], 0, b, p, partName[i].length);
      p += partName[i].length;
      p = putUvarint(b, p, partLen[i]);
      System.arraycopy(partSrc[i], partOff[i], b, p, partLen[i]);
      p += partLen[i];
      partSrc[i] = null;
    }
    return b;
  }
}
