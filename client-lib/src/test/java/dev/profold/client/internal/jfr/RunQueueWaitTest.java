package dev.profold.client.internal.jfr;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class RunQueueWaitTest {
  @Test
  void aLiveThreadsWaitIsReadAndNeverDecreases() throws Exception {
    assumeTrue(
        Files.exists(Path.of("/proc/thread-self/schedstat")),
        "the run-queue wait is read from Linux's per-thread scheduler statistics");
    long tid = RecordedEventsTest.osThreadId();
    long first = RunQueueWait.nanos(tid);
    assertThat(first).isNotNegative();
    for (int i = 0; i < 100; i++) {
      Thread.yield();
    }
    assertThat(RunQueueWait.nanos(tid)).isGreaterThanOrEqualTo(first);
  }

  @Test
  void anUnknownThreadReadsAsUnknown() {
    assertThat(RunQueueWait.nanos(0)).isEqualTo(-1);
    assertThat(RunQueueWait.nanos(-5)).isEqualTo(-1);
    assertThat(RunQueueWait.nanos(Integer.MAX_VALUE)).as("no such thread").isEqualTo(-1);
  }
}
