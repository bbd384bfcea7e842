package dev.profold.collector.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The shaded agent jar attached with {@code -javaagent} to a separate JVM running a planted lock
 * contention ({@link PlantedContention}), pushing to the collector jar: without a line of
 * instrumentation, SYNC time shows in /metrics at the contended method, for the workers' thread
 * group's service, and SYNC leads the workers' overhead classes. The program does no I/O, so the
 * agent's I/O gate ({@code io.quiet=5s}) turns its I/O events off, and the collector says for how
 * long.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AgentJarIT {
  private static final Pattern SYNC =
      Pattern.compile(
          "profold_region_time_seconds_sum\\{instance=\"planted-1\",kind=\"sync\","
              + "path=\"[^\"]*PlantedContention\\.contended\",service=\"planted\"\\} ([0-9.eE+-]+)");

  private JarDaemon collector;
  private AgentApp app;
  private long appStarted;

  @BeforeAll
  void start() throws Exception {
    collector = JarDaemon.start("--interval", "1s");
    appStarted = System.nanoTime();
    app =
        AgentApp.start(
            PlantedContention.class,
            "service=planted,instance=planted-1,interval=1s,io.quiet=5s,endpoint=127.0.0.1:"
                + collector.grpcPort,
            "planted contention running");
  }

  @AfterAll
  void stop() {
    if (app != null) {
      app.kill();
    }
    if (collector != null) {
      collector.kill();
    }
  }

  @Test
  void syncTimeAtTheContendedMethodArrivesWithoutInstrumentation() throws Exception {
    String metrics = scrapeUntil(SYNC, 1.0);
    double sync = value(SYNC, metrics);
    assertThat(sync)
        .as(
            "SYNC seconds at PlantedContention.contended; app stderr:%n%s%nmetrics:%n%s",
            app.stderr(), grep(metrics, "service=\"planted\""))
        .isGreaterThanOrEqualTo(1.0);
    assertThat(app.stderr()).doesNotContain("Exception");
  }

  private static final Pattern SYNC_SHARE =
      Pattern.compile(
          "profold_thread_class_ratio\\{class=\"sync\",instance=\"planted-1\",service=\"planted\","
              + "thread_group=\"planted-worker-\\*\"\\} ([0-9.eE+-]+)");

  @Test
  void syncLeadsTheWorkersThreadTimeInTheOverheadClasses() throws Exception {
    String metrics = scrapeUntil(SYNC_SHARE, 0.5);
    double share = value(SYNC_SHARE, metrics);
    assertThat(share)
        .as(
            "SYNC share of planted-worker-* thread time; metrics:%n%s",
            grep(metrics, "thread_group=\"planted-worker-*\""))
        .isGreaterThanOrEqualTo(0.5);
    assertThat(metrics)
        .contains(
            "profold_threads{instance=\"planted-1\",service=\"planted\","
                + "thread_group=\"planted-worker-*\"} 4.0")
        .contains(
            "profold_thread_seconds_total{class=\"sync\",instance=\"planted-1\","
                + "service=\"planted\",thread_group=\"planted-worker-*\"}");
  }

  private static final Pattern IO_UNOBSERVED =
      Pattern.compile(
          "profold_thread_io_unobserved_seconds_total\\{instance=\"planted-1\","
              + "service=\"planted\"\\} ([0-9.eE+-]+)");

  @Test
  void theTimeTheAgentsIoEventsWereOffReachesTheCollector() throws Exception {
    String metrics = scrapeUntil(IO_UNOBSERVED, 2.0);
    double unobserved = value(IO_UNOBSERVED, metrics);
    double sinceStart = (System.nanoTime() - appStarted) / 1e9;
    assertThat(unobserved)
        .as(
            "seconds with I/O unobserved; app stderr:%n%s%nmetrics:%n%s",
            app.stderr(), grep(metrics, "io_unobserved"))
        .isGreaterThanOrEqualTo(2.0)
        .isLessThan(sinceStart - 5); // on for the first io.quiet at least
    assertThat(app.stderr()).contains("JFR's I/O events are turned off");
  }

  /**
   * Scrapes the collector every 250 ms until the first group of {@code pattern} reaches {@code
   * min}, for at most 60 s; returns the last scrape.
   */
  private String scrapeUntil(Pattern pattern, double min) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    String metrics = collector.scrape();
    while (System.nanoTime() < deadline && value(pattern, metrics) < min) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(250));
      metrics = collector.scrape();
    }
    return metrics;
  }

  /** The first group of {@code pattern} in {@code metrics}, 0 when it is not there. */
  private static double value(Pattern pattern, String metrics) {
    Matcher m = pattern.matcher(metrics);
    return m.find() ? Double.parseDouble(m.group(1)) : 0;
  }

  private static String grep(String text, String needle) {
    return String.join("\n", text.lines().filter(l -> l.contains(needle)).limit(40).toList());
  }
}
