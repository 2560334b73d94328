package io.cairndb.kv;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * The call socket to one node (docs/design/20261128_call_socket.md): the
 * call stream's calls and answers, framed by a length on a bare TCP (or
 * TLS) connection instead of HTTP/2 and gRPC, as the Go server serves them
 * (internal/server/callconn.go).
 *
 * <pre>
 *   client: "CAIRN-CALLS/1\r\n", then frames of CallsRequest
 *   node:   "CAIRN-CALLS/1\r\n", then frames of CallsResponse
 *   frame:  uint32 big-endian length n, then n bytes of the message
 *   an answer with id 0 ends the connection: its status is the node's
 * </pre>
 *
 * <p>A thread takes an idle connection (or opens one), sends its call,
 * reads the answer itself and puts the connection back: one call per
 * connection at a time, so a call costs one write and one read on the
 * caller's thread and no hand-off to another. A call that times out or
 * fails closes its connection (the node then cancels it), so a late answer
 * is never read as another call's. A node that does not answer the
 * preface (an older server, or one run with --no-http) turns the socket
 * off for good, and the connection calls on its gRPC stream instead. The
 * sockets have no SO_TIMEOUT, so a read blocks in one system call; the
 * {@link Watchdog} enforces the deadlines by closing the socket.
 *
 * <p>Thread-safe.
 */
final class CallSocket {
  static final byte[] PREFACE = "CAIRN-CALLS/1\r\n".getBytes(StandardCharsets.US_ASCII);
  static final String ALPN = "cairn-calls/1";
  /** The largest frame either side sends (the node's limit, as gRPC's message limit). */
  static final int MAX_FRAME = 64 << 20;
  /** How many idle connections a node keeps; more are closed when put back. */
  private static final int MAX_IDLE = 64;

  private final String host;
  private final int port;
  private final SSLSocketFactory tls; // null: plaintext
  private final Session session; // null: no login
  private final long connectTimeout; // nanoseconds
  private final ConcurrentLinkedDeque<Link> idle = new ConcurrentLinkedDeque<>();
  private volatile boolean off;
  private volatile boolean closed;
  private final AtomicInteger opened = new AtomicInteger();
  private final AtomicInteger idleCount = new AtomicInteger(); // idle's size (its size() walks it)

  CallSocket(String addr, SSLSocketFactory tls, Session session, long connectTimeoutNanos) {
    this.connectTimeout = connectTimeoutNanos;
    int i = addr.lastIndexOf(':');
    this.host = addr.substring(0, i);
    this.port = Integer.parseInt(addr.substring(i + 1));
    this.tls = tls;
    this.session = session;
  }

  /** How many links have been opened (for tests). */
  int opened() {
    return opened.get();
  }

  /** Whether the node has no call socket: calls go on the gRPC stream. */
  boolean off() {
    return off;
  }

  /**
   * Sends req as a call of op (a StreamCall field, Wire.GET...) and reads
   * its answer before deadline (System.nanoTime()), its response decoded
   * by dec while the link is held. Throws what CallStream.call throws: the
   * answer's status, UNAVAILABLE when the connection broke (caused by a
   * ConnectException if it was never made, so the call was not sent),
   * DEADLINE_EXCEEDED, or NoStream when the node has no call socket (the
   * call was not sent).
   */
  <T> T call(int op, Wire.Body req, Wire.Decoder<T> dec, long deadline) {
    Link l = idle.pollFirst();
    if (l == null) {
      l = open(deadline);
    } else {
      idleCount.decrementAndGet();
    }
    boolean keep = false;
    try {
      Wire.Answer a = l.exchange(op, req, deadline);
      if (a.code != 0) {
        StatusRuntimeException err = CallStream.answerError(a.parse(l.frame));
        keep = true;
        throw err;
      }
      T t = dec.decode(l.frame, a.off, a.len);
      keep = true;
      return t;
    } catch (SocketTimeoutException e) {
      throw Status.DEADLINE_EXCEEDED.withDescription("no answer on the call socket before the deadline")
          .asRuntimeException();
    } catch (IOException e) {
      purge(); // the node went away: its other idle links are dead too
      throw Status.UNAVAILABLE.withDescription("call socket broke: " + e).withCause(e).asRuntimeException();
    } catch (EndFrame e) {
      purge(); // the node is shutting down: it ended every link
      throw e.status;
    } finally {
      if (keep && !l.dead && !closed && idleCount.incrementAndGet() <= MAX_IDLE) {
        idle.offerFirst(l);
      } else {
        if (keep && !l.dead && !closed) {
          idleCount.decrementAndGet();
        }
        l.close();
      }
    }
  }

  /** Closes the idle links. */
  private void purge() {
    for (Link l; (l = idle.pollFirst()) != null; ) {
      idleCount.decrementAndGet();
      l.close();
    }
  }

  /**
   * A new connection that has exchanged prefaces with the node. Connecting,
   * the TLS handshake and the prefaces block without a socket timeout; the
   * watchdog closes the socket if they outlast the deadline.
   */
  private Link open(long callDeadline) {
    if (closed) {
      throw Errors.closed();
    }
    long deadline = Math.min(callDeadline, System.nanoTime() + connectTimeout);
    Socket raw = new Socket();
    Watchdog.Timer timer = Watchdog.INSTANCE.timer(() -> closeQuietly(raw));
    timer.arm(deadline);
    try {
      raw.setTcpNoDelay(true);
      raw.connect(new InetSocketAddress(host, port));
    } catch (IOException e) {
      // A ConnectException (refused, unreachable, timed out) says the call was never sent.
      throw unavailable("connecting to", giveUp(raw, timer, e));
    }
    try {
      Link l = new Link(raw, tls != null ? handshake(raw) : raw, timer);
      l.preface();
      if (timer.disarm()) {
        throw new SocketTimeoutException("timed out");
      }
      opened.incrementAndGet();
      return l;
    } catch (NoSocket e) {
      if (timer.expired()) {
        throw unavailable("opening to", giveUp(raw, timer, e));
      }
      giveUp(raw, timer, e);
      off = true;
      throw CallStream.NO_STREAM;
    } catch (IOException e) {
      throw unavailable("opening to", giveUp(raw, timer, e));
    }
  }

  /** Closes a socket that failed to open; e, or a timeout caused by it if the watchdog fired. */
  private static IOException giveUp(Socket raw, Watchdog.Timer timer, IOException e) {
    boolean fired = timer.disarm();
    timer.stop();
    closeQuietly(raw);
    if (!fired) {
      return e;
    }
    SocketTimeoutException t = new SocketTimeoutException("timed out");
    t.initCause(e);
    return t;
  }

  private StatusRuntimeException unavailable(String what, IOException e) {
    return Status.UNAVAILABLE.withDescription("call socket: " + what + " " + host + ":" + port + ": " + e)
        .withCause(notSent(e)).asRuntimeException();
  }

  private SSLSocket handshake(Socket raw) throws IOException {
    SSLSocket s = (SSLSocket) tls.createSocket(raw, host, port, true);
    SSLParameters p = s.getSSLParameters();
    p.setApplicationProtocols(new String[] {ALPN});
    p.setProtocols(new String[] {"TLSv1.3"});
    p.setEndpointIdentificationAlgorithm("HTTPS"); // the node's certificate names host, as gRPC checks
    s.setSSLParameters(p);
    s.startHandshake();
    if (!ALPN.equals(s.getApplicationProtocol())) {
      throw new NoSocket();
    }
    return s;
  }

  void close() {
    closed = true;
    purge();
  }

  /** e as the cause of a failure before the call was sent: a ConnectException (Errors tells it so). */
  private static ConnectException notSent(IOException e) {
    if (e instanceof ConnectException) {
      return (ConnectException) e;
    }
    ConnectException c = new ConnectException(e.toString());
    c.initCause(e);
    return c;
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // closing
    }
  }

  /** The node did not answer the preface with its own: it has no call socket. */
  private static final class NoSocket extends IOException {
    private static final long serialVersionUID = 1L;
  }

  /** The node's end frame: the status it ended the link with. */
  private static final class EndFrame extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final StatusRuntimeException status;

    EndFrame(StatusRuntimeException status) {
      super(null, null, false, false);
      this.status = status;
    }
  }

  /** One connection, used by one thread at a time. */
  private final class Link {
    private final Socket raw; // the TCP socket, which the watchdog closes
    private final Socket s; // raw, or the TLS socket over it
    private final Watchdog.Timer timer;
    private final OutputStream out;
    private final DataInputStream in;
    private long ids;
    private String sentToken = "";
    private byte[] inBuf = new byte[4096];
    private byte[] frame; // the last frame read: inBuf, or a larger one
    private final Wire.Answer ans = new Wire.Answer();
    private boolean dead; // the watchdog closed it just as its answer came

    Link(Socket raw, Socket s, Watchdog.Timer timer) throws IOException {
      this.raw = raw;
      this.s = s;
      this.timer = timer;
      this.out = s.getOutputStream();
      this.in = new DataInputStream(new BufferedInputStream(s.getInputStream(), 16 << 10));
    }

    void preface() throws IOException {
      out.write(PREFACE);
      out.flush();
      byte[] got = new byte[PREFACE.length];
      try {
        in.readFully(got);
      } catch (EOFException e) {
        throw new NoSocket();
      }
      if (!Arrays.equals(got, PREFACE)) {
        throw new NoSocket();
      }
    }

    /**
     * Sends req as a call of op and reads its answer, the watchdog armed
     * with deadline: a call it cuts short throws SocketTimeoutException.
     * The answer points into frame.
     */
    Wire.Answer exchange(int op, Wire.Body req, long deadline) throws IOException {
      long id = ++ids;
      String token = null;
      if (session != null) {
        String tok = session.token();
        if (!tok.equals(sentToken)) {
          token = tok;
          sentToken = tok;
        }
      }
      byte[] b = Wire.frame(id, op, req, token);
      timer.arm(deadline);
      try {
        out.write(b);
        answer(id, op);
      } catch (IOException e) {
        if (timer.disarm()) {
          SocketTimeoutException t = new SocketTimeoutException("timed out");
          t.initCause(e);
          throw t;
        }
        throw e;
      } catch (RuntimeException e) {
        timer.disarm();
        throw e;
      }
      dead = timer.disarm();
      return ans;
    }

    /** Reads frames until the answer to call id, of op (or the node's end frame). */
    private void answer(long id, int op) throws IOException {
      while (true) {
        int n = receive();
        if (!Wire.find(frame, n, id, ans)) {
          continue;
        }
        if (ans.id == 0) { // the node ended the connection
          StatusRuntimeException st = CallStream.answerError(ans.parse(frame));
          if (st == null) {
            throw new IOException("call socket: the node ended the connection");
          }
          throw new EndFrame(st);
        }
        if (ans.code == 0 && ans.op != 0 && ans.op != op + Wire.ANSWER_OP) {
          throw new IOException("call socket: the answer to a call of op " + op + " has op " + ans.op);
        }
        return;
      }
    }

    /** Reads one frame into frame; its length. */
    private int receive() throws IOException {
      int n = in.readInt();
      if (n < 0 || n > MAX_FRAME) {
        throw new IOException("call socket: a frame of " + Integer.toUnsignedString(n) + " bytes from the node");
      }
      byte[] b = n <= inBuf.length ? inBuf : (n <= (1 << 20) ? (inBuf = new byte[n]) : new byte[n]);
      in.readFully(b, 0, n);
      frame = b;
      return n;
    }

    void close() {
      closeQuietly(s);
      closeQuietly(raw);
      timer.stop();
    }
  }
}
