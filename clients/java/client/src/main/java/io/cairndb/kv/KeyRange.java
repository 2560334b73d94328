package io.cairndb.kv;

/**
 * Restricts the component right after the parent key of a multi-key
 * operation: either a prefix, or a start and an end bound (each optional:
 * null means unbounded; each inclusive or not). As {@code oracle.kv.KeyRange}.
 */
public final class KeyRange {
  private final String start;
  private final boolean startInclusive;
  private final String end;
  private final boolean endInclusive;
  private final String prefix;
  final io.cairndb.kv.proto.KeyRange pb;

  /** Components between start and end (either may be null: unbounded). */
  public KeyRange(String start, boolean startInclusive, String end, boolean endInclusive) {
    if (start == null && end == null) {
      throw new IllegalArgumentException("KeyRange: start and end are both null (pass no range instead)");
    }
    if (start != null && end != null && Key.compareUtf8(start, end) > 0) {
      throw new IllegalArgumentException("KeyRange: start \"" + start + "\" is after end \"" + end + "\"");
    }
    check(start);
    check(end);
    this.start = start;
    this.startInclusive = startInclusive;
    this.end = end;
    this.endInclusive = endInclusive;
    this.prefix = null;
    this.pb = io.cairndb.kv.proto.KeyRange.newBuilder()
        .setHasStart(start != null).setStart(start == null ? "" : start).setStartInclusive(startInclusive)
        .setHasEnd(end != null).setEnd(end == null ? "" : end).setEndInclusive(endInclusive)
        .build();
  }

  /** Components that start with prefix. */
  public KeyRange(String prefix) {
    if (prefix == null) {
      throw new IllegalArgumentException("KeyRange: the prefix is null");
    }
    check(prefix);
    this.start = null;
    this.startInclusive = true;
    this.end = null;
    this.endInclusive = true;
    this.prefix = prefix;
    this.pb = io.cairndb.kv.proto.KeyRange.newBuilder().setHasPrefix(true).setPrefix(prefix).build();
  }

  private static void check(String s) {
    if (s != null && !Key.wellFormed(s)) {
      throw new InvalidArgumentException("KeyRange: a bound has a lone surrogate: not valid UTF-8", "invalid_range");
    }
  }

  public String getStart() {
    return start;
  }

  public boolean getStartInclusive() {
    return startInclusive;
  }

  public String getEnd() {
    return end;
  }

  public boolean getEndInclusive() {
    return endInclusive;
  }

  /** The prefix, or null for a start/end range. */
  public String getPrefix() {
    return prefix;
  }

  public boolean isPrefix() {
    return prefix != null;
  }

  @Override
  public String toString() {
    if (prefix != null) {
      return "KeyRange(prefix " + prefix + ")";
    }
    return "KeyRange(" + (startInclusive ? "[" : "(") + (start == null ? "" : start) + ", "
        + (end == null ? "" : end) + (endInclusive ? "]" : ")") + ")";
  }
}
