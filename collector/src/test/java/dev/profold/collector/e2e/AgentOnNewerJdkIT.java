package dev.profold.collector.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.internal.ChildJvm;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * The agent jar on the newest JDK installed next to the build's (Java 24 or later; the test fails
 * under {@code PROFOLD_REQUIRE_EXTERNAL_TOOLS=1} when there is none): it reaches the collector, and
 * attaching it prints nothing into the application's stderr but its own log lines. Java 24 and
 * later warn on stderr about every library that calls a restricted method such as {@code
 * System.loadLibrary}; the agent's relocated Netty used to, probing for its left-out epoll
 * transport.
 */
class AgentOnNewerJdkIT {
  @Test
  void theAgentReportsWithoutARestrictedMethodWarning() throws Exception {
    Optional<Path> java = ChildJvm.atLeast(24);
    if (java.isEmpty()) {
      return; // logged (or failed, when required) by ChildJvm
    }
    JarDaemon collector = JarDaemon.start("--interval", "1s");
    AgentApp app = null;
    try {
      app =
          AgentApp.start(
              java.get(),
              PlantedContention.class,
              "service=newer-jdk,instance=n-1,interval=1s,endpoint=127.0.0.1:" + collector.grpcPort,
              "planted contention running");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      String metrics = "";
      while (System.nanoTime() < deadline
          && !metrics.contains("profold_client_cpu_seconds_total{instance=\"n-1\"")) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(250));
        metrics = collector.scrape();
      }
      assertThat(metrics)
          .as("the agent's deltas reached the collector; app stderr:%n%s", app.stderr())
          .contains("profold_client_cpu_seconds_total{instance=\"n-1\",service=\"newer-jdk\"}");
      assertThat(app.stderr())
          .doesNotContain("restricted method")
          .doesNotContain("WARNING:")
          .doesNotContain("Exception");
    } finally {
      if (app != null) {
        app.kill();
      }
      collector.kill();
    }
  }
}
