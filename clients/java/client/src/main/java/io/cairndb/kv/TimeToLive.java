package io.cairndb.kv;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** How long a record lives after a write, as {@code oracle.kv.table.TimeToLive}. Immutable. */
public final class TimeToLive {
  /** Never expires. */
  public static final TimeToLive DO_NOT_EXPIRE = new TimeToLive(0);

  private final long millis;

  private TimeToLive(long millis) {
    this.millis = millis;
  }

  public static TimeToLive ofHours(long hours) {
    return of(hours, TimeUnit.HOURS);
  }

  public static TimeToLive ofDays(long days) {
    return of(days, TimeUnit.DAYS);
  }

  /** Any positive duration (Cairn counts in milliseconds; Oracle in hours or days). */
  public static TimeToLive of(long n, TimeUnit unit) {
    if (n < 0 || unit == null) {
      throw new IllegalArgumentException("TimeToLive: must be non-negative with a unit");
    }
    return n == 0 ? DO_NOT_EXPIRE : new TimeToLive(Math.max(unit.toMillis(n), 1));
  }

  public static TimeToLive of(Duration d) {
    return of(d.toMillis(), TimeUnit.MILLISECONDS);
  }

  long toMillis() {
    return millis;
  }

  @Override
  public String toString() {
    return millis == 0 ? "TimeToLive(never)" : "TimeToLive(" + millis + " ms)";
  }
}
