package dev.profold.client.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.profold.client.Kind;
import dev.profold.client.ProfoldConfig;
import dev.profold.client.Region;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.ThreadGroupActivity;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The library without the agent measures cpu_wait for the threads that record: three busy threads
 * per processor, each recording a region as it starts, spend most of their time on the run queue.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LibraryCpuWaitTest {
  private final AtomicBoolean stop = new AtomicBoolean();
  private final List<Thread> crowd = new ArrayList<>();
  private ProfoldRuntime runtime;
  private AckingCollector collector;

  @AfterEach
  void tearDown() throws InterruptedException {
    stop.set(true);
    for (Thread t : crowd) {
      t.join();
    }
    if (runtime != null) {
      runtime.shutdown(Duration.ZERO);
    }
    if (collector != null) {
      collector.close();
    }
  }

  @Test
  void recordingThreadsWaitingForACpuAreCpuWaitNotIdle() throws Exception {
    assumeTrue(Files.exists(Path.of("/proc/thread-self/schedstat")), "Linux's schedstat");
    collector = new AckingCollector();
    runtime =
        ProfoldRuntime.start(
            ProfoldConfig.builder()
                .endpoint(collector.endpoint())
                .service("cpu-wait-test")
                .interval(Duration.ofHours(1))
                .build());
    int n = 3 * Runtime.getRuntime().availableProcessors();
    CountDownLatch recorded = new CountDownLatch(n);
    for (int i = 0; i < n; i++) {
      Thread t = new Thread(() -> spin(recorded), "crowd-lib-" + i);
      crowd.add(t);
      t.start();
    }
    assertThat(recorded.await(30, TimeUnit.SECONDS)).isTrue();
    assertThat(runtime.flush(Duration.ofSeconds(30))).isTrue(); // their baseline
    LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(1));
    assertThat(runtime.flush(Duration.ofSeconds(30))).isTrue();

    List<Delta> deltas = collector.received();
    ThreadGroupActivity g =
        deltas.get(deltas.size() - 1).getThreadActivityList().stream()
            .filter(a -> a.getThreadGroup().equals("crowd-lib-*"))
            .findFirst()
            .orElseThrow();
    double cpuWait = (double) g.getCpuWaitNanos() / g.getWallNanos();
    double compute = (double) g.getComputeNanos() / g.getWallNanos();
    assertThat(cpuWait)
        .as(
            "cpu_wait share (compute %.3f, idle %d of %d ns)",
            compute, g.getIdleNanos(), g.getWallNanos())
        .isGreaterThan(0.5)
        .isGreaterThan(compute);
    assertThat(g.getCpuWaitNanos()).as("part of idle_nanos").isLessThanOrEqualTo(g.getIdleNanos());
  }

  private void spin(CountDownLatch recorded) {
    try (Region r = runtime.recorder().region("crowd", Kind.COMPUTE)) {
      recorded.countDown(); // it recorded: its OS thread id is known
    }
    long x = 0;
    while (!stop.get()) {
      for (int i = 0; i < 10_000; i++) {
        x += i * 31L ^ x;
      }
    }
    if (x == 42) {
      System.out.print("");
    }
  }
}
