package dev.profold.sinks.snapshot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class ThreadActivitySnapshotTest {
  private static final long S = 1_000_000_000L;

  private static ThreadActivitySnapshot spread(int threads, long min, long sum, long max) {
    return new ThreadActivitySnapshot(
        "pool-*",
        ClassTimes.zero(),
        true,
        threads,
        10 * S,
        ClassTimes.zero(),
        0,
        min,
        sum,
        max,
        -1);
  }

  @Test
  void imbalanceIsTheSlowestThreadsExcessOverTheAverageAsAShareOfTheInterval() {
    // Threads of 1, 2 and 6 s: average 3 s, the slowest 3 s above it, 0.3 of a 10 s interval.
    assertThat(spread(3, S, 9 * S, 6 * S).imbalance()).isCloseTo(0.3, within(1e-12));
    assertThat(spread(3, 2 * S, 6 * S, 2 * S).imbalance()).isZero();
  }

  @Test
  void aMergedSpreadWhoseAverageExceedsItsMaximumShowsNoImbalanceRatherThanANegativeOne() {
    // One thread alive in two merged intervals: 2 threads, sum 12 s, max 5 s (average 6 s).
    assertThat(spread(2, 3 * S, 12 * S, 5 * S).imbalance()).isZero();
  }
}
