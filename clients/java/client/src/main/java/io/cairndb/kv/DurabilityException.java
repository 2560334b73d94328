package io.cairndb.kv;

/**
 * Too few replicas acknowledged a write in time for its durability (kind
 * ack_timeout). The write may have been applied: {@link #maybeApplied}.
 */
public class DurabilityException extends FaultException {
  private static final long serialVersionUID = 1L;

  DurabilityException(ErrorInfo info) {
    super(info);
  }
}
