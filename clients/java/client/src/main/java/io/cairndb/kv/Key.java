package io.cairndb.kv;

import com.google.protobuf.UnsafeByteOperations;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A record key: a major path of one or more components and a minor path of
 * zero or more. Records with the same major path live in the same partition,
 * and one {@link KVStore#execute} may write several of them atomically.
 *
 * <p>String form, as the Go and Python clients print and parse it:
 * {@code /major1/major2/-/minor1/minor2}. Inside a component '%' and '/' are
 * written %25 and %2F, a component that is exactly "-" is written %2D, and
 * characters below 0x20 and 0x7F are written %XX. {@link #fromString} accepts
 * %XX for any byte, as long as the component's bytes are valid UTF-8.
 *
 * <p>Keys are immutable. They order component by component (by the UTF-8
 * bytes of each component, a parent before its children), major path first:
 * the order of a {@link KVStore#multiGet} within one major path.
 */
public final class Key implements Comparable<Key> {
  private final List<String> major;
  private final List<String> minor;
  private int hash;
  private io.cairndb.kv.proto.Key pb;
  private long majorHash;
  private boolean majorHashed;

  private Key(List<String> major, List<String> minor) {
    this.major = major;
    this.minor = minor;
  }

  /** A key of the given paths; major must have at least one component. */
  public static Key createKey(List<String> majorPath, List<String> minorPath) {
    return new Key(copy(majorPath, "major", true), copy(minorPath, "minor", false));
  }

  /** A key with no minor path. */
  public static Key createKey(List<String> majorPath) {
    return createKey(majorPath, List.of());
  }

  /** A key whose major path is the one component {@code majorComponent}. */
  public static Key createKey(String majorComponent) {
    return createKey(List.of(checkNull(majorComponent)), List.of());
  }

  /** A key whose major path is the one component {@code majorComponent}. */
  public static Key createKey(String majorComponent, List<String> minorPath) {
    return createKey(List.of(checkNull(majorComponent)), minorPath);
  }

  /** A key whose major path is the one component, with one minor component. */
  public static Key createKey(String majorComponent, String minorComponent) {
    return createKey(List.of(checkNull(majorComponent)), List.of(checkNull(minorComponent)));
  }

  /** A key with the given major path and one minor component. */
  public static Key createKey(List<String> majorPath, String minorComponent) {
    return createKey(majorPath, List.of(checkNull(minorComponent)));
  }

  private static String checkNull(String c) {
    if (c == null) {
      throw new IllegalArgumentException("a key component is null");
    }
    return c;
  }

  private static List<String> copy(List<String> path, String what, boolean nonEmpty) {
    if (path == null) {
      throw new IllegalArgumentException("the " + what + " path is null");
    }
    if (nonEmpty && path.isEmpty()) {
      throw new IllegalArgumentException("the major path is empty (a key needs at least one major component)");
    }
    for (int i = 0; i < path.size(); i++) {
      String c = path.get(i);
      if (c == null) {
        throw new IllegalArgumentException(what + " component " + i + " is null");
      }
      if (!wellFormed(c)) {
        throw new InvalidArgumentException(what + " component " + i
            + " has a lone surrogate: it is not valid UTF-8", "invalid_key");
      }
    }
    return Collections.unmodifiableList(new ArrayList<>(path));
  }

  /** True if s has no lone surrogate, so that it encodes to UTF-8 exactly. */
  static boolean wellFormed(String s) {
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      if (!Character.isSurrogate(ch)) {
        continue;
      }
      if (!Character.isHighSurrogate(ch) || i + 1 == s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) {
        return false;
      }
      i++;
    }
    return true;
  }

  /** The wire form, built once. */
  io.cairndb.kv.proto.Key pb() {
    io.cairndb.kv.proto.Key k = pb;
    if (k == null) {
      k = io.cairndb.kv.proto.Key.newBuilder().addAllMajor(major).addAllMinor(minor).build();
      pb = k;
    }
    return k;
  }

  /** A key the server sent (its components are valid UTF-8). */
  static Key fromPb(io.cairndb.kv.proto.Key k) {
    Key key = new Key(List.copyOf(k.getMajorList()), List.copyOf(k.getMinorList()));
    key.pb = k;
    return key;
  }

  /**
   * A key the server sent, whose major path is most likely same's (a
   * multi-get's records all share their parent's): when its components'
   * bytes are sameUtf8, the key shares same's major list instead of
   * decoding and copying its own, and compareTo skips it.
   */
  static Key fromPb(io.cairndb.kv.proto.Key k, Key same, byte[][] sameUtf8) {
    int n = sameUtf8.length;
    if (k.getMajorCount() != n) {
      return fromPb(k);
    }
    for (int i = 0; i < n; i++) {
      if (!k.getMajorBytes(i).equals(UnsafeByteOperations.unsafeWrap(sameUtf8[i]))) {
        return fromPb(k);
      }
    }
    Key key = new Key(same.major, List.copyOf(k.getMinorList()));
    key.pb = k;
    return key;
  }

  /** A key Wire decoded, from unmodifiable lists built for it alone (valid UTF-8, as the server sends). */
  static Key decoded(List<String> major, List<String> minor) {
    return new Key(major, minor);
  }

  /** A key Wire decoded whose major path is same's, shared as fromPb shares it. */
  static Key decoded(Key same, List<String> minor) {
    return new Key(same.major, minor);
  }

  /** The major path's components as UTF-8, for fromPb and Wire. */
  byte[][] majorUtf8() {
    byte[][] out = new byte[major.size()][];
    for (int i = 0; i < out.length; i++) {
      out[i] = major.get(i).getBytes(StandardCharsets.UTF_8);
    }
    return out;
  }

  /** xxhash64 of the major path (see {@link Partitions#hashMajor}), computed once. */
  long majorHash() {
    if (!majorHashed) {
      majorHash = Partitions.hashMajor(major);
      majorHashed = true;
    }
    return majorHash;
  }

  /** The major path (unmodifiable). */
  public List<String> getMajorPath() {
    return major;
  }

  /** The minor path (unmodifiable, maybe empty). */
  public List<String> getMinorPath() {
    return minor;
  }

  /** True if this key has a minor path. */
  public boolean isMajorKeyOnly() {
    return minor.isEmpty();
  }

  /** This key without its minor path. */
  public Key getMajorKey() {
    return minor.isEmpty() ? this : new Key(major, List.of());
  }

  /**
   * Reads a key in its string form. Throws {@link InvalidArgumentException}
   * (kind malformed_key) for text that is not one.
   */
  public static Key fromString(String text) {
    if (text == null || text.isEmpty()) {
      throw malformed("empty string (a key looks like /major/-/minor)");
    }
    if (text.charAt(0) != '/') {
      throw malformed("\"" + text + "\" does not start with '/'");
    }
    if (text.equals("/")) {
      throw malformed("\"/\" is the root of the store and names no record (a scan takes it to mean the whole store)");
    }
    List<String> maj = new ArrayList<>();
    List<String> min = new ArrayList<>();
    boolean inMinor = false;
    int start = 1;
    for (int n = 1; ; n++) {
      int end = text.indexOf('/', start);
      String raw = text.substring(start, end < 0 ? text.length() : end);
      if (raw.isEmpty()) {
        throw malformed("\"" + text + "\": component " + n
            + " is empty (a doubled or trailing '/'); components are never empty");
      }
      if (raw.equals("-")) {
        if (inMinor) {
          throw malformed("\"" + text + "\" has more than one '-' separator (write a \"-\" component as %2D)");
        }
        inMinor = true;
      } else {
        (inMinor ? min : maj).add(unescape(raw, text));
      }
      if (end < 0) {
        break;
      }
      start = end + 1;
    }
    if (maj.isEmpty()) {
      throw malformed("\"" + text + "\" has an empty major path");
    }
    return new Key(Collections.unmodifiableList(maj), Collections.unmodifiableList(min));
  }

  private static String unescape(String raw, String text) {
    if (raw.indexOf('%') < 0) {
      return raw;
    }
    byte[] b = raw.getBytes(StandardCharsets.UTF_8);
    ByteArrayOutputStream out = new ByteArrayOutputStream(b.length);
    for (int i = 0; i < b.length; i++) {
      if (b[i] != '%') {
        out.write(b[i]);
        continue;
      }
      if (i + 2 >= b.length) {
        throw malformed("\"" + text + "\": truncated escape at byte " + i);
      }
      int hi = Character.digit(b[i + 1], 16);
      int lo = Character.digit(b[i + 2], 16);
      if (hi < 0 || lo < 0) {
        throw malformed("\"" + text + "\": bad escape " + new String(b, i, 3, StandardCharsets.UTF_8));
      }
      out.write(hi << 4 | lo);
      i += 2;
    }
    try {
      return StandardCharsets.UTF_8.newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(out.toByteArray()))
          .toString();
    } catch (CharacterCodingException e) {
      throw malformed("\"" + text + "\": component is not valid UTF-8");
    }
  }

  private static InvalidArgumentException malformed(String msg) {
    return new InvalidArgumentException("malformed key: " + msg, "malformed_key");
  }

  private static final char[] HEX = "0123456789ABCDEF".toCharArray();

  private static void escape(StringBuilder sb, String c) {
    if (c.equals("-")) {
      sb.append("%2D");
      return;
    }
    for (int i = 0; i < c.length(); i++) {
      char ch = c.charAt(i);
      if (ch == '%' || ch == '/' || ch < 0x20 || ch == 0x7F) {
        sb.append('%').append(HEX[ch >> 4]).append(HEX[ch & 15]);
      } else {
        sb.append(ch);
      }
    }
  }

  /** The string form, e.g. {@code /users/alice/-/email}. */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    for (String c : major) {
      escape(sb.append('/'), c);
    }
    if (!minor.isEmpty()) {
      sb.append("/-");
      for (String c : minor) {
        escape(sb.append('/'), c);
      }
    }
    return sb.toString();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Key && ((Key) o).major.equals(major) && ((Key) o).minor.equals(minor);
  }

  @Override
  public int hashCode() {
    int h = hash;
    if (h == 0) {
      h = 31 * major.hashCode() + minor.hashCode();
      hash = h;
    }
    return h;
  }

  /** Major path first, then minor, component by component by UTF-8 bytes. */
  @Override
  public int compareTo(Key o) {
    int c = comparePaths(major, o.major);
    return c != 0 ? c : comparePaths(minor, o.minor);
  }

  private static int comparePaths(List<String> a, List<String> b) {
    if (a == b) {
      return 0; // a shared major path (fromPb)
    }
    int n = Math.min(a.size(), b.size());
    for (int i = 0; i < n; i++) {
      String x = a.get(i);
      String y = b.get(i);
      if (x.equals(y)) {
        continue;
      }
      int c = compareUtf8(x, y);
      if (c != 0) {
        return c;
      }
    }
    return Integer.compare(a.size(), b.size());
  }

  /**
   * Compares as UTF-8 bytes do: by code point. UTF-16 order is code point
   * order except that a surrogate (half of a code point above U+FFFF) sorts
   * after every other char; both strings are well formed, so at the first
   * char that differs either both are surrogates of the same half or one
   * alone is a surrogate.
   */
  static int compareUtf8(String a, String b) {
    int n = Math.min(a.length(), b.length());
    for (int i = 0; i < n; i++) {
      char x = a.charAt(i);
      char y = b.charAt(i);
      if (x != y) {
        boolean sx = Character.isSurrogate(x);
        if (sx == Character.isSurrogate(y)) {
          return Character.compare(x, y);
        }
        return sx ? 1 : -1;
      }
    }
    return Integer.compare(a.length(), b.length());
  }

}
