package dev.profold.client.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.ProfoldConfig;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.ThreadGroupActivity;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A failed flush gives its thread activity to the next delta; when the wall clock steps back before
 * that delta, the delta must still span the activity it carries (the collector refuses a group
 * whose wall time per thread exceeds the delta's interval, and with it the whole delta).
 */
class GiveBackClockStepTest {
  private static final long S = 1_000_000_000L;

  @Test
  void theNextDeltasActivityFitsItsSpanAfterTheClockSteppedBack() throws Exception {
    try (AckingCollector collector = new AckingCollector()) {
      AtomicLong wall = new AtomicLong(1_800_000_000L * S);
      long start = wall.get();
      ProfoldRuntime r =
          ProfoldRuntime.start(
              ProfoldConfig.builder()
                  .service("step-test")
                  .endpoint(collector.endpoint())
                  .interval(Duration.ofHours(1))
                  .build(),
              System::nanoTime,
              (step, budget) -> {},
              wall::get);
      try {
        wall.set(start + 10 * S);
        ProfoldRuntimeFlushTest.failOneFlushAfterTheClose(r);
        wall.set(start + 3 * S); // the clock steps back 7 s

        assertThat(r.flush(Duration.ofSeconds(30))).isTrue();

        Delta d = collector.received().get(0);
        long span = d.getIntervalEndUnixNanos() - d.getIntervalStartUnixNanos();
        assertThat(d.getThreadActivityList()).isNotEmpty();
        for (ThreadGroupActivity g : d.getThreadActivityList()) {
          // The collector's check: wall_nanos / threads <= the interval.
          assertThat(g.getWallNanos() / g.getThreads())
              .as(
                  "group %s: %d ns over %d threads, span %d ns",
                  g.getThreadGroup(), g.getWallNanos(), g.getThreads(), span)
              .isLessThanOrEqualTo(span);
        }
      } finally {
        r.shutdown(Duration.ofSeconds(5));
      }
    }
  }
}
