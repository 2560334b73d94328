package io.cairndb.kv;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageLite;
import com.google.protobuf.WireFormat;
import io.cairndb.kv.proto.StreamAnswer;
import io.grpc.Status;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * The call socket's envelopes and the multi-get's response, encoded and
 * decoded on protobuf's CodedOutputStream and CodedInputStream instead of
 * through the generated CallsRequest, StreamCall, CallsResponse,
 * StreamAnswer and Record classes. The bytes are the same messages
 * (api/cairnpb/kv.proto); only the Java that reads and writes them is
 * smaller. The generated parsers were the largest compilations of a YCSB
 * run (Record's parser alone 32 kB of code), and every hot root of the call
 * path inlined them again (docs/benchmarks.md, "Issue 12, fifteenth").
 *
 * <pre>
 *   CallsRequest     { 1: StreamCall { 1: id, OP: request, 9: token } }
 *                    OP: 2 get, 3 multi_get, 4 put, 5 delete, 6 execute,
 *                        7 put_many, 8 multi_delete, 10 store_info
 *   CallsResponse    { 1: StreamAnswer { 1: id, 2: code, 3: message,
 *                                        4: details, OP+3: response } ... }
 *   MultiGetResponse { 1: Record { 1: Key { 1: major ..., 2: minor ... },
 *                                  2: value, 3: version, 4: expiration_ms } ...,
 *                      2: resume }
 * </pre>
 *
 * An answer that carries a status (code not 0, or the end frame's id 0) is
 * parsed whole by the generated StreamAnswer, for its details. Fields this
 * code does not know are skipped, as a generated parser skips them.
 */
final class Wire {
  static final int GET = 2;
  static final int MULTI_GET = 3;
  static final int PUT = 4;
  static final int DELETE = 5;
  static final int EXECUTE = 6;
  static final int PUT_MANY = 7;
  static final int MULTI_DELETE = 8;
  static final int STORE_INFO = 10;
  /** An answer's response field is its call's op field plus this. */
  static final int ANSWER_OP = 3;
  private static final int TOKEN = 9;
  private static final int LEN = WireFormat.WIRETYPE_LENGTH_DELIMITED;

  private Wire() {}

  /** The tag of field f, length-delimited (WireFormat.makeTag, which is not public). */
  private static int lenTag(int f) {
    return f << 3 | LEN;
  }

  /** The tag of field f, a varint. */
  private static int varintTag(int f) {
    return f << 3 | WireFormat.WIRETYPE_VARINT;
  }

  /** A call's request, as its op field's bytes. */
  interface Body {
    int size();

    void writeTo(CodedOutputStream o) throws IOException;
  }

  /** A generated request as a Body. */
  static Body body(MessageLite m) {
    return new Body() {
      @Override
      public int size() {
        return m.getSerializedSize();
      }

      @Override
      public void writeTo(CodedOutputStream o) throws IOException {
        m.writeTo(o);
      }
    };
  }

  /** Decodes a response from b[off, off+len): the answer's op field. */
  interface Decoder<T> {
    T decode(byte[] b, int off, int len) throws IOException;
  }

  /** One frame (length, then a CallsRequest of one call): call id, op field op, request req, token if not null. */
  static byte[] frame(long id, int op, Body req, String token) throws IOException {
    int n = req.size();
    long call = CodedOutputStream.computeUInt64Size(1, id) + CodedOutputStream.computeTagSize(op)
        + CodedOutputStream.computeUInt32SizeNoTag(n) + (long) n
        + (token == null ? 0 : CodedOutputStream.computeStringSize(TOKEN, token));
    long total = CodedOutputStream.computeTagSize(1) + CodedOutputStream.computeUInt32SizeNoTag((int) call) + call;
    if (call > CallSocket.MAX_FRAME || total > CallSocket.MAX_FRAME) {
      throw Status.INVALID_ARGUMENT.withDescription("call socket: a call of " + total
          + " bytes is larger than the limit of " + CallSocket.MAX_FRAME).asRuntimeException();
    }
    int t = (int) total;
    byte[] b = new byte[4 + t];
    b[0] = (byte) (t >>> 24);
    b[1] = (byte) (t >>> 16);
    b[2] = (byte) (t >>> 8);
    b[3] = (byte) t;
    CodedOutputStream o = CodedOutputStream.newInstance(b, 4, t);
    o.writeTag(1, LEN);
    o.writeUInt32NoTag((int) call);
    o.writeUInt64(1, id);
    o.writeTag(op, LEN);
    o.writeUInt32NoTag(n);
    req.writeTo(o);
    if (token != null) {
      o.writeString(TOKEN, token);
    }
    o.checkNoSpaceLeft();
    return b;
  }

  /**
   * Where one answer lies in a frame. A link keeps one and fills it for each
   * frame it reads.
   */
  static final class Answer {
    long id;
    int code;
    int op; // the response's field; 0: none sent (an empty response)
    int off; // the response's bytes
    int len;
    int start; // the whole StreamAnswer's bytes
    int size;

    /** The whole StreamAnswer, parsed by the generated class (an answer with a status). */
    StreamAnswer parse(byte[] b) throws InvalidProtocolBufferException {
      return StreamAnswer.parser().parseFrom(b, start, size);
    }
  }

  /**
   * Finds in the CallsResponse b[0, n) the answer to call want, or the end
   * frame (id 0): true and a filled, false if the frame holds neither.
   */
  static boolean find(byte[] b, int n, long want, Answer a) throws IOException {
    CodedInputStream in = CodedInputStream.newInstance(b, 0, n);
    while (!in.isAtEnd()) {
      int tag = in.readTag();
      if (tag != lenTag(1)) {
        in.skipField(tag);
        continue;
      }
      int size = in.readRawVarint32();
      int start = in.getTotalBytesRead();
      int old = in.pushLimit(size);
      answer(in, a);
      in.popLimit(old);
      if (a.id == want || a.id == 0) {
        a.start = start;
        a.size = size;
        return true;
      }
    }
    return false;
  }

  /** Reads one StreamAnswer's id, code and response field, skipping its message and details. */
  private static void answer(CodedInputStream in, Answer a) throws IOException {
    a.id = 0;
    a.code = 0;
    a.op = 0;
    a.off = 0;
    a.len = 0;
    while (!in.isAtEnd()) {
      int tag = in.readTag();
      int field = WireFormat.getTagFieldNumber(tag);
      if (tag == varintTag(1)) {
        a.id = in.readUInt64();
      } else if (tag == varintTag(2)) {
        a.code = in.readUInt32();
      } else if (field >= GET + ANSWER_OP && field <= STORE_INFO + ANSWER_OP
          && WireFormat.getTagWireType(tag) == LEN) {
        a.op = field;
        a.len = in.readRawVarint32();
        a.off = in.getTotalBytesRead();
        in.skipRawBytes(a.len);
      } else {
        in.skipField(tag);
      }
    }
  }

  /** How a page's records become KeyValueVersions. */
  static final class Shape {
    final Key major; // the major path the records most likely share; null: none
    final byte[][] majorUtf8; // its components' UTF-8
    final boolean keysOnly; // no values: KeyValueVersion.getValue is null

    Shape(Key major, boolean keysOnly) {
      this.major = major;
      this.majorUtf8 = major == null ? null : major.majorUtf8();
      this.keysOnly = keysOnly;
    }
  }

  /** A MultiGetResponse (or a StoreScanResponse: the same fields) read from b[off, off+len). */
  static Multi.Page page(byte[] b, int off, int len, Shape shape) throws IOException {
    CodedInputStream in = CodedInputStream.newInstance(b, off, len);
    List<KeyValueVersion> records = new ArrayList<>();
    ByteString resume = ByteString.EMPTY;
    while (!in.isAtEnd()) {
      int tag = in.readTag();
      if (tag == lenTag(1)) {
        int old = in.pushLimit(in.readRawVarint32());
        records.add(record(in, b, off, shape));
        in.popLimit(old);
      } else if (tag == lenTag(2)) {
        resume = in.readBytes();
      } else {
        in.skipField(tag);
      }
    }
    return new Multi.Page(records, resume);
  }

  private static KeyValueVersion record(CodedInputStream in, byte[] b, int off, Shape shape) throws IOException {
    Key key = null;
    Value value = shape.keysOnly ? null : Value.EMPTY;
    ByteString version = ByteString.EMPTY;
    long expires = 0;
    while (!in.isAtEnd()) {
      int tag = in.readTag();
      if (tag == lenTag(1)) {
        int old = in.pushLimit(in.readRawVarint32());
        key = key(in, b, off, shape);
        in.popLimit(old);
      } else if (tag == lenTag(2) && !shape.keysOnly) {
        value = Value.createValue(in.readByteArray());
      } else if (tag == lenTag(3)) {
        version = in.readBytes();
      } else if (tag == varintTag(4)) {
        expires = in.readInt64();
      } else {
        in.skipField(tag);
      }
    }
    if (key == null) {
      throw new InvalidProtocolBufferException("a record without a key");
    }
    return new KeyValueVersion(key, value, Version.of(version), expires);
  }

  /**
   * A Key message. While its major components' bytes are shape's, the key
   * shares shape's major path (Key.fromPb's rule) and decodes none of them.
   */
  private static Key key(CodedInputStream in, byte[] b, int off, Shape shape) throws IOException {
    byte[][] same = shape.majorUtf8;
    int matched = 0; // leading major components equal to same's, not decoded
    List<String> major = null; // the major path, once it differs from same's
    String minor0 = null; // the first minor component
    List<String> minor = null; // all of them, once there are two
    while (!in.isAtEnd()) {
      int tag = in.readTag();
      if (tag == lenTag(1)) {
        if (major == null && same != null && matched < same.length) {
          int n = in.readRawVarint32();
          int pos = off + in.getTotalBytesRead();
          if (n >= 0 && n <= b.length - pos && Arrays.equals(b, pos, pos + n, same[matched], 0, same[matched].length)) {
            in.skipRawBytes(n);
            matched++;
            continue;
          }
          major = sharedPrefix(shape, matched);
          in.skipRawBytes(n);
          major.add(utf8(b, pos, n));
        } else {
          if (major == null) {
            major = sharedPrefix(shape, matched);
          }
          major.add(in.readStringRequireUtf8());
        }
      } else if (tag == lenTag(2)) {
        String c = in.readStringRequireUtf8();
        if (minor0 == null) {
          minor0 = c;
        } else {
          if (minor == null) {
            minor = new ArrayList<>(4);
            minor.add(minor0);
          }
          minor.add(c);
        }
      } else {
        in.skipField(tag);
      }
    }
    List<String> minors = minor != null ? Collections.unmodifiableList(minor)
        : minor0 != null ? List.of(minor0) : List.of();
    if (major == null && same != null && matched == same.length) {
      return Key.decoded(shape.major, minors);
    }
    if (major == null) {
      major = sharedPrefix(shape, matched);
    }
    return Key.decoded(Collections.unmodifiableList(major), minors);
  }

  /** A new list of the first matched components of shape's major path (none without one). */
  private static List<String> sharedPrefix(Shape shape, int matched) {
    return shape.major == null ? new ArrayList<>() : new ArrayList<>(shape.major.getMajorPath().subList(0, matched));
  }

  /** b[pos, pos+n) as a string, which must be UTF-8. */
  private static String utf8(byte[] b, int pos, int n) throws InvalidProtocolBufferException {
    try {
      return StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(b, pos, n)).toString();
    } catch (CharacterCodingException | IndexOutOfBoundsException e) {
      throw new InvalidProtocolBufferException("a key component is not valid UTF-8");
    }
  }
}
