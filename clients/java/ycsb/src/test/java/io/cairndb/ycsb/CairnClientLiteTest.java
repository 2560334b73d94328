package io.cairndb.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.Vector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

/** The binding against a real cairn lite, in both layouts, and against records of Go's cairn bench. */
class CairnClientLiteTest {
  @TempDir static Path root;
  static Lite lite;

  @BeforeAll
  static void start() throws Exception {
    lite = new Lite(root);
  }

  @AfterAll
  static void stop() throws Exception {
    if (lite != null) {
      lite.close();
    }
  }

  private static DB open(String... kv) throws DBException {
    Properties p = new Properties();
    p.setProperty("cairn.hosts", lite.addr);
    for (int i = 0; i < kv.length; i += 2) {
      p.setProperty(kv[i], kv[i + 1]);
    }
    DB db = new CairnClient();
    db.setProperties(p);
    db.init();
    return db;
  }

  private static Map<String, ByteIterator> values(String... kv) {
    Map<String, ByteIterator> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put(kv[i], new StringByteIterator(kv[i + 1]));
    }
    return m;
  }

  private static Map<String, String> strings(Map<String, ByteIterator> m) {
    Map<String, String> out = new TreeMap<>();
    m.forEach((k, v) -> out.put(k, v.toString()));
    return out;
  }

  private static Map<String, String> read(DB db, String table, String key, Set<String> fields) {
    Map<String, ByteIterator> got = new HashMap<>();
    Status st = db.read(table, key, fields, got);
    assertEquals(Status.OK, st, "read " + key);
    return strings(got);
  }

  /** YCSB's buildDeterministicValue(key, field) cut to size (what dataintegrity=true writes and checks). */
  static String deterministic(String key, String field, int size) {
    StringBuilder sb = new StringBuilder(key).append(':').append(field);
    while (sb.length() < size) {
      sb.append(':').append(sb.toString().hashCode());
    }
    sb.setLength(size);
    return sb.toString();
  }

  @ParameterizedTest
  @ValueSource(strings = {"value", "MINOR"})
  void crud(String layout) throws Exception {
    String t = "crud" + layout;
    DB db = open("cairn.layout", layout, "fieldcount", "3");
    try {
      assertEquals(Status.OK, db.insert(t, "k1", values("field0", "a", "field1", "b", "field2", "c")));
      assertEquals(Map.of("field0", "a", "field1", "b", "field2", "c"), read(db, t, "k1", null));
      assertEquals(Map.of("field1", "b"), read(db, t, "k1", Set.of("field1")));
      assertEquals(Map.of("field0", "a", "field2", "c"), read(db, t, "k1", Set.of("field0", "field2")));

      // A partial update keeps the other fields; a full one replaces them all.
      assertEquals(Status.OK, db.update(t, "k1", values("field1", "B")));
      assertEquals(Map.of("field0", "a", "field1", "B", "field2", "c"), read(db, t, "k1", null));
      assertEquals(Status.OK, db.update(t, "k1", values("field0", "x", "field1", "y", "field2", "z")));
      assertEquals(Map.of("field0", "x", "field1", "y", "field2", "z"), read(db, t, "k1", null));

      assertEquals(Status.NOT_FOUND, db.read(t, "missing", null, new HashMap<>()));
      assertEquals(Status.NOT_FOUND, db.read(t, "missing", Set.of("field0"), new HashMap<>()));
      if (layout.equals("value")) {
        // In the minor layout an update writes the fields like an insert, as in cairn bench.
        assertEquals(Status.NOT_FOUND, db.update(t, "missing", values("field1", "v")));
        assertEquals(Status.NOT_FOUND, db.update(t, "missing", values("field0", "1", "field1", "2", "field2", "3")));
      }

      assertEquals(Status.OK, db.delete(t, "k1"));
      assertEquals(Status.NOT_FOUND, db.read(t, "k1", null, new HashMap<>()));
      assertEquals(Status.NOT_FOUND, db.delete(t, "k1"));
    } finally {
      db.cleanup();
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"value", "minor"})
  void scanTakesRecordsFromTheStartKeyOn(String layout) throws Exception {
    String t = "scan" + layout;
    DB db = open("cairn.layout", layout, "fieldcount", "2");
    try {
      for (int i = 0; i < 6; i++) {
        assertEquals(Status.OK, db.insert(t, "user" + i, values("field0", "v" + i, "field1", "w" + i)));
      }
      Vector<HashMap<String, ByteIterator>> out = new Vector<>();
      assertEquals(Status.OK, db.scan(t, "user2", 3, null, out));
      assertEquals(3, out.size());
      for (HashMap<String, ByteIterator> r : out) {
        Map<String, String> s = strings(r);
        assertEquals(2, s.size(), "fields of a scanned record: " + s);
        int n = Integer.parseInt(s.get("field0").substring(1));
        assertTrue(n >= 2, "scanned a record before the start key: " + s);
        assertEquals("w" + n, s.get("field1"));
      }
      out.clear();
      assertEquals(Status.OK, db.scan(t, "user0", 100, Set.of("field1"), out));
      assertEquals(6, out.size(), "every record from user0 on");
      for (HashMap<String, ByteIterator> r : out) {
        assertEquals(Set.of("field1"), r.keySet());
      }
    } finally {
      db.cleanup();
    }
  }

  /** cairn bench writes, the binding reads; the binding writes, cairn bench verifies. */
  @ParameterizedTest
  @ValueSource(strings = {"value", "minor"})
  void compatibleWithCairnBench(String layout) throws Exception {
    String t = "compat" + layout;
    String[] common = {"-db", "cairn", "-p", "workload=site.ycsb.workloads.CoreWorkload", "-p", "cairn.hosts=" + lite.addr,
        "-p", "cairn.layout=" + layout, "-p", "recordcount=10", "-p", "insertorder=ordered", "-p", "dataintegrity=true",
        "-p", "table=" + t, "-threads", "1"};
    lite.run(concat(new String[] {"bench", "load"}, common));
    DB db = open("cairn.layout", layout);
    try {
      for (int i = 0; i < 10; i++) {
        String key = "user" + i;
        Map<String, String> got = read(db, t, key, null);
        assertEquals(10, got.size(), key + ": fields " + got.keySet());
        for (int f = 0; f < 10; f++) {
          assertEquals(deterministic(key, "field" + f, 100), got.get("field" + f), key + " field" + f);
        }
      }
      // Rewrite every record through the binding (one field changed to what
      // dataintegrity expects of it anyway, the rest whole), then let cairn
      // bench read and verify all of them.
      for (int i = 0; i < 10; i++) {
        String key = "user" + i;
        Map<String, ByteIterator> v = new LinkedHashMap<>();
        for (int f = 0; f < 10; f++) {
          v.put("field" + f, new StringByteIterator(deterministic(key, "field" + f, 100)));
        }
        assertEquals(Status.OK, db.delete(t, key));
        assertEquals(Status.OK, db.insert(t, key, v));
        assertEquals(Status.OK, db.update(t, key, values("field3", deterministic(key, "field3", 100))));
      }
    } finally {
      db.cleanup();
    }
    String out = lite.run(concat(new String[] {"bench", "run"}, common, new String[] {"-p", "operationcount=40",
        "-p", "readproportion=1", "-p", "updateproportion=0", "-p", "requestdistribution=uniform"}));
    assertTrue(out.contains("[READ], Return=OK, 40"), "cairn bench did not read 40 records back:\n" + out);
  }

  @Test
  void storeIsSharedUntilTheLastCleanup() throws Exception {
    DB a = open();
    DB b = open();
    a.cleanup();
    assertEquals(Status.OK, b.insert("shared", "k", values("field0", "v")));
    assertEquals("v", read(b, "shared", "k", null).get("field0"));
    b.cleanup();
    DB c = open();
    try {
      assertEquals(Status.OK, c.delete("shared", "k"), "a store opened again after the last cleanup");
    } finally {
      c.cleanup();
    }
  }

  @Test
  void badPropertiesAreNamed() {
    DBException e = assertThrows(DBException.class, () -> open("cairn.layout", "rows"));
    assertTrue(e.getMessage().contains("cairn.layout=rows"), e.getMessage());
    DBException wrongStore = assertThrows(DBException.class, () -> open("cairn.store", "nosuchstore", "cairn.timeout", "2s"));
    assertTrue(wrongStore.getMessage().contains("cairn.store"), wrongStore.getMessage());
  }

  @Test
  void corruptRecordIsAnError() throws Exception {
    lite.run("kv", "--hosts", lite.addr, "put", "/corrupt/k", "not a record");
    DB db = open();
    try {
      assertEquals(Status.ERROR, db.read("corrupt", "k", null, new HashMap<>()));
      assertEquals(Status.ERROR, db.update("corrupt", "k", values("field0", "x")));
    } finally {
      db.cleanup();
    }
    assertEquals("not a record", new String(lite.run("kv", "--hosts", lite.addr, "get", "/corrupt/k")
        .getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8).trim());
  }

  private static String[] concat(String[]... parts) {
    int n = 0;
    for (String[] p : parts) {
      n += p.length;
    }
    String[] out = new String[n];
    int i = 0;
    for (String[] p : parts) {
      System.arraycopy(p, 0, out, i, p.length);
      i += p.length;
    }
    return out;
  }
}
