package dev.profold.collector.fold;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.testing.MutableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link FoldWorker#call}: a task the fold thread has not reached when its caller stops waiting
 * never runs. The fold thread is held by not starting the worker, so nothing depends on timing.
 */
class FoldWorkerCallTest {
  static final Duration LONG = Duration.ofMinutes(1);

  final CollectorMetrics metrics = new CollectorMetrics(new SimpleMeterRegistry());
  final FoldWorker worker =
      new FoldWorker(
          new FoldEngine(
              new FoldConfig(10_000_000_000L, 5, 100),
              new GlobalDictionary(100),
              MutableClock.atNanos(1_700_000_000_000_000_000L),
              metrics),
          metrics,
          1 << 20,
          Duration.ofMillis(100),
          Duration.ofSeconds(5));

  @AfterEach
  void stop() throws InterruptedException {
    worker.shutdown(LONG);
  }

  @Test
  void aCallRunsOnTheFoldThreadAndReturnsItsResult() throws Exception {
    worker.start();
    assertThat(worker.call(() -> Thread.currentThread().getName(), LONG)).isEqualTo("profold-fold");
  }

  @Test
  void aCallTheFoldThreadDidNotReachInTimeNeverRuns() throws Exception {
    AtomicBoolean ran = new AtomicBoolean();
    // The worker is not started: the fold thread cannot reach the call before the caller gives up.
    assertThatThrownBy(
            () ->
                worker.call(
                    () -> {
                      ran.set(true);
                      return null;
                    },
                    Duration.ZERO))
        .isInstanceOf(TimeoutException.class);
    worker.start();
    // Tasks run in order: once a later call has run, the abandoned one was dequeued before it.
    assertThat(worker.call(() -> "later", LONG)).isEqualTo("later");
    assertThat(ran).isFalse();
  }

  @Test
  void aCallThatFailsReportsWhatItThrew() {
    worker.start();
    assertThatThrownBy(
            () ->
                worker.call(
                    () -> {
                      throw new IllegalArgumentException("two rules named A");
                    },
                    LONG))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(IllegalArgumentException.class)
        .hasRootCauseMessage("two rules named A");
  }
}
