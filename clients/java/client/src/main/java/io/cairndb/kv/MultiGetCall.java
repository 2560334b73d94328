package io.cairndb.kv;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedOutputStream;
import io.cairndb.kv.proto.MultiGetRequest;
import io.cairndb.kv.proto.RequestHeader;
import java.io.IOException;
import java.util.List;

/**
 * A multi-get's request: the generated MultiGetRequest on the gRPC paths
 * ({@link #toProto}), and on the call socket the same bytes written by
 * hand ({@link Wire.Body}), without building the message or the parent's
 * generated Key. Each attempt sets its header and the page's resume token
 * ({@link #with}); one pager, so one thread, uses it.
 *
 * <pre>
 *   MultiGetRequest { 1: header, 2: parent Key { 1: major ..., 2: minor ... },
 *                     3: range, 4: depth, 5: direction, 6: keys_only,
 *                     7: batch_size, 8: resume, 9: consistency }
 * </pre>
 */
final class MultiGetCall implements Wire.Body {
  private final Key parent;
  private final byte[] parentPb; // the parent's Key message
  private final io.cairndb.kv.proto.KeyRange range; // null: none
  private final int depth;
  private final int direction;
  private final boolean keysOnly;
  private final int batch;
  private final io.cairndb.kv.proto.Consistency consistency;
  private RequestHeader header = RequestHeader.getDefaultInstance();
  private ByteString resume = ByteString.EMPTY;

  MultiGetCall(Key parent, io.cairndb.kv.proto.KeyRange range, Depth depth, Direction dir, boolean keysOnly, int batch,
      io.cairndb.kv.proto.Consistency consistency) {
    this.parent = parent;
    this.parentPb = keyPb(parent);
    this.range = range;
    this.depth = Depth.pb(depth).getNumber();
    this.direction = dir.pb.getNumber();
    this.keysOnly = keysOnly;
    this.batch = batch;
    this.consistency = consistency;
  }

  /** This request with header h and resume token resume (an attempt's). */
  MultiGetCall with(RequestHeader h, ByteString resume) {
    this.header = h;
    this.resume = resume;
    return this;
  }

  /** The generated message of the same request. */
  MultiGetRequest toProto() {
    MultiGetRequest.Builder b = MultiGetRequest.newBuilder().setHeader(header).setParent(parent.pb())
        .setDepthValue(depth).setDirectionValue(direction).setKeysOnly(keysOnly).setBatchSize(batch)
        .setResume(resume).setConsistency(consistency);
    if (range != null) {
      b.setRange(range);
    }
    return b.build();
  }

  @Override
  public int size() {
    int n = message(1, header.getSerializedSize()) + message(2, parentPb.length)
        + message(9, consistency.getSerializedSize());
    if (range != null) {
      n += message(3, range.getSerializedSize());
    }
    n += depth == 0 ? 0 : CodedOutputStream.computeEnumSize(4, depth);
    n += direction == 0 ? 0 : CodedOutputStream.computeEnumSize(5, direction);
    n += keysOnly ? CodedOutputStream.computeBoolSize(6, true) : 0;
    n += batch == 0 ? 0 : CodedOutputStream.computeInt32Size(7, batch);
    n += resume.isEmpty() ? 0 : CodedOutputStream.computeBytesSize(8, resume);
    return n;
  }

  @Override
  public void writeTo(CodedOutputStream o) throws IOException {
    o.writeMessage(1, header);
    o.writeByteArray(2, parentPb);
    if (range != null) {
      o.writeMessage(3, range);
    }
    if (depth != 0) {
      o.writeEnum(4, depth);
    }
    if (direction != 0) {
      o.writeEnum(5, direction);
    }
    if (keysOnly) {
      o.writeBool(6, true);
    }
    if (batch != 0) {
      o.writeInt32(7, batch);
    }
    if (!resume.isEmpty()) {
      o.writeBytes(8, resume);
    }
    o.writeMessage(9, consistency);
  }

  private static int message(int field, int size) {
    return CodedOutputStream.computeTagSize(field) + CodedOutputStream.computeUInt32SizeNoTag(size) + size;
  }

  /** k as a Key message's bytes. */
  private static byte[] keyPb(Key k) {
    List<String> major = k.getMajorPath();
    List<String> minor = k.getMinorPath();
    int n = 0;
    for (String c : major) {
      n += CodedOutputStream.computeStringSize(1, c);
    }
    for (String c : minor) {
      n += CodedOutputStream.computeStringSize(2, c);
    }
    byte[] b = new byte[n];
    CodedOutputStream o = CodedOutputStream.newInstance(b);
    try {
      for (String c : major) {
        o.writeString(1, c);
      }
      for (String c : minor) {
        o.writeString(2, c);
      }
      o.checkNoSpaceLeft();
    } catch (IOException e) {
      throw new IllegalStateException("encoding a key into its own size", e);
    }
    return b;
  }
}
