package io.cairndb.kv;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The call socket's watchdog: a timer fires once its deadline passes, and never after it is disarmed. */
class WatchdogTest {
  @Test
  void armedTimerFiresAfterItsDeadline() throws Exception {
    CountDownLatch fired = new CountDownLatch(1);
    Watchdog.Timer t = Watchdog.INSTANCE.timer(fired::countDown);
    try {
      long armedAt = System.nanoTime();
      t.arm(armedAt + TimeUnit.MILLISECONDS.toNanos(50));
      assertTrue(fired.await(5, TimeUnit.SECONDS), "the timer did not fire");
      assertTrue(System.nanoTime() - armedAt >= TimeUnit.MILLISECONDS.toNanos(50), "the timer fired early");
      assertTrue(t.expired());
      assertTrue(t.disarm(), "disarm after firing must say the timer fired");
      assertFalse(t.expired(), "disarm resets the timer");
    } finally {
      t.stop();
    }
  }

  @Test
  void disarmedTimerNeverFires() throws Exception {
    CountDownLatch fired = new CountDownLatch(1);
    Watchdog.Timer t = Watchdog.INSTANCE.timer(fired::countDown);
    CountDownLatch other = new CountDownLatch(1);
    Watchdog.Timer witness = Watchdog.INSTANCE.timer(other::countDown);
    try {
      t.arm(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(30));
      assertFalse(t.disarm(), "a timer disarmed before its deadline did not fire");
      // A witness armed later fires only after the watchdog has looked at both past the first deadline.
      witness.arm(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(60));
      assertTrue(other.await(5, TimeUnit.SECONDS), "the witness timer did not fire");
      assertFalse(fired.await(2 * Watchdog.TICK, TimeUnit.NANOSECONDS), "a disarmed timer fired");
    } finally {
      t.stop();
      witness.stop();
    }
  }
}
