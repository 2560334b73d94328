package io.cairndb.kv;

import java.util.concurrent.TimeUnit;

/**
 * Options of {@link KVStore#putMany}, as {@code oracle.kv.BulkWriteOptions}:
 * durability and per-request timeout (null or zero: the handle's defaults),
 * how many requests may be in flight at once (default 8), and a time to
 * live for every record. Not thread-safe.
 */
public class BulkWriteOptions extends WriteOptions {
  private int maxRequestsInFlight = 8;

  public BulkWriteOptions() {}

  public BulkWriteOptions(Durability durability, long timeout, TimeUnit timeoutUnit) {
    super(durability, timeout, timeoutUnit);
  }

  /**
   * At most this many PutMany requests at once (each of one shard's records, up to the store's
   * max_put_many_records records and 4 MiB).
   */
  public BulkWriteOptions setMaxRequestsInFlight(int n) {
    if (n < 1) {
      throw new IllegalArgumentException("BulkWriteOptions: at least one request in flight");
    }
    this.maxRequestsInFlight = n;
    return this;
  }

  public int getMaxRequestsInFlight() {
    return maxRequestsInFlight;
  }
}
