package io.cairndb.kv;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.SortedMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The call socket (CallSocket): used by default, over TLS too, a fallback to the stream, and its failures. */
class CallSocketTest {
  private final String ns = Procs.ns();

  private Key key(String major, String... minor) {
    return Key.createKey(List.of(ns, major), List.of(minor));
  }

  private static Value v(String s) {
    return Value.createValue(s.getBytes(UTF_8));
  }

  /** Writes and reads go on the call socket of a real lite, and the gRPC stream never opens. */
  @Test
  void callsTravelOnTheSocket() throws Exception {
    String addr = Procs.lite().addr;
    StoreImpl store = (StoreImpl) KVStoreFactory.getStore(new KVStoreConfig(Procs.STORE, addr));
    try {
      Version ver = store.put(key("s", "a"), v("one"));
      store.put(key("s", "b"), v("two"));
      assertEquals(ver, store.get(key("s", "a")).getVersion());
      SortedMap<Key, ValueVersion> all = store.multiGet(key("s"), null, null);
      assertEquals(2, all.size());
      assertTrue(store.delete(key("s", "a")));
      CallSocket s = store.router.conn(addr).socket;
      assertNotNull(s, "a handle has a call socket by default");
      assertFalse(s.off(), "lite serves the call socket");
      assertTrue(s.opened() >= 1, "no call socket link was opened");
      Conn c = store.router.conn(addr);
      assertFalse(c.grpcOpened(), "opening the store, writes and reads opened the gRPC channel");
      Iterator<KeyValueVersion> it = store.storeIterator(Direction.UNORDERED, 0, key("s"), null, null);
      assertTrue(it.hasNext(), "the scan found nothing");
      assertTrue(c.grpcOpened(), "a store scan goes on gRPC");
    } finally {
      store.close();
    }
  }

  /** A node run with --no-http has no call socket: the first call finds out, and calls go on the stream. */
  @Test
  void noSocketFallsBackToTheStream() throws Exception {
    Path root = Files.createTempDirectory("cairn-java-nohttp");
    Procs.Lite lite = Procs.startLite(root, "--no-http");
    try (KVStore kv = KVStoreFactory.getStore(new KVStoreConfig(Procs.STORE, lite.addr))) {
      StoreImpl store = (StoreImpl) kv;
      store.put(key("f", "a"), v("x"));
      assertEquals("x", new String(store.get(key("f", "a")).getValue().getValue(), UTF_8));
      Conn c = store.router.conn(lite.addr);
      assertTrue(c.socket.off(), "a --no-http node's call socket is off");
      assertFalse(c.stream().off(), "the calls went on the stream");
    } finally {
      lite.stop();
      Procs.rmrf(root);
    }
  }

  /** A secure lite's call socket is TLS 1.3, and its calls are checked with the session's token. */
  @Test
  void secureCallsTravelOnTheSocket() throws Exception {
    Path root = Files.createTempDirectory("cairn-java-secure-socket");
    Procs.Lite lite = Procs.startLite(root, "--secure");
    try (KVStore kv = KVStoreFactory.getStore(new KVStoreConfig(Procs.STORE, lite.addr)
        .setSecurityFile(root.resolve("security/client.security").toString()))) {
      StoreImpl store = (StoreImpl) kv;
      Version ver = store.put(key("t", "a"), v("secret"));
      assertEquals(ver, store.get(key("t", "a")).getVersion());
      CallSocket s = store.router.conn(lite.addr).socket;
      assertFalse(s.off(), "a secure lite serves the call socket");
      assertTrue(s.opened() >= 1, "no call socket link was opened");
    } finally {
      lite.stop();
      Procs.rmrf(root);
    }
  }

  /** A write to a helper host that refuses the connection was never sent: it goes to another host. */
  @Test
  void refusedConnectionIsNotSent() throws Exception {
    int dead;
    try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      dead = ss.getLocalPort(); // closed: connections to it are refused
    }
    try (KVStore store = KVStoreFactory.getStore(new KVStoreConfig(Procs.STORE, Procs.lite().addr,
        "127.0.0.1:" + dead))) {
      for (int i = 0; i < 10; i++) {
        assertNotNull(store.put(key("r", "k" + i), v("x")), "put " + i);
      }
    }
  }

  /** A write whose answer is lost may have been applied: it is reported so and not resent. */
  @Test
  void lostWriteIsMaybeApplied() throws Exception {
    String addr = Procs.lite().addr;
    try (Proxy p = new Proxy(addr, 2); // call 1: the StoreInfo of opening the store
        KVStore store = KVStoreFactory.getStore(new KVStoreConfig(Procs.STORE, p.addr()));
        KVStore direct = KVStoreFactory.getStore(new KVStoreConfig(Procs.STORE, addr))) {
      FaultException e = assertThrows(FaultException.class, () -> store.put(key("w", "a"), v("x")));
      assertTrue(e.maybeApplied(), e.toString());
      assertEquals(2, p.calls.get(), "the write was sent again");
      Procs.waitFor(() -> direct.get(key("w", "a")) != null, 5000, "the write that was sent to arrive");
    }
  }

  /** A call whose answer does not come in time times out, and its late answer is not read as the next call's. */
  @Test
  void timeoutClosesTheLink() throws Exception {
    try (Proxy p = new Proxy(Procs.lite().addr, 0);
        KVStore store = KVStoreFactory.getStore(new KVStoreConfig(Procs.STORE, p.addr())
            .setRequestTimeout(500, TimeUnit.MILLISECONDS))) {
      store.put(key("l", "a"), v("first")); // answered: the proxy holds only the call after
      p.holdNext = true;
      assertThrows(RequestTimeoutException.class, () -> store.get(key("l", "a")));
      p.release();
      store.put(key("l", "b"), v("second"));
      ValueVersion got = store.get(key("l", "b"));
      assertEquals("second", new String(got.getValue().getValue(), UTF_8));
    }
  }

  /**
   * A node that accepts but never answers the preface: the link times out
   * at the call's deadline (the watchdog closes it; the socket has no
   * SO_TIMEOUT), as a call never sent, and the socket stays on.
   */
  @Test
  @Timeout(20)
  void silentNodeTimesOutAsNotSent() throws Exception {
    try (ServerSocket ss = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      List<Socket> accepted = new CopyOnWriteArrayList<>();
      Thread t = new Thread(() -> {
        try {
          while (true) {
            accepted.add(ss.accept()); // and say nothing
          }
        } catch (IOException closed) {
          // the test ended
        }
      }, "silent-node");
      t.setDaemon(true);
      t.start();
      CallSocket s = new CallSocket("127.0.0.1:" + ss.getLocalPort(), null, null, TimeUnit.SECONDS.toNanos(30));
      long start = System.nanoTime();
      io.grpc.StatusRuntimeException e = assertThrows(io.grpc.StatusRuntimeException.class,
          () -> s.call(Wire.GET, Wire.body(io.cairndb.kv.proto.GetRequest.getDefaultInstance()),
              io.cairndb.kv.proto.GetResponse.parser()::parseFrom, start + TimeUnit.MILLISECONDS.toNanos(300)));
      long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      assertEquals(io.grpc.Status.Code.UNAVAILABLE, e.getStatus().getCode(), e.toString());
      assertTrue(e.getCause() instanceof java.net.ConnectException, "not reported as never sent: " + e);
      assertTrue(e.getMessage().contains("timed out"), e.getMessage());
      assertTrue(took >= 300 && took < 5000, "timed out after " + took + " ms, not at the 300 ms deadline");
      assertFalse(s.off(), "a timeout is not a node without the call socket");
      s.close();
      for (Socket c : accepted) {
        c.close();
      }
    }
  }

  /**
   * A TCP proxy to a node. gRPC connections are relayed whole. On a call
   * socket it relays the prefaces, then each call frame to the node and
   * its answers back, except: it closes both sides after call number
   * dropAt (counted over the proxy's links from 1; 0: never), whose answer
   * is lost; with holdNext set, it relays the next call but holds its
   * answers until release. A store's first call on its socket is the
   * StoreInfo of opening it.
   */
  private static final class Proxy implements AutoCloseable {
    final ServerSocket ss = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    final String node;
    final int dropAt;
    final AtomicInteger calls = new AtomicInteger();
    final List<Socket> open = new CopyOnWriteArrayList<>();
    /** Hold the answers of the next call until release. */
    volatile boolean holdNext;
    private final Object held = new Object();
    private boolean released;

    Proxy(String node, int dropAt) throws IOException {
      this.node = node;
      this.dropAt = dropAt;
      Thread t = new Thread(this::accept, "proxy");
      t.setDaemon(true);
      t.start();
    }

    String addr() {
      return "127.0.0.1:" + ss.getLocalPort();
    }

    void release() {
      synchronized (held) {
        released = true;
        held.notifyAll();
      }
    }

    private void accept() {
      try {
        while (true) {
          Socket c = ss.accept();
          open.add(c);
          Thread t = new Thread(() -> serve(c), "proxy-conn");
          t.setDaemon(true);
          t.start();
        }
      } catch (IOException closed) {
        // close()
      }
    }

    private void serve(Socket c) {
      int i = node.lastIndexOf(':');
      Socket n = null;
      boolean piped = false;
      try {
        n = new Socket(node.substring(0, i), Integer.parseInt(node.substring(i + 1)));
        open.add(n);
        byte[] first = c.getInputStream().readNBytes(CallSocket.PREFACE.length);
        n.getOutputStream().write(first);
        if (!Arrays.equals(first, CallSocket.PREFACE)) {
          pipe(n.getInputStream(), c.getOutputStream());
          pipe(c.getInputStream(), n.getOutputStream());
          piped = true;
          return;
        }
        c.getOutputStream().write(n.getInputStream().readNBytes(CallSocket.PREFACE.length));
        DataInputStream in = new DataInputStream(c.getInputStream());
        DataInputStream answers = new DataInputStream(n.getInputStream());
        while (true) {
          byte[] frame = new byte[in.readInt()];
          in.readFully(frame);
          int call = calls.incrementAndGet();
          OutputStream to = n.getOutputStream();
          to.write(new byte[] {(byte) (frame.length >>> 24), (byte) (frame.length >>> 16),
              (byte) (frame.length >>> 8), (byte) frame.length});
          to.write(frame);
          if (call == dropAt) {
            Thread.sleep(200); // the node takes the call; its answer goes nowhere
            return;
          }
          if (holdNext) {
            holdNext = false;
            synchronized (held) {
              while (!released) {
                held.wait();
              }
            }
          }
          relayOne(answers, c.getOutputStream());
        }
      } catch (IOException | InterruptedException e) {
        // a side closed
      } finally {
        if (!piped) {
          closeQuietly(c);
          closeQuietly(n);
        }
      }
    }

    private static void closeQuietly(Socket s) {
      if (s == null) {
        return;
      }
      try {
        s.close();
      } catch (IOException ignored) {
        // closing
      }
    }

    private static void relayOne(DataInputStream from, OutputStream to) throws IOException {
      int n = from.readInt();
      byte[] b = new byte[n];
      from.readFully(b);
      to.write(new byte[] {(byte) (n >>> 24), (byte) (n >>> 16), (byte) (n >>> 8), (byte) n});
      to.write(b);
    }

    private static void pipe(InputStream from, OutputStream to) {
      Thread t = new Thread(() -> {
        try {
          from.transferTo(to);
        } catch (IOException ignored) {
          // a side closed
        }
      }, "proxy-pipe");
      t.setDaemon(true);
      t.start();
    }

    @Override
    public void close() throws IOException {
      release();
      ss.close();
      for (Socket s : open) {
        s.close();
      }
    }
  }
}
