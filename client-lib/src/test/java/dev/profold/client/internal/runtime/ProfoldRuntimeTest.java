package dev.profold.client.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.ProfoldConfig;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ProfoldRuntime}'s flush and shutdown: bounded by one deadline, never throwing, always
 * releasing what they hold. No test measures time: a hang is caught by the watchdog timeout only.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ProfoldRuntimeTest {
  private static final Duration FOREVER = Duration.ofSeconds(Long.MAX_VALUE);

  private ProfoldRuntime runtime;
  private AckingCollector collector;

  @AfterEach
  void stop() {
    if (runtime != null) {
      runtime.shutdown(Duration.ZERO);
    }
    if (collector != null) {
      collector.close();
    }
  }

  private static ProfoldConfig config(String endpoint) {
    return ProfoldConfig.builder()
        .endpoint(endpoint)
        .service("runtime-test")
        .interval(Duration.ofHours(1)) // only explicit flushes
        .build();
  }

  /** A clock that a step moves on by {@code stepNanos} each time it is told its budget. */
  private static final class SteppingClock {
    final AtomicLong now = new AtomicLong(1_000);
    final List<String> budgets = new CopyOnWriteArrayList<>();
    final long stepNanos;

    SteppingClock(Duration step) {
      this.stepNanos = step.toNanos();
    }

    void waiting(String step, Duration budget) {
      budgets.add(step + " " + budget);
      now.addAndGet(stepNanos); // the step takes this long
    }
  }

  @Test
  void eachStepOfAShutdownWaitsOnlyWhatTheEarlierOnesLeft() {
    SteppingClock clock = new SteppingClock(Duration.ofMillis(200));
    ProfoldRuntime r =
        ProfoldRuntime.start(config(AckingCollector.unreachable()), clock.now::get, clock::waiting);
    List<String> order = new CopyOnWriteArrayList<>();
    r.beforeShutdown(() -> order.add("task 1"));
    r.beforeShutdown(() -> order.add("task 2"));
    r.shutdown(Duration.ofMillis(500));
    assertThat(order).containsExactly("task 1", "task 2");
    assertThat(clock.budgets)
        .containsExactly("shutdown tasks PT0.5S", "interval PT0.3S", "acks PT0.1S");
  }

  @Test
  void aStepThatSpendsTheWholeTimeoutLeavesNothingToTheNextOnes() {
    SteppingClock clock = new SteppingClock(Duration.ofSeconds(4));
    ProfoldRuntime r =
        ProfoldRuntime.start(config(AckingCollector.unreachable()), clock.now::get, clock::waiting);
    r.shutdown(Duration.ofSeconds(5));
    assertThat(clock.budgets).containsExactly("shutdown tasks PT5S", "interval PT1S", "acks PT0S");
  }

  @Test
  void aFlushSharesItsTimeoutBetweenTheIntervalAndTheAcks() {
    SteppingClock clock = new SteppingClock(Duration.ofSeconds(3));
    runtime =
        ProfoldRuntime.start(config(AckingCollector.unreachable()), clock.now::get, clock::waiting);
    assertThat(runtime.flush(Duration.ofSeconds(3))).isFalse(); // nothing is acknowledged
    assertThat(clock.budgets).containsExactly("interval PT3S", "acks PT0S");
  }

  @Test
  void aShutdownTaskThatNeverReturnsDoesNotHoldShutdownPastItsTimeout() throws Exception {
    ProfoldRuntime r = ProfoldRuntime.start(config(AckingCollector.unreachable()));
    CountDownLatch interrupted = new CountDownLatch(1);
    r.beforeShutdown(
        () -> {
          try {
            new CountDownLatch(1).await(); // a data source that never stops
          } catch (InterruptedException e) {
            interrupted.countDown();
          }
        });
    r.shutdown(Duration.ofMillis(100)); // before the fix: never returned
    assertThat(interrupted.await(30, TimeUnit.SECONDS)).as("the task is interrupted").isTrue();
  }

  @Test
  void aTimeoutTooLargeForNanosecondsMeansNoLimit() throws Exception {
    collector = new AckingCollector();
    runtime = ProfoldRuntime.start(config(collector.endpoint()));
    assertThat(runtime.flush(FOREVER)).isTrue(); // before the fix: ArithmeticException
    assertThat(runtime.exporterStats().acked()).isEqualTo(1);
  }

  @Test
  void shutdownWithATimeoutTooLargeForNanosecondsStillReleasesEverything() throws Exception {
    collector = new AckingCollector();
    ProfoldRuntime r = ProfoldRuntime.start(config(collector.endpoint()));
    r.shutdown(FOREVER); // before the fix: ArithmeticException, nothing released
    assertThat(r.exporterStats().acked()).isEqualTo(1); // the last interval was sent
    r.flushInterval();
    assertThat(r.exporterStats().dropped()).as("the exporter is closed").isEqualTo(1);
    assertThat(r.flush(Duration.ofSeconds(1))).as("the flush thread is gone").isFalse();
  }

  @Test
  void aFlushAfterShutdownReturnsFalseInsteadOfThrowing() {
    ProfoldRuntime r = ProfoldRuntime.start(config(AckingCollector.unreachable()));
    r.shutdown(Duration.ZERO);
    assertThat(r.flush(Duration.ofSeconds(1))).isFalse(); // before: RejectedExecutionException
    assertThat(ProfoldRuntime.current()).isNull();
  }

  /**
   * A slow interval in progress: a thread holds the monitor {@code flushInterval} takes and a flush
   * is asked for, so the flush thread blocks inside it until {@link #close()}.
   */
  private static final class SlowInterval implements AutoCloseable {
    private final CountDownLatch release = new CountDownLatch(1);
    private final Thread holder;
    private final Thread flusher;

    SlowInterval(ProfoldRuntime r) throws InterruptedException {
      CountDownLatch holding = new CountDownLatch(1);
      holder =
          new Thread(
              () -> {
                synchronized (r) {
                  holding.countDown();
                  try {
                    release.await();
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                }
              });
      holder.start();
      holding.await();
      flusher = new Thread(() -> r.flush(Duration.ofSeconds(30)));
      flusher.start();
      CountDownLatch never = new CountDownLatch(1);
      while (!flushThreadBlocked()) {
        assertThat(never.await(10, TimeUnit.MILLISECONDS)).isFalse();
      }
    }

    private static boolean flushThreadBlocked() {
      return Thread.getAllStackTraces().keySet().stream()
          .anyMatch(
              t -> t.getName().equals("profold-flush") && t.getState() == Thread.State.BLOCKED);
    }

    @Override
    public void close() throws InterruptedException {
      release.countDown();
      holder.join();
      flusher.join();
    }
  }

  @Test
  void shutdownTasksStillQueuedBehindASlowIntervalRunOnAThreadOfTheirOwn() throws Exception {
    runtime = ProfoldRuntime.start(config(AckingCollector.unreachable()));
    ProfoldRuntime r = runtime;
    List<String> ranOn = new CopyOnWriteArrayList<>();
    CountDownLatch ran = new CountDownLatch(1);
    r.beforeShutdown(
        () -> {
          ranOn.add(Thread.currentThread().getName());
          ran.countDown();
        });
    try (SlowInterval slow = new SlowInterval(r)) {
      r.shutdown(Duration.ofMillis(100));
      // shutdown waits for them a second at most: on a loaded machine they may run after it
      assertThat(ran.await(30, TimeUnit.SECONDS)).as("the task ran").isTrue();
      assertThat(ranOn).containsExactly("profold-shutdown-tasks");
    }
    assertThat(ranOn).hasSize(1); // not again on the flush thread
    runtime = null;
  }

  @Test
  void aSlowShutdownTaskLeftBehindASlowIntervalHoldsShutdownAtMostASecondMore() throws Exception {
    List<String> budgets = new CopyOnWriteArrayList<>();
    runtime =
        ProfoldRuntime.start(
            config(AckingCollector.unreachable()),
            System::nanoTime,
            (step, budget) -> budgets.add(step + " " + budget));
    ProfoldRuntime r = runtime;
    CountDownLatch taskStarted = new CountDownLatch(1);
    CountDownLatch taskRelease = new CountDownLatch(1);
    CountDownLatch shutdownReturned = new CountDownLatch(1);
    r.beforeShutdown(
        () -> {
          taskStarted.countDown();
          try {
            taskRelease.await(); // a task that would never end by itself
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    Thread shutdown =
        new Thread(
            () -> {
              r.shutdown(Duration.ofMillis(100));
              shutdownReturned.countDown();
            });
    try (SlowInterval slow = new SlowInterval(r)) {
      shutdown.start();
      assertThat(taskStarted.await(30, TimeUnit.SECONDS)).as("the task ran").isTrue();
      // The task never ends, yet shutdown returns: it waited a bounded time for it, a second.
      assertThat(shutdownReturned.await(30, TimeUnit.SECONDS)).as("shutdown returned").isTrue();
      assertThat(budgets).contains("leftover shutdown tasks PT1S");
    } finally {
      taskRelease.countDown();
      shutdown.join();
    }
    runtime = null;
  }

  @Test
  void aFlushWaitingBehindASlowIntervalReturnsFalseOnceShutdownStopsTheFlushThread()
      throws Exception {
    CountDownLatch queued = new CountDownLatch(1);
    runtime =
        ProfoldRuntime.start(
            config(AckingCollector.unreachable()),
            System::nanoTime,
            (step, budget) -> {
              if (step.equals("interval") && budget.toMinutes() >= 1) { // not the slow one's 30 s
                queued.countDown();
              }
            });
    ProfoldRuntime r = runtime;
    try (SlowInterval slow = new SlowInterval(r)) {
      CompletableFuture<Boolean> waiting =
          CompletableFuture.supplyAsync(() -> r.flush(Duration.ofMinutes(10)));
      CountDownLatch never = new CountDownLatch(1);
      while (queued.getCount() > 0) { // its interval queued behind the slow one
        assertThat(never.await(10, TimeUnit.MILLISECONDS)).isFalse();
      }
      r.shutdown(Duration.ofMillis(100));

      // Before the fix it waited its whole ten minutes: its interval was dropped, never run.
      assertThat(waiting.get(30, TimeUnit.SECONDS)).isFalse();
    }
    runtime = null;
  }

  @Test
  void theExporterRunsWithTheConfiguredLimits() {
    ProfoldConfig config =
        ProfoldConfig.builder()
            .endpoint(AckingCollector.unreachable())
            .service("runtime-test")
            .interval(Duration.ofHours(1))
            .maxBackoff(Duration.ofSeconds(3))
            .maxBufferBytes(1 << 20)
            .build();
    runtime = ProfoldRuntime.start(config);
    assertThat(runtime.exporterConfig().maxBackoff()).isEqualTo(Duration.ofSeconds(3));
    assertThat(runtime.exporterConfig().initialBackoff()).isEqualTo(ProfoldConfig.MIN_BACKOFF);
    assertThat(runtime.exporterConfig().maxBufferBytes()).isEqualTo(1 << 20);
  }

  @Test
  void everyDeltaReportsTheExportsBufferAndItsCounts() throws Exception {
    collector = new AckingCollector();
    ProfoldConfig config = config(collector.endpoint());
    runtime = ProfoldRuntime.start(config);
    assertThat(runtime.flush(Duration.ofSeconds(30))).isTrue();
    assertThat(runtime.flush(Duration.ofSeconds(30))).isTrue();
    assertThat(collector.received())
        .extracting(d -> d.getOverhead().getExportBufferLimitBytes())
        .containsExactly(config.maxBufferBytes(), config.maxBufferBytes());
    // Nothing was buffered before the first; the first was acknowledged (and so no longer
    // buffered) when the flush that built the second began. No stream failed, nothing merged.
    assertThat(collector.received())
        .extracting(d -> d.getOverhead().getExportBufferedBytes())
        .containsExactly(0L, 0L);
    assertThat(collector.received())
        .extracting(
            d -> d.getOverhead().getExportReconnects() + d.getOverhead().getExportDeltasMerged())
        .containsOnly(0L);
  }

  @Test
  void theValuesOfAFlushThatFailedAreReportedAsDroppedInTheNextDelta() throws Exception {
    collector = new AckingCollector();
    runtime = ProfoldRuntime.start(config(collector.endpoint()));
    var table = runtime.recorder().foreign(42, "w-1", false);
    int time = runtime.recorder().timeMetric();
    table.record(0, time, 1.0);
    table.record(0, time, 2.0);
    table.record(1_000_000, time, 3.0); // a context that was never interned: encoding fails
    runtime.flushSafely(runtime::flushInterval); // fails, logged once
    assertThat(runtime.flush(Duration.ofSeconds(30))).as("the next flush is acknowledged").isTrue();
    assertThat(collector.received())
        .extracting(d -> d.getOverhead().getEventsDropped())
        .containsExactly(3L);
  }
}
