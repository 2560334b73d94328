package io.cairndb.kv;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Enforces the call socket's deadlines from one daemon thread, so that the
 * callers' sockets need no SO_TIMEOUT. With a timeout, the JDK's socket
 * reads in non-blocking mode for good: a read that finds no answer yet costs
 * a read, a poll and a second read; without one it is a single blocking
 * read (docs/design/20261128_call_socket.md, "Deadlines").
 *
 * <p>A {@link Timer} is armed with its deadline before a blocking step
 * (connect, handshake, preface, a call) and disarmed after it. Every
 * {@link #TICK} while any timer exists, the thread fires the armed timers
 * whose deadline has passed: it marks them expired and runs their action
 * (closing the socket, which fails the blocked read or write). A deadline is
 * thus enforced at most one tick late.
 *
 * <p>Each timer's state is one atomic word: {@code IDLE}, {@code EXPIRED},
 * or an armed deadline. Firing and disarming both swap it, so exactly one of
 * them wins: a caller whose disarm returns {@code EXPIRED} knows its socket
 * was closed (its answer, if read, is still good, but the socket is not).
 *
 * <p>Thread-safe.
 */
final class Watchdog {
  /** How often the deadlines are checked while any timer exists. */
  static final long TICK = TimeUnit.MILLISECONDS.toNanos(10);

  private static final long IDLE = Long.MIN_VALUE;
  private static final long EXPIRED = Long.MIN_VALUE + 1;

  static final Watchdog INSTANCE = new Watchdog();

  private final Set<Timer> timers = ConcurrentHashMap.newKeySet();
  private volatile Thread thread;

  private Watchdog() {}

  /** A deadline for one socket's blocking steps; call {@link Timer#stop} when the socket closes. */
  final class Timer {
    private final AtomicLong state = new AtomicLong(IDLE);
    private final Runnable onExpiry;

    private Timer(Runnable onExpiry) {
      this.onExpiry = onExpiry;
    }

    /** Fires at deadline (System.nanoTime()) unless disarmed before. */
    void arm(long deadline) {
      state.set(Math.max(deadline, EXPIRED + 1));
    }

    /** Stops the timer; true if it had fired (the socket is closed). */
    boolean disarm() {
      return state.getAndSet(IDLE) == EXPIRED;
    }

    /** Whether the timer fired since it was last armed. */
    boolean expired() {
      return state.get() == EXPIRED;
    }

    /** Forgets the timer for good (its socket closed). */
    void stop() {
      timers.remove(this);
    }

    private void check(long now) {
      long d = state.get();
      if (d != IDLE && d != EXPIRED && now - d >= 0 && state.compareAndSet(d, EXPIRED)) {
        onExpiry.run();
      }
    }
  }

  /** A new timer that runs onExpiry (from the watchdog's thread) when it fires. */
  Timer timer(Runnable onExpiry) {
    Timer t = new Timer(onExpiry);
    timers.add(t);
    Thread th = thread;
    if (th == null) {
      th = start();
    }
    LockSupport.unpark(th);
    return t;
  }

  private synchronized Thread start() {
    if (thread == null) {
      Thread th = new Thread(this::run, "cairn-call-socket-watchdog");
      th.setDaemon(true);
      th.start();
      thread = th;
    }
    return thread;
  }

  private void run() {
    while (true) {
      if (timers.isEmpty()) {
        LockSupport.park(this); // timer() unparks
        continue;
      }
      LockSupport.parkNanos(this, TICK);
      long now = System.nanoTime();
      for (Timer t : timers) {
        try {
          t.check(now);
        } catch (RuntimeException e) {
          // an action failed (a close that threw): the socket is being given up anyway
        }
      }
    }
  }
}
