package io.cairndb.ycsb;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import site.ycsb.DBException;

/**
 * The binding's properties, with the names, defaults and values of
 * {@code cairn bench} (internal/bench/known.go), so one property file drives
 * both. Values of enumerations are case-insensitive (ABSOLUTE works, as in
 * Oracle's binding). Every bad property is reported, each by name.
 */
final class Settings {
  static final String HOSTS = "cairn.hosts";
  static final String STORE = "cairn.store";
  static final String LAYOUT = "cairn.layout";
  static final String UPDATE = "cairn.update";
  static final String CONSISTENCY = "cairn.consistency";
  static final String DURABILITY = "cairn.durability";
  static final String TIMEOUT = "cairn.timeout";
  static final String UNARY_CALLS = "cairn.unarycalls";
  static final String CALL_SOCKET = "cairn.callsocket";

  /** host:port of the helper hosts; default 127.0.0.1:5000. */
  final List<String> hosts;
  /** The store name; default kvstore. */
  final String store;
  /** cairn.layout=minor: one record per field; default value (one value per record). */
  final boolean minor;
  /** cairn.update=rmw: a partial update in the value layout is a get and a putIfVersion; default merge (one
   * updateFields, merged on the server). */
  final boolean rmw;
  /** absolute or none_required (default). */
  final String consistency;
  /** The leader's sync policy: sync, write_no_sync (default) or no_sync. */
  final String durability;
  /** Timeout of each request in nanoseconds (cairn.timeout, a Go duration; default 5s). */
  final long timeoutNanos;
  /** cairn.unarycalls=true: every call its own unary RPC, not on the connection's call stream; default false. */
  final boolean unaryCalls;
  /** cairn.callsocket=false: calls on the gRPC call stream, not on the nodes' call sockets; default true. */
  final boolean callSocket;
  /** YCSB's field names (fieldnameprefix + 0 .. fieldcount-1). */
  final String[] fieldNames;

  private Settings(Properties p, List<String> errs) {
    String h = get(p, HOSTS, "127.0.0.1:5000");
    hosts = new ArrayList<>();
    for (String s : h.split(",", -1)) {
      s = s.trim();
      if (s.isEmpty()) {
        errs.add(HOSTS + "=" + h + ": has an empty host");
      } else if (s.lastIndexOf(':') <= 0 || !isPort(s.substring(s.lastIndexOf(':') + 1))) {
        errs.add(HOSTS + "=" + h + ": " + s + " is not host:port");
      } else {
        hosts.add(s);
      }
    }
    store = get(p, STORE, "kvstore");
    if (store.isEmpty()) {
      errs.add(STORE + "=: want a store name");
    }
    minor = oneOf(p, LAYOUT, errs, "value", "minor").equals("minor");
    rmw = oneOf(p, UPDATE, errs, "merge", "rmw").equals("rmw");
    consistency = oneOf(p, CONSISTENCY, errs, "none_required", "absolute");
    durability = oneOf(p, DURABILITY, errs, "write_no_sync", "sync", "no_sync");
    unaryCalls = oneOf(p, UNARY_CALLS, errs, "false", "true").equals("true");
    callSocket = oneOf(p, CALL_SOCKET, errs, "true", "false").equals("true");
    String t = get(p, TIMEOUT, "5s");
    long ns;
    try {
      ns = parseDuration(t);
    } catch (IllegalArgumentException e) {
      errs.add(TIMEOUT + "=" + t + ": want a positive Go duration such as 5s or 250ms");
      ns = 5_000_000_000L;
    }
    timeoutNanos = ns;
    String fc = get(p, "fieldcount", "10");
    int n = 10;
    try {
      n = Integer.parseInt(fc);
      if (n < 1) {
        errs.add("fieldcount=" + fc + ": want at least 1");
        n = 10;
      }
    } catch (NumberFormatException e) {
      errs.add("fieldcount=" + fc + ": not an integer");
    }
    String prefix = get(p, "fieldnameprefix", "field");
    fieldNames = new String[n];
    for (int i = 0; i < n; i++) {
      fieldNames[i] = prefix + i;
    }
  }

  /** Reads and validates the properties; the exception names every bad one. */
  static Settings parse(Properties p) throws DBException {
    List<String> errs = new ArrayList<>();
    Settings s = new Settings(p, errs);
    if (!errs.isEmpty()) {
      throw new DBException("cairn: bad properties: " + String.join("; ", errs));
    }
    return s;
  }

  private static String get(Properties p, String name, String def) {
    String v = p.getProperty(name);
    return v == null ? def : v.trim();
  }

  private static String oneOf(Properties p, String name, List<String> errs, String... allowed) {
    String raw = get(p, name, allowed[0]);
    String v = raw.toLowerCase(Locale.ROOT);
    for (String a : allowed) {
      if (a.equals(v)) {
        return a;
      }
    }
    errs.add(name + "=" + raw + ": want one of " + String.join(", ", allowed));
    return allowed[0];
  }

  private static boolean isPort(String s) {
    try {
      int n = Integer.parseInt(s);
      return n > 0 && n < 65536;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  /**
   * Parses a positive Go duration ("5s", "250ms", "1m30s", "1.5s"; units ns,
   * us, µs, ms, s, m, h) into nanoseconds.
   */
  static long parseDuration(String s) {
    if (s.isEmpty()) {
      throw new IllegalArgumentException("empty duration");
    }
    double total = 0;
    int i = 0;
    while (i < s.length()) {
      int start = i;
      while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) {
        i++;
      }
      if (start == i) {
        throw new IllegalArgumentException("missing number in " + s);
      }
      double num = Double.parseDouble(s.substring(start, i));
      int u = i;
      while (i < s.length() && !Character.isDigit(s.charAt(i)) && s.charAt(i) != '.') {
        i++;
      }
      double unit;
      switch (s.substring(u, i)) {
        case "ns": unit = 1; break;
        case "us": case "µs": case "μs": unit = 1e3; break;
        case "ms": unit = 1e6; break;
        case "s": unit = 1e9; break;
        case "m": unit = 60e9; break;
        case "h": unit = 3600e9; break;
        default: throw new IllegalArgumentException("bad unit in " + s);
      }
      total += num * unit;
    }
    if (!(total >= 1) || total > Long.MAX_VALUE) {
      throw new IllegalArgumentException("not positive: " + s);
    }
    return (long) total;
  }
}
