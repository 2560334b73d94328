package io.cairndb.kv;

import java.util.concurrent.TimeUnit;

/**
 * A write's durability, timeout and time to live, as
 * {@code oracle.kv.table.WriteOptions}. Null or zero fields take the store
 * handle's defaults. Not thread-safe.
 */
public class WriteOptions {
  private Durability durability;
  private long timeout;
  private TimeUnit timeoutUnit;
  private TimeToLive ttl;

  public WriteOptions() {}

  public WriteOptions(Durability durability, long timeout, TimeUnit timeoutUnit) {
    this.durability = durability;
    this.timeout = timeout;
    this.timeoutUnit = timeoutUnit;
  }

  public WriteOptions setDurability(Durability d) {
    this.durability = d;
    return this;
  }

  public Durability getDurability() {
    return durability;
  }

  public WriteOptions setTimeout(long timeout, TimeUnit unit) {
    this.timeout = timeout;
    this.timeoutUnit = unit;
    return this;
  }

  public long getTimeout() {
    return timeout;
  }

  public TimeUnit getTimeoutUnit() {
    return timeoutUnit;
  }

  public WriteOptions setTTL(TimeToLive ttl) {
    this.ttl = ttl;
    return this;
  }

  public TimeToLive getTTL() {
    return ttl;
  }
}
