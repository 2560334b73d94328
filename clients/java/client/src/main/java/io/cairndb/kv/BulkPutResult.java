package io.cairndb.kv;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The outcome of {@link KVStore#putMany}, one entry per record in the order
 * the iterator gave them: the new version, or the exception why the record
 * was not written (a {@link FaultException} with {@code maybeApplied()} for
 * an unknown outcome, never retried; an {@link InvalidArgumentException} for
 * a record the server refused).
 */
public final class BulkPutResult {
  private final List<Version> versions;
  private final List<RuntimeException> errors;
  private final List<Integer> failed;

  BulkPutResult(List<Version> versions, List<RuntimeException> errors) {
    this.versions = versions;
    this.errors = errors;
    List<Integer> f = new ArrayList<>();
    for (int i = 0; i < errors.size(); i++) {
      if (errors.get(i) != null) {
        f.add(i);
      }
    }
    this.failed = Collections.unmodifiableList(f);
  }

  /** How many records were given. */
  public int size() {
    return versions.size();
  }

  /** How many were written. */
  public int getSucceeded() {
    return versions.size() - failed.size();
  }

  /** The indexes of the records not written (or maybe not). */
  public List<Integer> getFailedIndexes() {
    return failed;
  }

  /** Record i's new version; null if it failed. */
  public Version getVersion(int i) {
    return versions.get(i);
  }

  /** Why record i was not written; null if it was. */
  public RuntimeException getError(int i) {
    return errors.get(i);
  }

  @Override
  public String toString() {
    return "BulkPutResult(" + getSucceeded() + " of " + size() + " written)";
  }
}
