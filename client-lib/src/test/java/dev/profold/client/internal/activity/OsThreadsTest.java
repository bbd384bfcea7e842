package dev.profold.client.internal.activity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class OsThreadsTest {
  @Test
  void aLiveThreadsWaitIsReadAndNeverDecreases() throws Exception {
    assumeTrue(
        Files.exists(Path.of("/proc/thread-self/schedstat")),
        "the run-queue wait is read from Linux's per-thread scheduler statistics");
    long tid = OsThreads.currentTid();
    long[] first = OsThreads.schedstat(tid);
    assertThat(first).hasSize(3);
    assumeTrue(
        first[0] > 0, "this kernel keeps no scheduler statistics (it reads 0 0): nothing to check");
    assertThat(first[1]).as("queued").isNotNegative();
    // 50 ms of CPU time, not of wall time: on a loaded machine (or one whose hypervisor steals
    // time) the wall clock says nothing of how long the thread ran.
    java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
    long cpuStart = mx.getCurrentThreadCpuTime();
    while (mx.getCurrentThreadCpuTime() - cpuStart < 50_000_000) {
      Thread.onSpinWait();
    }
    long[] then = OsThreads.schedstat(tid);
    assertThat(then[0] - first[0])
        .as("ran through the 50 ms of CPU time (the kernel updates it at ticks)")
        .isGreaterThanOrEqualTo(30_000_000);
    assertThat(OsThreads.runQueueNanos(tid)).isGreaterThanOrEqualTo(first[1]);
    assertThat(then[2]).as("times put on a CPU: at least once more, never fewer").isPositive();
    assertThat(then[2]).isGreaterThanOrEqualTo(first[2]);
  }

  @Test
  void theCallingThreadsOsThreadIdIsItsTaskInProc() throws Exception {
    assumeTrue(Files.exists(Path.of("/proc/thread-self")), "Linux's /proc");
    long tid = OsThreads.currentTid();
    assertThat(tid).isPositive();
    assertThat(Path.of("/proc/thread-self").toRealPath().getFileName().toString())
        .isEqualTo(Long.toString(tid));
    long[] other = new long[1];
    Thread t = new Thread(() -> other[0] = OsThreads.currentTid());
    t.start();
    t.join();
    assertThat(other[0]).as("another thread's").isPositive().isNotEqualTo(tid);
  }

  @Test
  void anUnknownThreadReadsAsUnknown() {
    assertThat(OsThreads.runQueueNanos(0)).isEqualTo(-1);
    assertThat(OsThreads.schedstat(-5)).isNull();
    assertThat(OsThreads.runQueueNanos(Integer.MAX_VALUE)).as("no such thread").isEqualTo(-1);
  }
}
