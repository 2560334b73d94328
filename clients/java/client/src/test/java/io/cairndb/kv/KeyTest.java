package io.cairndb.kv;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The shared vectors of api/testdata/keys.json, as the Go and Python clients check them. */
class KeyTest {
  private static JsonObject vectors() throws IOException {
    Path p = Path.of(System.getProperty("user.dir")).resolve("../../../api/testdata/keys.json").normalize();
    return JsonParser.parseString(Files.readString(p)).getAsJsonObject();
  }

  private static List<String> strings(JsonArray a) {
    List<String> out = new ArrayList<>();
    a.forEach(e -> out.add(e.getAsString()));
    return out;
  }

  @Test
  void stringFormHashAndPartitions() throws IOException {
    JsonArray keys = vectors().getAsJsonArray("keys");
    assertTrue(keys.size() > 20, "too few vectors");
    for (JsonElement e : keys) {
      JsonObject v = e.getAsJsonObject();
      String text = v.get("text").getAsString();
      Key k = Key.createKey(strings(v.getAsJsonArray("major")), strings(v.getAsJsonArray("minor")));
      assertEquals(text, k.toString(), "print");
      assertEquals(k, Key.fromString(text), "parse " + text);
      long want = Long.parseUnsignedLong(v.get("hash").getAsString());
      assertEquals(want, k.majorHash(), "hash of " + text);
      for (Map.Entry<String, JsonElement> p : v.getAsJsonObject("partitions").entrySet()) {
        assertEquals(p.getValue().getAsInt(), Partitions.partitionOf(want, Integer.parseInt(p.getKey())),
            text + " among " + p.getKey());
      }
    }
  }

  @Test
  void parseVectors() throws IOException {
    for (JsonElement e : vectors().getAsJsonArray("parse")) {
      JsonObject v = e.getAsJsonObject();
      String in = v.get("input").getAsString();
      if (v.has("text")) {
        assertEquals(v.get("text").getAsString(), Key.fromString(in).toString(), "parse " + in);
      } else {
        InvalidArgumentException err = assertThrows(InvalidArgumentException.class, () -> Key.fromString(in), in);
        assertEquals("malformed_key", err.getKind());
        assertEquals(FaultException.Action.FIX_INPUT, err.getAction());
      }
    }
  }

  @Test
  void orderAndBadInput() {
    Key a = Key.fromString("/a/-/b");
    assertTrue(a.compareTo(Key.fromString("/a/-/b/c")) < 0, "a parent sorts before its children");
    assertTrue(Key.fromString("/a/-/\uFFFF").compareTo(Key.fromString("/a/-/\uD83D\uDE42")) < 0,
        "components order by UTF-8 bytes, not UTF-16 units");
    assertThrows(IllegalArgumentException.class, () -> Key.createKey(List.of(), List.of()));
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class,
        () -> Key.createKey("x\uD800"));
    assertEquals("invalid_key", e.getKind());
    assertThrows(IllegalArgumentException.class, () -> new KeyRange("z", true, "a", true));
    assertEquals("01ff", Version.fromString("01ff").toString());
    assertThrows(InvalidArgumentException.class, () -> Version.fromString("xyz"));
  }

  /** A key as the client parses it from a response. */
  private static io.cairndb.kv.proto.Key wire(List<String> major, String minor) {
    try {
      return io.cairndb.kv.proto.Key.parseFrom(Key.createKey(major, List.of(minor)).pb().toByteArray());
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw new AssertionError(e);
    }
  }

  /** A key read under a parent's major path shares the parent's list only when the bytes match, and orders the same. */
  @Test
  void fromPbSharesTheParentsMajorPath() {
    Key parent = Key.createKey(List.of("user", "é\uD83D\uDE00"));
    byte[][] utf8 = parent.majorUtf8();
    Key same = Key.fromPb(wire(List.of("user", "é\uD83D\uDE00"), "f1"), parent, utf8);
    assertSame(parent.getMajorPath(), same.getMajorPath(), "equal major path not shared");
    for (List<String> other : List.of(List.of("user", "é"), List.of("user", "é\uD83D\uDE00", "x"), List.of("usex", "é\uD83D\uDE00"))) {
      Key k = Key.fromPb(wire(other, "f1"), parent, utf8);
      assertNotSame(parent.getMajorPath(), k.getMajorPath(), other.toString());
      assertEquals(other, k.getMajorPath());
      Key plain = Key.createKey(other, List.of("f1"));
      assertEquals(Integer.signum(plain.compareTo(same)), Integer.signum(k.compareTo(same)), other.toString());
      assertEquals(0, k.compareTo(plain), other.toString());
    }
    Key a = Key.fromPb(wire(List.of("user", "é\uD83D\uDE00"), "a"), parent, utf8);
    assertTrue(a.compareTo(same) < 0 && same.compareTo(a) > 0, "minor order under a shared major path");
  }

  /** compareUtf8 orders as the strings' UTF-8 bytes do, on random strings mixing ASCII, BMP and supplementary chars. */
  @Test
  void compareUtf8IsByteOrder() {
    String p = System.getProperty("cairn.seed");
    long seed = p != null ? Long.parseLong(p) : System.nanoTime();
    System.out.println("KeyTest seed " + seed + " (replay: -Dcairn.seed=" + seed + ")");
    java.util.Random rnd = new java.util.Random(seed);
    int[] pool = {'a', 'b', 0x7f, 0xe9, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xfffd, 0xffff, 0x10000, 0x1f600, 0x10ffff};
    for (int round = 0; round < 20_000; round++) {
      String a = randomString(rnd, pool);
      String b = rnd.nextInt(4) == 0 ? a + randomString(rnd, pool) : randomString(rnd, pool);
      int want = Integer.signum(java.util.Arrays.compareUnsigned(a.getBytes(java.nio.charset.StandardCharsets.UTF_8),
          b.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
      assertEquals(want, Integer.signum(Key.compareUtf8(a, b)), "seed " + seed + ": " + a + " vs " + b);
      assertEquals(-want, Integer.signum(Key.compareUtf8(b, a)), "seed " + seed + ": " + b + " vs " + a);
    }
  }

  private static String randomString(java.util.Random rnd, int[] pool) {
    StringBuilder sb = new StringBuilder();
    for (int n = rnd.nextInt(4); n > 0; n--) {
      sb.appendCodePoint(pool[rnd.nextInt(pool.length)]);
    }
    return sb.toString();
  }
}
