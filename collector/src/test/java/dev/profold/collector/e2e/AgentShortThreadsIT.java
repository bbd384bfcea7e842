package dev.profold.collector.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.testing.ThreadSeconds;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Short-lived threads through the shaded agent jar ({@link PlantedShortThreads} in a separate JVM,
 * pushing to the collector jar): threads that live 30 ms, started and ended within one interval,
 * still count in the overhead classes, because the agent's hook in {@code Thread.exit} reports each
 * thread's CPU time as it ends. Their group's compute seconds match the CPU time the threads
 * measured themselves within 20%; without the hook they were nearly all missing (an interval's end
 * seldom finds such a thread alive).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AgentShortThreadsIT {
  private static final Pattern SHORT = Pattern.compile("short (\\d+) (\\d+)");

  private JarDaemon collector;
  private AgentApp app;
  private AtomicReference<long[]> measured; // the program's own figures, from its output

  @BeforeAll
  void start() throws Exception {
    collector = JarDaemon.start("--interval", "1s");
    app =
        AgentApp.start(
            PlantedShortThreads.class,
            "service=short,instance=short-1,interval=1s,endpoint=127.0.0.1:" + collector.grpcPort,
            "planted short threads running");
    measured = app.lastNumbers(SHORT);
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
  void threadsThatLiveWithinAnIntervalCountTheirCpuTime() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    Map<String, Double> from = Map.of();
    while (System.nanoTime() < deadline && from.getOrDefault("compute", 0.0) < 1.0) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(250)); // a poll tick
      from = classSeconds();
    }
    long[] measuredFrom = measured.get();
    assertThat(measuredFrom)
        .as("the program's own line; classes %s; stderr:%n%s", from, app.stderr())
        .isNotNull();
    assertThat(from.getOrDefault("compute", 0.0))
        .as("the short threads' compute seconds; agent's log:%n%s", app.stderr())
        .isGreaterThanOrEqualTo(1.0);

    LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(10)); // the window compared
    Map<String, Double> to = classSeconds();
    long[] measuredTo = measured.get();

    double counted = to.getOrDefault("compute", 0.0) - from.getOrDefault("compute", 0.0);
    double truth = (measuredTo[0] - measuredFrom[0]) / 1e9;
    long threads = measuredTo[1] - measuredFrom[1];
    double idle = ThreadSeconds.share(from, to, "idle");
    System.out.printf(
        java.util.Locale.ROOT,
        "planted short threads: compute %.3f s counted, %.3f s measured by %d threads; idle"
            + " share %.3f%n",
        counted,
        truth,
        threads,
        idle);
    // The window's two ends are read at different moments by the program and the collector (up
    // to an interval apart, about 1 s of the workers' CPU), so the comparison is over 10 s.
    assertThat(counted)
        .as(
            "compute seconds of short-* (measured %.3f by %d threads); %s -> %s",
            truth, threads, from, to)
        .isBetween(truth * 0.8, truth * 1.2);
    // They compute from start to end: their time counts from their starts, not from the
    // intervals' (before, a thread found alive at an interval's end counted the whole interval).
    assertThat(idle).as("idle share of short-*; %s -> %s", from, to).isLessThan(0.3);
  }

  /** Seconds per class the collector has counted for the short threads. */
  private Map<String, Double> classSeconds() throws Exception {
    return ThreadSeconds.of(collector.scrape(), "short", "short-*");
  }
}
