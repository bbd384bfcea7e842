package dev.profold.collector.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.testing.ThreadSeconds;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * CPU samples through the shaded agent jar ({@link PlantedBusyThreads} in a separate JVM, pushing
 * to the collector jar): two busy threads beside a second recording that samples every 10 ms (the
 * agent asks for 20 ms), so the agent's stream gets twice the samples its period implies. The agent
 * values each thread's samples by the CPU time its clock measured, so the time of the program's
 * sampled call paths adds up to the compute and thread management seconds of its thread group
 * (ratio 1.000 in a run). With each sample counted as the nominal 20 ms they came to 1.7 times that
 * (the agent jar before the rule; the rule's other cases, such as more busy threads than JFR
 * samples per period, are in {@code SampledCpuTest}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AgentSampledCpuIT {
  private static final Pattern PATH_TIME =
      Pattern.compile(
          "profold_region_time_seconds_sum\\{instance=\"busy-1\",kind=\"(compute|thread_mgmt)\","
              + "path=\"([^\"]*)\",service=\"busy\"\\} (\\S+)");

  private JarDaemon collector;
  private AgentApp app;

  @BeforeAll
  void start() throws Exception {
    collector = JarDaemon.start("--interval", "1s");
    app =
        AgentApp.start(
            PlantedBusyThreads.class,
            "service=busy,instance=busy-1,interval=1s,endpoint=127.0.0.1:" + collector.grpcPort,
            "planted busy threads running");
  }

  @AfterAll
  void stop() throws Exception {
    if (app != null) {
      app.kill();
      app.process.waitFor(10, TimeUnit.SECONDS);
    }
    if (collector != null) {
      collector.kill();
    }
  }

  @Test
  void sampledPathsAddUpToTheThreadsCpuTime() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    String first = collector.scrape();
    while (System.nanoTime() < deadline && cpu(first) < 2.0) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(250)); // a poll tick
      first = collector.scrape();
    }
    assertThat(cpu(first))
        .as("busy-* CPU seconds; agent's log:%n%s", app.stderr())
        .isGreaterThan(2.0);

    LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(10)); // the window compared
    String last = collector.scrape();

    double sampled = sampledPaths(last) - sampledPaths(first);
    double cpu = cpu(last) - cpu(first);
    System.out.printf(
        java.util.Locale.ROOT,
        "planted busy threads: sampled paths %.3f s, thread CPU %.3f s (ratio %.3f)%n",
        sampled,
        cpu,
        sampled / cpu);
    // Both ends of the window are read from one scrape each, so from the same deltas; what may
    // differ is CPU time of an interval whose samples come in the next but one (dropped), and the
    // first interval's samples of a thread.
    assertThat(sampled)
        .as("sampled paths' seconds against thread CPU %.3f", cpu)
        .isBetween(cpu * 0.95, cpu * 1.05);
  }

  /** Compute and thread management seconds the collector counted for busy-*. */
  private static double cpu(String metrics) {
    Map<String, Double> classes = ThreadSeconds.of(metrics, "busy", "busy-*");
    return classes.getOrDefault("compute", 0.0) + classes.getOrDefault("thread_mgmt", 0.0);
  }

  /** Seconds of the sampled call paths through the busy threads' code. */
  private static double sampledPaths(String metrics) {
    double s = 0;
    Matcher m = PATH_TIME.matcher(metrics);
    while (m.find()) {
      if (m.group(2).contains("PlantedBusyThreads.spin")) {
        s += Double.parseDouble(m.group(3));
      }
    }
    return s;
  }
}
