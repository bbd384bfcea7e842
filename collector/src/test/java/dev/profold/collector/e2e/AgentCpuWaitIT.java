package dev.profold.collector.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.profold.collector.testing.ThreadSeconds;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A CPU-starved thread group through the shaded agent jar ({@link PlantedCrowdedCpus} in a separate
 * JVM, pushing to the collector jar): three busy threads per processor spend about two thirds of
 * their time runnable on the run queue. That time is {@code cpu_wait}, read from Linux's scheduler
 * statistics; before the class existed it was idle, and the group looked two-thirds idle.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AgentCpuWaitIT {
  private JarDaemon collector;
  private AgentApp app;

  @BeforeAll
  void start() throws Exception {
    assumeTrue(schedulerStatistics(), "cpu_wait is read from Linux's per-thread schedstat");
    collector = JarDaemon.start("--interval", "1s");
    app =
        AgentApp.start(
            PlantedCrowdedCpus.class,
            "service=crowd,instance=crowd-1,interval=1s,endpoint=127.0.0.1:" + collector.grpcPort,
            "planted crowded cpus running");
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
  void threadsWaitingForACpuAreCountedAsCpuWaitNotIdle() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    Map<String, Double> first = ThreadSeconds.of(collector.scrape(), "crowd", "crowd-*");
    while (System.nanoTime() < deadline && first.getOrDefault("cpu_wait", 0.0) <= 0) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(250)); // a poll tick
      first = ThreadSeconds.of(collector.scrape(), "crowd", "crowd-*");
    }
    assertThat(first.getOrDefault("cpu_wait", 0.0))
        .as("crowd-* cpu_wait seconds; agent's log:%n%s", app.stderr())
        .isPositive();

    LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(10)); // the window compared
    Map<String, Double> last = ThreadSeconds.of(collector.scrape(), "crowd", "crowd-*");

    double cpuWait = ThreadSeconds.share(first, last, "cpu_wait");
    double compute = ThreadSeconds.share(first, last, "compute");
    double idle = ThreadSeconds.share(first, last, "idle");
    System.out.printf(
        java.util.Locale.ROOT,
        "planted crowded cpus: cpu_wait %.3f, compute %.3f, idle %.3f%n",
        cpuWait,
        compute,
        idle);
    // Three threads per processor get at most a third of a CPU each, less with the collector and
    // this test on the same processors: at least half their time runnable and waiting.
    assertThat(cpuWait).as("cpu_wait share").isGreaterThan(0.5);
    assertThat(cpuWait).as("cpu_wait leads compute").isGreaterThan(compute);
    assertThat(idle).as("idle share (the threads never sleep)").isLessThan(0.1);
  }

  /** Whether this kernel keeps per-thread scheduler statistics (a first field above 0). */
  private static boolean schedulerStatistics() {
    try {
      String s =
          new String(
              Files.readAllBytes(Path.of("/proc/thread-self/schedstat")),
              StandardCharsets.US_ASCII);
      return Long.parseLong(s.substring(0, s.indexOf(' '))) > 0;
    } catch (java.io.IOException | RuntimeException e) {
      return false;
    }
  }
}
