package io.cairndb.kv;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Which replica a read that any replica may serve goes to (client/home.go):
 * a handle's home replica, the first in its own ranking of the nodes, then
 * down the ranking; round robin with setSpreadReads.
 */
class ReadOrderTest {
  private static final long[] REPS = {1, 2, 3};
  private static final Map<Long, Boolean> ALL = Map.of(1L, true, 2L, true, 3L, true);

  @Test
  void homeRankingPerHandle() {
    Set<Long> homes = new HashSet<>();
    for (long salt = 0; salt < 60; salt++) {
      long[] order = Retry.readOrder(REPS, salt, -1);
      long[] sorted = order.clone();
      Arrays.sort(sorted);
      assertArrayEquals(REPS, sorted, "a permutation of the replicas");
      assertArrayEquals(order, Retry.readOrder(REPS, salt, -1), "the same ranking every time");
      homes.add(order[0]);
      assertEquals(order[0], Retry.choose(REPS, false, 0, 0, 0, ALL, Map.of(), order));
      Map<Long, Boolean> homeFailing = Map.of(order[1], true, order[2], true);
      assertEquals(order[1], Retry.choose(REPS, false, 0, 0, 0, homeFailing, Map.of(), order));
      assertEquals(order[2], Retry.choose(REPS, false, 0, 0, 0, ALL, Map.of(order[0], true, order[1], true), order));
      assertEquals(3, Retry.choose(REPS, true, 0, 3, 0, ALL, Map.of(), REPS), "leader routes ignore it");
    }
    assertEquals(Set.of(1L, 2L, 3L), homes, "60 handles' homes cover the nodes");
  }

  @Test
  void spreadIsRoundRobin() {
    for (int rr = 0; rr < 6; rr++) {
      assertEquals(REPS[rr % 3], Retry.readOrder(REPS, 7, rr)[0]);
    }
  }
}
