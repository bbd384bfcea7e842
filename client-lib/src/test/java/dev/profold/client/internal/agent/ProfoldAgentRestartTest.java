package dev.profold.client.internal.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.Profold;
import dev.profold.client.internal.jfr.JfrProfiler;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The agent started from code, stopped by the application, and started again: JFR streams again.
 */
class ProfoldAgentRestartTest {
  private static final String OPTIONS = "endpoint=127.0.0.1:9,service=restart,interval=1m";

  @AfterEach
  void stop() {
    ProfoldAgent.stop();
  }

  @Test
  void afterTheApplicationShutsProfoldDownTheAgentCanStreamAgain() {
    JfrProfiler first = ProfoldAgent.start(OPTIONS);
    assertThat(first).as("JFR streaming started").isNotNull();

    Profold.shutdown(Duration.ofSeconds(2)); // the application's own shutdown, not the agent's

    JfrProfiler second = ProfoldAgent.start(OPTIONS);
    // Before the fix: the first, closed profiler came back ("already started") and nothing
    // streamed any more.
    assertThat(second).isNotNull().isNotSameAs(first);
    assertThat(Profold.isStarted()).isTrue();
  }

  @Test
  void aStartRightAfterTheApplicationsShutdownReturnedStreamsAgain() {
    JfrProfiler first = ProfoldAgent.start(OPTIONS);
    assertThat(first).isNotNull();

    // Returns before the shutdown tasks (closing the stream takes a while) are done.
    Profold.shutdown(Duration.ZERO);

    JfrProfiler second = ProfoldAgent.start(OPTIONS);
    assertThat(second).isNotNull().isNotSameAs(first);
    assertThat(Profold.isStarted()).isTrue();
  }

  @Test
  void aShutdownWhileTheAgentStartsLeavesNoStreamBehind() throws Exception {
    Thread shutter =
        new Thread(
            () -> {
              while (!Profold.isStarted()) {
                Thread.onSpinWait();
              }
              // The agent is now starting JFR: its shutdown tasks are not registered yet.
              Profold.shutdown(Duration.ZERO);
            });
    shutter.start();
    JfrProfiler first = ProfoldAgent.start(OPTIONS);
    shutter.join();
    assertThat(Profold.isStarted()).isFalse();

    JfrProfiler second = ProfoldAgent.start(OPTIONS);
    assertThat(second).as("streaming again after the shutdown").isNotNull().isNotSameAs(first);
    assertThat(Profold.isStarted()).isTrue();
    ProfoldAgent.stop();
    assertThat(jfrConsumers()).as("JFR consumer threads left running").isZero();
  }

  /** JFR consumer threads alive, after waiting briefly for closing ones to end. */
  private static long jfrConsumers() throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(3).toNanos();
    long n;
    do {
      n =
          Thread.getAllStackTraces().keySet().stream()
              .filter(t -> t.getName().equals("profold-jfr"))
              .count();
      if (n == 0) {
        break;
      }
      Thread.sleep(20);
    } while (System.nanoTime() < deadline);
    return n;
  }
}
