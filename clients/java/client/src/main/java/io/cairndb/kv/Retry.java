package io.cairndb.kv;

import io.grpc.Status;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

/** The retry rules of the Go client (client/route.go), as pure functions. */
final class Retry {
  private Retry() {}

  private static final long MAX_BACKOFF = 500_000_000L;

  enum What { GIVE_UP, FOLLOW_LEADER, TRY_ELSEWHERE, OTHER_REPLICA, REFRESH, RETRY_LATER }

  static boolean retryable(ErrorInfo e, boolean write) {
    if (e.code == Status.Code.CANCELLED || e.code == Status.Code.DEADLINE_EXCEEDED) {
      return false;
    }
    if (e.kind.equals("consistency_timeout") || e.kind.equals("disk_full")) {
      return false;
    }
    boolean again = e.action == FaultException.Action.RETRY || e.action == FaultException.Action.REFRESH;
    if (write) {
      return again && !e.maybeApplied;
    }
    return again || e.code == Status.Code.UNAVAILABLE;
  }

  static What classify(ErrorInfo e, boolean write) {
    if (e.code == Status.Code.CANCELLED || e.code == Status.Code.DEADLINE_EXCEEDED) {
      return What.GIVE_UP;
    }
    if (write && e.maybeApplied) {
      return What.GIVE_UP;
    }
    switch (e.kind) {
      case "not_leader":
        return What.FOLLOW_LEADER;
      case "wrong_shard":
      case "stale_topology":
        return What.REFRESH;
      case "shutting_down":
        return What.TRY_ELSEWHERE;
      case "rejoining":
        return What.OTHER_REPLICA;
      case "":
        if (e.code == Status.Code.UNAVAILABLE) {
          return What.TRY_ELSEWHERE;
        }
        break;
      default:
        break;
    }
    return retryable(e, write) ? What.RETRY_LATER : What.GIVE_UP;
  }

  /**
   * The order in which a read that any replica may serve tries the replicas
   * (client/home.go): round robin from rr when rr is not negative
   * (KVStoreConfig.setSpreadReads), else the handle's own ranking of the
   * nodes, a hash of its random salt and the node id (rendezvous hashing),
   * so that each handle has a home replica and handles spread over the nodes.
   */
  static long[] readOrder(long[] replicas, long salt, int rr) {
    int n = replicas.length;
    long[] order = new long[n];
    if (rr >= 0) {
      for (int i = 0; i < n; i++) {
        order[i] = replicas[(rr + i) % n];
      }
      return order;
    }
    long[] ranks = new long[n];
    for (int i = 0; i < n; i++) { // an insertion sort by rank: a shard has a handful of replicas
      long x = replicas[i];
      long r = rank(salt, x);
      int j = i;
      for (; j > 0 && r < ranks[j - 1]; j--) {
        order[j] = order[j - 1];
        ranks[j] = ranks[j - 1];
      }
      order[j] = x;
      ranks[j] = r;
    }
    return order;
  }

  /** A node's rank for a salt: the JDK's SplittableRandom mixes the two. */
  private static long rank(long salt, long node) {
    return new java.util.SplittableRandom(salt ^ node).nextLong();
  }

  /**
   * The node for one attempt: for the leader, the cached leader, the
   * preferred node, then the replicas in order; otherwise the sticky
   * replica, then the read order (readOrder). The first usable node not
   * avoided wins, then the first not avoided, then the first.
   */
  static long choose(long[] replicas, boolean leader, long cached, long preferred, long stick,
      Map<Long, Boolean> usable, Map<Long, Boolean> avoid, long[] reads) {
    int n = replicas.length;
    long[] order = new long[n + 2];
    int k = 0;
    if (leader) {
      order[k++] = cached;
      order[k++] = preferred;
      for (long r : replicas) {
        order[k++] = r;
      }
    } else {
      order[k++] = stick;
      for (long r : reads) {
        order[k++] = r;
      }
    }
    long firstValid = 0;
    long firstFree = 0;
    for (int i = 0; i < k; i++) {
      long x = order[i];
      if (x == 0 || !contains(replicas, x)) {
        continue;
      }
      if (firstValid == 0) {
        firstValid = x;
      }
      boolean free = !avoid.containsKey(x);
      if (free && Boolean.TRUE.equals(usable.get(x))) {
        return x;
      }
      if (free && firstFree == 0) {
        firstFree = x;
      }
    }
    return firstFree != 0 ? firstFree : firstValid;
  }

  private static boolean contains(long[] a, long x) {
    for (long v : a) {
      if (v == x) {
        return true;
      }
    }
    return false;
  }

  /**
   * Waits a jittered backoff, then doubles it up to 500 ms; false without
   * waiting if the deadline leaves no room.
   */
  static boolean sleep(long deadline, long[] backoff) {
    long wait = Router.jitter(backoff[0]);
    if (deadline - System.nanoTime() < wait) {
      return false;
    }
    LockSupport.parkNanos(wait);
    backoff[0] = Math.min(2 * backoff[0], MAX_BACKOFF);
    return true;
  }

  /** When every replica failed (or the leader could not be found), says so, naming what each said. */
  static ErrorInfo shardFailure(ErrorInfo last, long shard, long[] reps, boolean leader, Map<Long, ErrorInfo> seen) {
    if (shard == 0 || reps.length == 0 || last.code == Status.Code.CANCELLED) {
      return last;
    }
    boolean all = true;
    StringBuilder tried = new StringBuilder();
    for (long r : reps) {
      ErrorInfo e = seen.get(r);
      if (e == null) {
        all = false;
        continue;
      }
      tried.append(tried.length() == 0 ? "" : ", ").append("sn").append(r)
          .append(" (").append(e.kind.isEmpty() ? e.code.toString() : e.kind).append(')');
    }
    if (!all && !leader) {
      return last;
    }
    ErrorInfo e = ErrorInfo.of("shard rg" + shard + (leader ? " has no leader" : " could not serve the read")
        + ": tried " + tried + "; last: " + last.text, last.code, last.kind, last.action);
    e.maybeApplied = last.maybeApplied;
    e.shard = "rg" + shard;
    e.cause = last.cause;
    return e;
  }
}
