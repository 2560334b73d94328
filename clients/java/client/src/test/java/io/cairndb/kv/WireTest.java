package io.cairndb.kv;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnknownFieldSet;
import io.cairndb.kv.proto.CallsRequest;
import io.cairndb.kv.proto.CallsResponse;
import io.cairndb.kv.proto.GetRequest;
import io.cairndb.kv.proto.MultiGetRequest;
import io.cairndb.kv.proto.MultiGetResponse;
import io.cairndb.kv.proto.Record;
import io.cairndb.kv.proto.StreamAnswer;
import io.cairndb.kv.proto.StreamCall;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Wire's hand-made codec against the generated classes: the same bytes
 * must mean the same calls, answers and records. Randomized: the seed is
 * printed, and -Dcairn.seed=N replays one.
 */
class WireTest {
  private static final String[] PARTS = {"u", "user", "é", "\uD83D\uDE00", "", "a/b", "x"};

  private static long seed() {
    String s = System.getProperty("cairn.seed");
    long seed = s != null ? Long.parseLong(s) : System.nanoTime();
    System.out.println("WireTest seed " + seed + " (replay: -Dcairn.seed=" + seed + ")");
    return seed;
  }

  /** A frame Wire writes is the CallsRequest the generated classes write, with its length in front. */
  @Test
  void frameIsACallsRequest() throws IOException {
    MultiGetRequest req = MultiGetRequest.newBuilder().setParent(Key.createKey("user", "f").pb()).setKeysOnly(true)
        .setResume(ByteString.copyFromUtf8("r")).build();
    for (String token : Arrays.asList(null, "tok-é")) {
      byte[] b = Wire.frame(300, Wire.MULTI_GET, Wire.body(req), token);
      int n = (b[0] & 0xff) << 24 | (b[1] & 0xff) << 16 | (b[2] & 0xff) << 8 | (b[3] & 0xff);
      assertEquals(b.length - 4, n, "the frame's length");
      CallsRequest got = CallsRequest.parseFrom(Arrays.copyOfRange(b, 4, b.length));
      StreamCall.Builder want = StreamCall.newBuilder().setId(300).setMultiGet(req);
      if (token != null) {
        want.setToken(token);
      }
      assertEquals(CallsRequest.newBuilder().addCalls(want).build(), got);
    }
  }

  /** find skips other calls' answers, and reads a status answer whole through the generated class. */
  @Test
  void findsItsAnswer() throws IOException {
    CallsResponse r = CallsResponse.newBuilder()
        .addAnswers(StreamAnswer.newBuilder().setId(7).setMultiGet(MultiGetResponse.getDefaultInstance()))
        .addAnswers(StreamAnswer.newBuilder().setId(9).setCode(5).setMessage("no such thing"))
        .addAnswers(StreamAnswer.newBuilder().setId(8).setGet(io.cairndb.kv.proto.GetResponse.newBuilder()
            .setFound(true)))
        .build();
    byte[] b = r.toByteArray();
    Wire.Answer a = new Wire.Answer();
    assertFalse(Wire.find(b, b.length, 10, a), "an answer to a call not in the frame");
    assertTrue(Wire.find(b, b.length, 8, a));
    assertEquals(8, a.id);
    assertEquals(Wire.GET + Wire.ANSWER_OP, a.op);
    assertTrue(io.cairndb.kv.proto.GetResponse.parseFrom(Arrays.copyOfRange(b, a.off, a.off + a.len)).getFound());
    assertTrue(Wire.find(b, b.length, 9, a));
    assertEquals(5, a.code);
    assertEquals("no such thing", a.parse(b).getMessage());
    assertTrue(Wire.find(b, b.length, 7, a));
    assertEquals(Wire.MULTI_GET + Wire.ANSWER_OP, a.op);
    assertEquals(0, a.len, "an empty response");
    byte[] bad = Arrays.copyOf(b, b.length - 1);
    assertThrows(InvalidProtocolBufferException.class, () -> Wire.find(bad, bad.length, 8, a), "a truncated frame");
  }

  /** Random pages decode as the generated classes decode them, sharing the parent's major path when equal. */
  @Test
  void pagesDecodeAsGenerated() throws IOException {
    Random rnd = new Random(seed());
    for (int round = 0; round < 500; round++) {
      Key parent = Key.createKey(randomPath(rnd, 1 + rnd.nextInt(3)));
      boolean keysOnly = rnd.nextInt(4) == 0;
      MultiGetResponse.Builder m = MultiGetResponse.newBuilder();
      int n = rnd.nextInt(12);
      for (int i = 0; i < n; i++) {
        m.addRecords(randomRecord(rnd, parent, keysOnly));
      }
      if (rnd.nextBoolean()) {
        m.setResume(ByteString.copyFromUtf8("resume-" + round));
      }
      byte[] body = withUnknownFields(rnd, m.build());
      byte[] buf = new byte[body.length + 10]; // the response sits inside a larger frame
      System.arraycopy(body, 0, buf, 5, body.length);
      Wire.Shape shape = new Wire.Shape(rnd.nextInt(5) == 0 ? null : parent, keysOnly);
      Multi.Page got = Wire.page(buf, 5, body.length, shape);
      MultiGetResponse gen = MultiGetResponse.parseFrom(body);
      Multi.Page want = Multi.Page.of(gen.getRecordsList(), gen.getResume(), shape);
      assertEquals(want.resume, got.resume, "round " + round);
      assertEquals(want.records.size(), got.records.size(), "round " + round);
      for (int i = 0; i < want.records.size(); i++) {
        KeyValueVersion w = want.records.get(i);
        KeyValueVersion g = got.records.get(i);
        String at = "round " + round + " record " + i + " " + w.getKey();
        assertEquals(w.getKey(), g.getKey(), at);
        assertEquals(0, w.getKey().compareTo(g.getKey()), at);
        assertEquals(w.getVersion(), g.getVersion(), at);
        assertEquals(w.getExpirationTime(), g.getExpirationTime(), at);
        if (keysOnly) {
          assertNull(g.getValue(), at);
        } else {
          assertArrayEquals(w.getValue().getValue(), g.getValue().getValue(), at);
        }
        if (shape.major != null && g.getKey().getMajorPath().equals(parent.getMajorPath())) {
          assertSame(parent.getMajorPath(), g.getKey().getMajorPath(), "not shared: " + at);
        } else {
          assertNotSame(parent.getMajorPath(), g.getKey().getMajorPath(), at);
        }
      }
    }
  }

  /**
   * A key component that is not UTF-8 is an error (the server sends none;
   * the generated classes would decode it with replacement characters).
   */
  @Test
  void rejectsBadUtf8() {
    byte[] bad = {(byte) 0xc3, (byte) 0x28};
    for (int field : new int[] {1, 2}) {
      ByteArrayOutputStream key = new ByteArrayOutputStream();
      writeBytes(key, 1, "user".getBytes(java.nio.charset.StandardCharsets.UTF_8));
      writeBytes(key, field, bad);
      ByteArrayOutputStream rec = new ByteArrayOutputStream();
      writeBytes(rec, 1, key.toByteArray());
      ByteArrayOutputStream resp = new ByteArrayOutputStream();
      writeBytes(resp, 1, rec.toByteArray());
      byte[] b = resp.toByteArray();
      Wire.Shape shape = new Wire.Shape(Key.createKey(List.of("user", "v")), false);
      assertThrows(InvalidProtocolBufferException.class, () -> Wire.page(b, 0, b.length, shape), "field " + field);
    }
  }

  private static List<String> randomPath(Random rnd, int n) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(PARTS[rnd.nextInt(PARTS.length)] + (rnd.nextBoolean() ? "" : Integer.toString(rnd.nextInt(3))));
    }
    return out;
  }

  /** Mostly under parent's major path; else one component changed, one more, or one fewer. */
  private static Record randomRecord(Random rnd, Key parent, boolean keysOnly) {
    List<String> major = new ArrayList<>(parent.getMajorPath());
    switch (rnd.nextInt(6)) {
      case 0:
        major.set(rnd.nextInt(major.size()), PARTS[rnd.nextInt(PARTS.length)] + "~");
        break;
      case 1:
        major.add(PARTS[rnd.nextInt(PARTS.length)]);
        break;
      case 2:
        if (major.size() > 1) {
          major.remove(major.size() - 1);
        }
        break;
      default:
        break;
    }
    io.cairndb.kv.proto.Key.Builder k = Key.createKey(major, randomPath(rnd, rnd.nextInt(3))).pb().toBuilder();
    Record.Builder r = Record.newBuilder();
    if (rnd.nextInt(4) == 0) {
      k.setUnknownFields(unknown(rnd));
      r.setUnknownFields(unknown(rnd));
    }
    r.setKey(k);
    if (!keysOnly && rnd.nextInt(5) != 0) {
      byte[] v = new byte[rnd.nextInt(200)];
      rnd.nextBytes(v);
      r.setValue(ByteString.copyFrom(v));
    }
    if (rnd.nextInt(5) != 0) {
      r.setVersion(ByteString.copyFrom(new byte[] {1, (byte) rnd.nextInt(), 3}));
    }
    if (rnd.nextInt(3) == 0) {
      r.setExpirationMs(rnd.nextLong() & Long.MAX_VALUE);
    }
    return r.build();
  }

  /** A field no version of kv.proto has: a varint or bytes. */
  private static UnknownFieldSet unknown(Random rnd) {
    UnknownFieldSet.Field f = rnd.nextBoolean()
        ? UnknownFieldSet.Field.newBuilder().addVarint(rnd.nextInt(1000)).build()
        : UnknownFieldSet.Field.newBuilder().addLengthDelimited(ByteString.copyFromUtf8("?")).build();
    return UnknownFieldSet.newBuilder().addField(12 + rnd.nextInt(4), f).build();
  }

  /** m's bytes, sometimes with a field no version of kv.proto has, in front. */
  private static byte[] withUnknownFields(Random rnd, MultiGetResponse m) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    if (rnd.nextBoolean()) {
      writeBytes(out, 15, new byte[] {9, 9});
      CodedOutputStream o = CodedOutputStream.newInstance(out);
      o.writeUInt64(14, 77);
      o.flush();
    }
    m.writeTo(out);
    return out.toByteArray();
  }

  private static void writeBytes(ByteArrayOutputStream out, int field, byte[] b) {
    try {
      CodedOutputStream o = CodedOutputStream.newInstance(out);
      o.writeByteArray(field, b);
      o.flush();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /** A multi-get's request written by hand is the generated MultiGetRequest's bytes, field for field. */
  @Test
  void multiGetCallsEncodeAsGenerated() throws IOException {
    Random rnd = new Random(seed());
    Consistency[] cons = {Consistency.NONE_REQUIRED, Consistency.ABSOLUTE,
        new Consistency.Time(5, java.util.concurrent.TimeUnit.SECONDS, 1, java.util.concurrent.TimeUnit.SECONDS)};
    KeyRange[] ranges = {null, new KeyRange("a", true, "c\u00e9", false), new KeyRange("pre")};
    Depth[] depths = {null, Depth.CHILDREN_ONLY, Depth.PARENT_AND_CHILDREN, Depth.DESCENDANTS_ONLY,
        Depth.PARENT_AND_DESCENDANTS};
    for (int round = 0; round < 300; round++) {
      Key parent = Key.createKey(randomPath(rnd, 1 + rnd.nextInt(3)), randomPath(rnd, rnd.nextInt(3)));
      KeyRange range = ranges[rnd.nextInt(ranges.length)];
      MultiGetCall c = new MultiGetCall(parent, range == null ? null : range.pb, depths[rnd.nextInt(depths.length)],
          rnd.nextBoolean() ? Direction.FORWARD : Direction.REVERSE, rnd.nextBoolean(),
          rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(1000), cons[rnd.nextInt(cons.length)].pb);
      io.cairndb.kv.proto.RequestHeader h = io.cairndb.kv.proto.RequestHeader.newBuilder().setStore("kvstore")
          .setTimeoutMs(rnd.nextInt(10_000)).setTopologySeq(rnd.nextInt(3)).build();
      c.with(h, rnd.nextBoolean() ? ByteString.EMPTY : ByteString.copyFromUtf8("resume-" + round));
      byte[] b = new byte[c.size()];
      CodedOutputStream o = CodedOutputStream.newInstance(b);
      c.writeTo(o);
      o.checkNoSpaceLeft();
      MultiGetRequest want = c.toProto();
      assertEquals(want, MultiGetRequest.parseFrom(b), "round " + round);
      assertArrayEquals(want.toByteArray(), b, "round " + round + ": not the generated bytes");
    }
  }

  /**
   * Damaged frames (bytes flipped, cut short, or random) fail with an
   * IOException, which the call socket reports as a broken link, and never
   * with another exception.
   */
  @Test
  void damagedFramesFailAsIO() throws IOException {
    Random rnd = new Random(seed());
    Key parent = Key.createKey(List.of("user", "u1"));
    MultiGetResponse.Builder m = MultiGetResponse.newBuilder();
    for (int i = 0; i < 4; i++) {
      m.addRecords(randomRecord(rnd, parent, false));
    }
    byte[] good = CallsResponse.newBuilder().addAnswers(StreamAnswer.newBuilder().setId(3).setMultiGet(m)).build()
        .toByteArray();
    Wire.Shape shape = new Wire.Shape(parent, false);
    for (int round = 0; round < 20_000; round++) {
      byte[] b;
      switch (round % 3) {
        case 0:
          b = good.clone();
          for (int k = 1 + rnd.nextInt(3); k > 0; k--) {
            b[rnd.nextInt(b.length)] = (byte) rnd.nextInt(256);
          }
          break;
        case 1:
          b = Arrays.copyOf(good, rnd.nextInt(good.length));
          break;
        default:
          b = new byte[rnd.nextInt(64)];
          rnd.nextBytes(b);
          break;
      }
      try {
        Wire.Answer a = new Wire.Answer();
        if (Wire.find(b, b.length, 3, a) && a.code == 0) {
          Wire.page(b, a.off, a.len, shape);
        }
      } catch (IOException expected) {
        // a broken link
      } catch (RuntimeException e) {
        throw new AssertionError("round " + round + ": " + e + " on " + Arrays.toString(b), e);
      }
    }
  }

  /** An empty request still names its op: the field is written with no bytes. */
  @Test
  void emptyRequestFrames() throws IOException {
    byte[] b = Wire.frame(1, Wire.GET, Wire.body(GetRequest.getDefaultInstance()), null);
    CallsRequest got = CallsRequest.parseFrom(Arrays.copyOfRange(b, 4, b.length));
    assertEquals(StreamCall.OpCase.GET, got.getCalls(0).getOpCase(), "an empty request still names its op");
  }
}
