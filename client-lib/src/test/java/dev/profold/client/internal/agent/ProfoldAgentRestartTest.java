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
}
