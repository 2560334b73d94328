package io.cairndb.ycsb;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import site.ycsb.ByteIterator;
import site.ycsb.RandomByteIterator;
import site.ycsb.StringByteIterator;

/** The value layout against records written by Go's cairn bench (resources/golden, from ../golden.sh). */
class RecordCodecTest {
  private static String[] names(int n) {
    String[] s = new String[n];
    for (int i = 0; i < n; i++) {
      s[i] = "field" + i;
    }
    return s;
  }

  /** YCSB's buildDeterministicValue(key, field) cut to size, as cairn bench writes with dataintegrity=true. */
  private static String deterministic(String key, String field, int size) {
    StringBuilder sb = new StringBuilder(key).append(':').append(field);
    while (sb.length() < size) {
      sb.append(':').append(sb.toString().hashCode());
    }
    sb.setLength(size);
    return sb.toString();
  }

  private static byte[] resource(String name) throws IOException {
    try (InputStream in = RecordCodecTest.class.getResourceAsStream("/golden/" + name)) {
      if (in == null) {
        throw new IOException("missing test resource golden/" + name);
      }
      return in.readAllBytes();
    }
  }

  @Test
  void goldenRecordsFromGo() throws Exception {
    String list = new String(resource("records.txt"), StandardCharsets.UTF_8);
    int checked = 0;
    for (String line : list.split("\n")) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      String[] w = line.trim().split(" ");
      String file = w[0], key = w[2];
      int fc = Integer.parseInt(w[3]), fl = Integer.parseInt(w[4]);
      byte[] golden = resource(file);
      String[] known = names(fc);
      RecordCodec codec = new RecordCodec(known);
      RecordCodec.Fields f = new RecordCodec.Fields();
      codec.decode(golden, f);
      assertEquals(fc, f.count, file + ": field count");
      String[] gotNames = new String[f.count];
      byte[][] gotValues = new byte[f.count][];
      Map<String, ByteIterator> asYcsb = new LinkedHashMap<>();
      for (int i = 0; i < f.count; i++) {
        gotNames[i] = f.names[i];
        gotValues[i] = f.value(i);
        assertTrue(Arrays.asList(known).contains(f.names[i]), file + ": unexpected field " + f.names[i]);
        int k = Arrays.asList(known).indexOf(f.names[i]);
        assertSame(known[k], f.names[i], file + ": known names are returned interned");
        assertEquals(deterministic(key, f.names[i], fl), new String(gotValues[i], StandardCharsets.UTF_8),
            file + ": value of " + f.names[i]);
        asYcsb.put(f.names[i], new StringByteIterator(new String(gotValues[i], StandardCharsets.UTF_8)));
      }
      // Java writes the same bytes as Go, from arrays and from YCSB's iterators.
      assertArrayEquals(golden, codec.encode(gotNames, gotValues, f.count), file + ": re-encoded");
      assertArrayEquals(golden, codec.encode(asYcsb), file + ": encoded from ByteIterators");
      checked++;
    }
    assertEquals(4, checked, "golden records checked");
  }

  @Test
  void defaultRecordSizeWithRandomValues() throws Exception {
    // RandomByteIterator.nextBuf writes in 6-byte steps, past the value's end
    // when the array is longer: the next field must overwrite that, not shift.
    String[] known = names(10);
    RecordCodec codec = new RecordCodec(known);
    Map<String, ByteIterator> values = new LinkedHashMap<>();
    for (String n : known) {
      values.put(n, new RandomByteIterator(100));
    }
    byte[] b = codec.encode(values);
    assertEquals(1082, b.length, "1 + 1 + 10*(1+6+1+100)");
    RecordCodec.Fields f = new RecordCodec.Fields();
    codec.decode(b, f);
    assertEquals(10, f.count);
    for (int i = 0; i < 10; i++) {
      assertSame(known[i], f.names[i]);
      assertEquals(100, f.lengths[i]);
      for (byte c : f.value(i)) {
        assertTrue(c >= 32 && c <= 127, "RandomByteIterator's bytes are 32..127");
      }
    }
  }

  @Test
  void unknownNamesLargeAndEmptyValues() throws Exception {
    RecordCodec codec = new RecordCodec(names(2));
    byte[] big = new byte[300];
    Arrays.fill(big, (byte) 0xff);
    String[] n = {"field0", "field1", "other", "ünï"};
    byte[][] v = {"a".getBytes(StandardCharsets.UTF_8), new byte[0], big, {1, 2}};
    byte[] b = codec.encode(n, v, 4);
    // 1 version + 1 count + field0 (1+6+1+1) + field1 (1+6+1) + other (1+5+2+300) + ünï (1+5+1+2).
    assertEquals(1 + 1 + 9 + 8 + 308 + 9, b.length);
    RecordCodec.Fields f = new RecordCodec.Fields();
    codec.decode(b, f);
    assertEquals(4, f.count);
    for (int i = 0; i < 4; i++) {
      assertEquals(n[i], f.names[i]);
      assertArrayEquals(v[i], f.value(i));
    }
  }

  @Test
  void mergeReplacesThenAppends() throws Exception {
    RecordCodec codec = new RecordCodec(names(3));
    byte[] old = codec.encode(new String[] {"field0", "field1", "field2"},
        new byte[][] {{'a'}, {'b'}, {'c'}}, 3);
    RecordCodec.Fields f = new RecordCodec.Fields();
    codec.decode(old, f);
    byte[] merged = codec.merge(f, new String[] {"extra", "field1"}, new byte[][] {{'x'}, {'B', 'B'}}, 2);
    byte[] want = codec.encode(new String[] {"field0", "field1", "field2", "extra"},
        new byte[][] {{'a'}, {'B', 'B'}, {'c'}, {'x'}}, 4);
    assertArrayEquals(want, merged);
  }

  @Test
  void rejectsWhatGoRejects() throws Exception {
    RecordCodec codec = new RecordCodec(names(1));
    byte[] good = codec.encode(new String[] {"f"}, new byte[][] {{'v'}}, 1);
    Map<String, byte[]> bad = new LinkedHashMap<>();
    bad.put("empty", new byte[0]);
    byte[] version = good.clone();
    version[0] = 2;
    bad.put("version", version);
    bad.put("truncated", Arrays.copyOf(good, good.length - 1));
    bad.put("trailing", Arrays.copyOf(good, good.length + 1));
    bad.put("huge count", new byte[] {1, (byte) 0xff, (byte) 0xff, 3});
    bad.put("long length", new byte[] {1, 1, 50, 'x'});
    bad.put("non-minimal count", new byte[] {1, (byte) 0x81, 0});
    bad.put("non-minimal length", new byte[] {1, 1, (byte) 0x81, 0, 'f', 0});
    bad.put("overflowing uvarint", new byte[] {1, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff,
        (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 2});
    bad.put("negative length", new byte[] {1, 1, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff,
        (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff, 1});
    List<String> accepted = new ArrayList<>();
    for (Map.Entry<String, byte[]> e : bad.entrySet()) {
      try {
        codec.decode(e.getValue(), new RecordCodec.Fields());
        accepted.add(e.getKey());
      } catch (RecordCodec.BadRecordException expected) {
        assertTrue(expected.getMessage().startsWith("value is not a record"), expected.getMessage());
      }
    }
    assertEquals(List.of(), accepted, "malformed records decoded without error");
    codec.decode(good, new RecordCodec.Fields());
  }

  @Test
  void uvarintRoundTrip() throws Exception {
    for (long v : new long[] {0, 1, 127, 128, 300, 16383, 16384, Integer.MAX_VALUE, Long.MAX_VALUE, -1L}) {
      byte[] b = new byte[10];
      int end = RecordCodec.putUvarint(b, 0, v);
      assertEquals(RecordCodec.uvarintSize(v), end, "size of " + v);
      int[] pos = {0};
      assertEquals(v, RecordCodec.uvarint(Arrays.copyOf(b, end), pos));
      assertEquals(end, pos[0]);
    }
    assertThrows(RecordCodec.BadRecordException.class, () -> RecordCodec.uvarint(new byte[] {(byte) 0x80}, new int[1]));
    assertFalse(RecordCodec.uvarintSize(128) == 1);
  }
}
