package io.cairndb.ycsb;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.Test;
import site.ycsb.DBException;

class SettingsTest {
  private static Properties props(String... kv) {
    Properties p = new Properties();
    for (int i = 0; i < kv.length; i += 2) {
      p.setProperty(kv[i], kv[i + 1]);
    }
    return p;
  }

  @Test
  void defaultsAreCairnBenchs() throws Exception {
    Settings s = Settings.parse(new Properties());
    assertEquals(List.of("127.0.0.1:5000"), s.hosts);
    assertEquals("kvstore", s.store);
    assertFalse(s.minor);
    assertEquals("none_required", s.consistency);
    assertEquals("write_no_sync", s.durability);
    assertEquals(5_000_000_000L, s.timeoutNanos);
    assertFalse(s.unaryCalls);
    assertEquals(10, s.fieldNames.length);
    assertEquals("field9", s.fieldNames[9]);
  }

  @Test
  void valuesAreCaseInsensitive() throws Exception {
    Settings s = Settings.parse(props("cairn.hosts", "a:1, b:2", "cairn.layout", "MINOR",
        "cairn.consistency", "ABSOLUTE", "cairn.durability", "Sync", "cairn.timeout", "1m30s",
        "fieldcount", "3", "fieldnameprefix", "f", "cairn.unarycalls", "TRUE"));
    assertEquals(List.of("a:1", "b:2"), s.hosts);
    assertTrue(s.unaryCalls);
    assertTrue(s.minor);
    assertEquals("absolute", s.consistency);
    assertEquals("sync", s.durability);
    assertEquals(90_000_000_000L, s.timeoutNanos);
    assertArrayEquals(new String[] {"f0", "f1", "f2"}, s.fieldNames);
  }

  @Test
  void everyBadPropertyIsNamed() {
    DBException e = assertThrows(DBException.class, () -> Settings.parse(props("cairn.hosts", "a:1,,nohost",
        "cairn.layout", "rows", "cairn.consistency", "strong", "cairn.durability", "fsync",
        "cairn.timeout", "5", "fieldcount", "x", "cairn.unarycalls", "maybe")));
    String m = e.getMessage();
    for (String want : new String[] {"cairn.hosts=a:1,,nohost: has an empty host", "nohost is not host:port",
        "cairn.layout=rows: want one of value, minor", "cairn.consistency=strong: want one of none_required, absolute",
        "cairn.durability=fsync: want one of write_no_sync, sync, no_sync",
        "cairn.timeout=5: want a positive Go duration", "fieldcount=x: not an integer",
        "cairn.unarycalls=maybe: want one of false, true"}) {
      assertTrue(m.contains(want), "message lacks \"" + want + "\": " + m);
    }
  }

  @Test
  void goDurations() {
    assertEquals(250_000_000L, Settings.parseDuration("250ms"));
    assertEquals(1_500_000_000L, Settings.parseDuration("1.5s"));
    assertEquals(3_600_000_000_000L + 60_000_000_000L, Settings.parseDuration("1h1m"));
    assertEquals(7_000L, Settings.parseDuration("7us"));
    for (String bad : new String[] {"", "5", "s", "0s", "-1s", "5 s", "5sec"}) {
      assertThrows(IllegalArgumentException.class, () -> Settings.parseDuration(bad), bad);
    }
  }
}
