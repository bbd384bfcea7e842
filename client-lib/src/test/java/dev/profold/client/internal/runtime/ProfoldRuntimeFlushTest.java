package dev.profold.client.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.client.ProfoldConfig;
import dev.profold.client.Region;
import dev.profold.client.internal.record.Recorder;
import dev.profold.proto.v1.ClientOverhead;
import dev.profold.proto.v1.Delta;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ProfoldRuntimeFlushTest {
  @Test
  void aFlushThatThrowsAnErrorDoesNotEndTheFixedRateSchedule() throws Exception {
    ProfoldRuntime r =
        ProfoldRuntime.start(
            ProfoldConfig.builder()
                .service("s")
                .endpoint("127.0.0.1:1")
                .interval(Duration.ofHours(1)) // its own flushes stay out of the way
                .build());
    ScheduledExecutorService schedule = Executors.newSingleThreadScheduledExecutor();
    try {
      AtomicInteger runs = new AtomicInteger();
      CountDownLatch afterErrors = new CountDownLatch(2);
      schedule.scheduleAtFixedRate(
          () ->
              r.flushSafely(
                  () -> {
                    switch (runs.incrementAndGet()) {
                      case 1 -> throw new StackOverflowError("planted");
                      case 2 -> throw new OutOfMemoryError("planted");
                      case 3 -> throw new IllegalStateException("planted");
                      default -> afterErrors.countDown();
                    }
                  }),
          0,
          1,
          TimeUnit.MILLISECONDS);
      assertThat(afterErrors.await(30, TimeUnit.SECONDS)).as("flushes after the failures").isTrue();
    } finally {
      schedule.shutdownNow();
      r.shutdown(Duration.ofMillis(100));
    }
  }

  @Test
  void aFlushWhoseDeltaTheCollectorRefusesReturnsFalse() throws Exception {
    try (AckingCollector refusing = AckingCollector.refusing();
        AckingCollector acking = new AckingCollector()) {
      ProfoldRuntime refused = start(refusing);
      ProfoldRuntime applied = start(acking);
      try {
        assertThat(refused.flush(Duration.ofSeconds(30))).isFalse();
        assertThat(refusing.received()).isNotEmpty(); // it was answered, not timed out
        assertThat(applied.flush(Duration.ofSeconds(30))).isTrue();
      } finally {
        refused.shutdown(Duration.ofMillis(100));
        applied.shutdown(Duration.ofSeconds(5));
      }
    }
  }

  @Test
  void aFlushWhoseDeltaIsRefusedRetryablyAndThenAppliedReturnsTrue() throws Exception {
    // A collector restarting during a batch job's flush: the delta is asked for again, resent and
    // applied, and nothing was lost; the flush said false, and jobs that fail on it failed.
    try (AckingCollector collector = AckingCollector.retryingFirst()) {
      ProfoldRuntime r = start(collector);
      try {
        assertThat(r.flush(Duration.ofSeconds(30))).isTrue();
        assertThat(collector.received()).hasSize(2); // refused, then applied
      } finally {
        r.shutdown(Duration.ofSeconds(5));
      }
    }
  }

  /**
   * A flush that fails after it took the counts for its delta (an OutOfMemoryError while building
   * or submitting it) must not lose them: the next delta reports them, with the failed interval's
   * values as events dropped.
   */
  @Test
  void theCountsOfADeltaThatFailedToGoOutArriveWithTheNext() throws Exception {
    try (AckingCollector collector = new AckingCollector()) {
      ProfoldRuntime r = start(collector);
      try {
        Recorder rec = r.recorder();
        rec.record(rec.metric("values", ""), 1.0);
        rec.record(rec.metric("values", ""), 2.0);
        Region closedTwice = rec.region("twice", dev.profold.client.Kind.COMPUTE);
        closedTwice.close();
        closedTwice.close(); // misuse: closed_twice 1
        failOneFlushAfterTheClose(r);
        assertThat(r.flush(Duration.ofSeconds(30))).isTrue();
        List<Delta> received = collector.received();
        assertThat(received).hasSize(1);
        ClientOverhead o = received.get(0).getOverhead();
        assertThat(o.getEventsDropped()).as("the failed interval's 3 values").isEqualTo(3);
        assertThat(o.getMisuseMap()).containsEntry("closed_twice", 1L);
      } finally {
        r.shutdown(Duration.ofSeconds(5));
      }
    }
  }

  /**
   * The thread activity of an interval whose delta failed to go out goes with the next delta: the
   * CPU time a thread spent in it is not lost (nor shown as idle), and the thread's wall time over
   * the two intervals is not more than the delta's span.
   */
  @Test
  void theThreadActivityOfADeltaThatFailedToGoOutArrivesWithTheNext() throws Exception {
    try (AckingCollector collector = new AckingCollector()) {
      ProfoldRuntime r = start(collector);
      try {
        java.lang.management.ThreadMXBean mx =
            java.lang.management.ManagementFactory.getThreadMXBean();
        long from = mx.getCurrentThreadCpuTime();
        long x = 0;
        while (mx.getCurrentThreadCpuTime() - from < 200_000_000L) {
          x += Long.numberOfTrailingZeros(x + System.nanoTime());
        }
        long burnt = mx.getCurrentThreadCpuTime() - from;
        failOneFlushAfterTheClose(r);
        assertThat(r.flush(Duration.ofSeconds(30))).isTrue();
        Delta d = collector.received().get(0);
        long span = d.getIntervalEndUnixNanos() - d.getIntervalStartUnixNanos();
        String group =
            dev.profold.client.internal.record.ThreadGroups.normalise(
                Thread.currentThread().getName());
        dev.profold.proto.v1.ThreadGroupActivity mine =
            d.getThreadActivityList().stream()
                .filter(g -> g.getThreadGroup().equals(group))
                .findFirst()
                .orElseThrow();
        assertThat(mine.getCpuSumNanos())
            .as("before the fix: the failed interval's %d ns of CPU were lost (x=%d)", burnt, x)
            .isGreaterThanOrEqualTo(burnt);
        assertThat(mine.getWallNanos())
            .as("before the fix: the second close counted the failed interval's wall again")
            .isLessThanOrEqualTo(span * mine.getThreads());
      } finally {
        r.shutdown(Duration.ofSeconds(5));
      }
    }
  }

  @Test
  void deltasSayHowLongIoWentUnobservedOnceSomethingObservesItAndAFailedFlushLosesNothing()
      throws Exception {
    try (AckingCollector collector = new AckingCollector()) {
      ProfoldRuntime r = start(collector);
      try {
        assertThat(r.flush(Duration.ofSeconds(30))).isTrue();
        assertThat(collector.received().get(0).hasIoObservation())
            .as("nothing observes I/O: not said")
            .isFalse();
        long[] off = {300};
        r.activity().observeIo(() -> off[0]);
        failOneFlushAfterTheClose(r);
        off[0] = 500;
        r.activity().observeIo(null); // the agent closed before the next flush
        assertThat(r.flush(Duration.ofSeconds(30))).isTrue();
        List<Delta> received = collector.received();
        assertThat(received.get(received.size() - 1).getIoObservation().getUnobservedNanos())
            .as("the failed flush's 300 ns and the 200 ns after, up to the close")
            .isEqualTo(500);
      } finally {
        r.shutdown(Duration.ofSeconds(5));
      }
    }
  }

  @Test
  void aLastIntervalThatFailsAtShutdownIsSaidToHaveFailedNotToHaveRunOutOfTime() throws Exception {
    try (AckingCollector collector = new AckingCollector()) {
      ProfoldRuntime r = start(collector);
      r.beforeSubmit =
          () -> {
            throw new IllegalStateException("planted");
          };
      List<String> warnings =
          dev.profold.client.internal.LogCapture.warnings(
              "dev.profold.client", () -> r.shutdown(Duration.ofSeconds(30)));
      assertThat(warnings)
          .as("before the fix: 'the shutdown's bound of 30000 ms ran out'")
          .anyMatch(
              w ->
                  w.startsWith(
                      "Profold: the last interval was not sent: the interval failed:"
                          + " java.lang.IllegalStateException: planted"));
    }
  }

  private static ProfoldRuntime start(AckingCollector collector) {
    return ProfoldRuntime.start(
        ProfoldConfig.builder()
            .service("flush-test")
            .endpoint(collector.endpoint())
            .interval(Duration.ofHours(1))
            .build());
  }

  /**
   * Runs one flush of {@code r} that fails after its interval was closed and its delta built (an
   * OutOfMemoryError as it is submitted), as the runtime's own schedule would run it.
   */
  static void failOneFlushAfterTheClose(ProfoldRuntime r) {
    r.beforeSubmit =
        () -> {
          throw new OutOfMemoryError("planted");
        };
    assertThatThrownBy(r::flushInterval).isInstanceOf(OutOfMemoryError.class);
    r.beforeSubmit = () -> {};
  }
}
