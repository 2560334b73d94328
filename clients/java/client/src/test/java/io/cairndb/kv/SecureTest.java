package io.cairndb.kv;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The client against a real `cairn lite --secure` (TLS 1.3). */
class SecureTest {
  @Test
  void loginFileAndRefusal() throws Exception {
    Path root = Files.createTempDirectory("cairn-java-secure");
    Procs.Lite lite = Procs.startLite(root, "--secure");
    try {
      String login = root.resolve("security/client.security").toString();
      Key k = Key.createKey(List.of("sec"), List.of("a"));
      try (KVStore s = KVStoreFactory.getStore(new KVStoreConfig(Procs.STORE, lite.addr).setSecurityFile(login))) {
        Version v = s.put(k, Value.createValue("hello".getBytes(UTF_8)));
        ValueVersion got = s.get(k);
        assertEquals("hello", new String(got.getValue().getValue(), UTF_8));
        assertEquals(v, got.getVersion());
        // The calls went on the connection's call stream, each checked with the session's token.
        CallStream cs = ((StoreImpl) s).router.conn(lite.addr).stream();
        assertNotNull(cs, "a handle with a login has a call stream");
        assertFalse(cs.off(), "a secure lite serves the call stream");
      }
      // TLS without a login is refused, told to log in; so is a wrong password.
      String ca = root.resolve("security/ca.pem").toString();
      InvalidArgumentException noLogin = assertThrows(InvalidArgumentException.class, () -> KVStoreFactory.getStore(
          new KVStoreConfig(Procs.STORE, lite.addr).setTrustedCAFile(ca)).close());
      assertEquals("login_required", noLogin.getKind());
      InvalidArgumentException wrong = assertThrows(InvalidArgumentException.class, () -> KVStoreFactory.getStore(
          new KVStoreConfig(Procs.STORE, lite.addr).setTrustedCAFile(ca).setCredentials("admin", "wrong-password"))
          .close());
      assertEquals("login_failed", wrong.getKind());
      String pw = Files.readString(root.resolve("security/admin.passwd"), UTF_8).strip();
      try (KVStore s = KVStoreFactory.getStore(
          new KVStoreConfig(Procs.STORE, lite.addr).setTrustedCAFile(ca).setCredentials("admin", pw))) {
        assertEquals("hello", new String(s.get(k).getValue().getValue(), UTF_8));
      }
      KVStoreConfig plain = new KVStoreConfig(Procs.STORE, lite.addr)
          .setRequestTimeout(3, java.util.concurrent.TimeUnit.SECONDS);
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> KVStoreFactory.getStore(plain).close());
      assertEquals("tls_required", e.getKind());
      assertTrue(e.getMessage().contains("secure mode"), e.getMessage());
      assertThrows(IllegalArgumentException.class,
          () -> new KVStoreConfig(Procs.STORE, lite.addr).setSecurityFile(root.resolve("missing").toString()));
    } finally {
      lite.stop();
      Procs.rmrf(root);
    }
  }
}
