package dev.profold.client.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.ProfoldConfig;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.ThreadGroupActivity;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What each delta of a running {@link ProfoldRuntime} covers: its interval on the wall clock, the
 * threads' time in it, and the CPU time of Profold's own threads.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ProfoldRuntimeIntervalsTest {
  private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
  private static final long HOUR = Duration.ofHours(1).toNanos();

  private final CountDownLatch release = new CountDownLatch(1);
  private ProfoldRuntime runtime;
  private AckingCollector collector;

  @AfterEach
  void stop() {
    release.countDown();
    if (runtime != null) {
      runtime.shutdown(Duration.ZERO);
    }
    if (collector != null) {
      collector.close();
    }
  }

  private ProfoldRuntime start(LongSupplierClock wall) throws Exception {
    collector = new AckingCollector();
    ProfoldConfig config =
        ProfoldConfig.builder()
            .endpoint(collector.endpoint())
            .service("intervals-test")
            .interval(Duration.ofHours(1))
            .build();
    runtime =
        wall == null
            ? ProfoldRuntime.start(config)
            : ProfoldRuntime.start(config, System::nanoTime, (step, budget) -> {}, wall.now::get);
    return runtime;
  }

  /** A wall clock the test sets. */
  private static final class LongSupplierClock {
    final AtomicLong now;

    LongSupplierClock(long unixNanos) {
      now = new AtomicLong(unixNanos);
    }
  }

  /**
   * Starts a thread named {@code name} that spends at least {@code cpuNanos} on CPU, then waits
   * until the test ends; returns once it has spent them, with the thread.
   */
  private Thread busyThenParked(String name, long cpuNanos) throws InterruptedException {
    CountDownLatch spent = new CountDownLatch(1);
    Thread t =
        new Thread(
            () -> {
              long x = 0;
              while (MX.getCurrentThreadCpuTime() < cpuNanos) {
                for (int i = 0; i < 10_000; i++) {
                  x += i * 31L ^ x;
                }
              }
              spent.countDown();
              try {
                release.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              if (x == 42) {
                System.out.print(""); // keeps the loop from being optimised away
              }
            },
            name);
    t.setDaemon(true);
    t.start();
    assertThat(spent.await(30, TimeUnit.SECONDS)).isTrue();
    return t;
  }

  private static ThreadGroupActivity group(Delta d, String name) {
    return d.getThreadActivityList().stream()
        .filter(g -> g.getThreadGroup().equals(name))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void theFirstIntervalHoldsOnlyTheCpuTimeThatOlderThreadsSpentInIt() throws Exception {
    busyThenParked("busy-before-start", Duration.ofMillis(100).toNanos());
    ProfoldRuntime r = start(null);
    assertThat(r.flush(Duration.ofSeconds(30))).isTrue();
    ThreadGroupActivity busy = group(collector.received().get(0), "busy-before-start");
    // Parked for the whole interval: before the fix, its CPU time from before the start filled
    // the interval (compute == wall).
    assertThat(busy.getWallNanos()).isPositive();
    assertThat(busy.getComputeNanos()).isZero();
    assertThat(busy.getIdleNanos()).isEqualTo(busy.getWallNanos());
  }

  @Test
  void theCpuTimeOfEveryProfoldThreadIsReportedAsOverhead() throws Exception {
    ProfoldRuntime r = start(null);
    assertThat(r.flush(Duration.ofSeconds(30))).isTrue();
    // A thread of Profold's own other than the flush, exporter and gRPC threads, as the agent's
    // JFR consumer (profold-jfr): left out of the application's thread groups, so its CPU time
    // must show as the client's overhead.
    long spent = Duration.ofMillis(300).toNanos();
    Thread own = busyThenParked("profold-test-consumer", spent);
    long cpu = MX.getThreadCpuTime(own.getId());
    assertThat(r.flush(Duration.ofSeconds(30))).isTrue();
    List<Delta> deltas = collector.received();
    assertThat(deltas).hasSize(2);
    assertThat(deltas.get(1).getOverhead().getCpuNanos()).isGreaterThanOrEqualTo(cpu);
    assertThat(deltas.get(1).getThreadActivityList())
        .extracting(ThreadGroupActivity::getThreadGroup)
        .doesNotContain("profold-test-consumer");
    // Per interval, not since the start: the thread parked since, the next interval has not it.
    assertThat(r.flush(Duration.ofSeconds(30))).isTrue();
    assertThat(collector.received().get(2).getOverhead().getCpuNanos()).isLessThan(cpu / 2);
  }

  @Test
  void anOwnThreadThatEndsBeforeAFlushHasItsCpuTimeReportedAsOverhead() throws Exception {
    // The agent's start thread loads gRPC, Netty and protobuf and sets up JFR, then ends before
    // the first flush: before, its CPU time was in no delta.
    ProfoldRuntime r = start(null);
    assertThat(r.flush(Duration.ofSeconds(30))).isTrue();
    long spent = Duration.ofMillis(200).toNanos();
    long[] cpu = new long[1];
    Thread starter =
        new Thread(
            () -> {
              long x = 0;
              while (MX.getCurrentThreadCpuTime() < spent) {
                for (int i = 0; i < 10_000; i++) {
                  x += i * 31L ^ x;
                }
              }
              cpu[0] = MX.getCurrentThreadCpuTime();
              r.ownThreadEnding();
              if (x == 42) {
                System.out.print(""); // keeps the loop from being optimised away
              }
            },
            "profold-test-start");
    starter.start();
    starter.join();
    assertThat(r.flush(Duration.ofSeconds(30))).isTrue();
    List<Delta> deltas = collector.received();
    assertThat(deltas).hasSize(2);
    assertThat(deltas.get(1).getOverhead().getCpuNanos()).isGreaterThanOrEqualTo(cpu[0]);
    assertThat(r.flush(Duration.ofSeconds(30))).isTrue();
    assertThat(collector.received().get(2).getOverhead().getCpuNanos())
        .as("counted once")
        .isLessThan(cpu[0] / 2);
  }

  @Test
  void afterTheWallClockStepsTheNextFlushIsAtTheNextBoundaryOfTheWallClock() throws Exception {
    long hour = 480_000 * HOUR; // some hour in 2024, as unix epoch nanoseconds
    LongSupplierClock wall = new LongSupplierClock(hour + HOUR - Duration.ofMillis(300).toNanos());
    ProfoldRuntime r = start(wall);
    // NTP steps the clock 20 minutes on before the first flush, 300 ms from now.
    wall.now.set(hour + HOUR + Duration.ofMinutes(20).toNanos());
    CountDownLatch never = new CountDownLatch(1);
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (collector.received().isEmpty()) {
      assertThat(System.nanoTime() - deadline).as("the first flush came within 30 s").isNegative();
      assertThat(never.await(10, TimeUnit.MILLISECONDS)).isFalse();
    }
    Delta first = collector.received().get(0);
    assertThat(first.getIntervalEndUnixNanos()).isEqualTo(wall.now.get());
    // The next boundary of the wall clock is 40 minutes away; before the fix the schedule kept
    // its own rhythm and flushed an hour after the first, 20 minutes past the boundary, for good.
    assertThat(r.nextFlushDelayNanos())
        .isBetween(Duration.ofMinutes(39).toNanos(), Duration.ofMinutes(40).toNanos());
  }
}
