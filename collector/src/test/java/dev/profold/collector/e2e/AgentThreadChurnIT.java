package dev.profold.collector.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.testing.ThreadSeconds;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Thread churn through the shaded agent jar ({@link PlantedThreadChurn} in a separate JVM, pushing
 * to the collector jar): the agent times {@code Thread.start} by rewriting {@code
 * java.lang.Thread}, so the spawner's time, most of it off CPU inside {@code start()}, shows as
 * thread_mgmt rather than idle, within 20% of the share the program measured itself, and the starts
 * carry their durations at the calling method. The hook's boot jar is gone from the program's temp
 * directory while the program still runs.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AgentThreadChurnIT {
  private static final String SPAWNER = "churn-spawner";
  private static final Pattern START_RECORDS =
      Pattern.compile(
          "profold_region_time_seconds_sum\\{instance=\"churn-1\",kind=\"thread_mgmt\","
              + "path=\"[^\"]*PlantedThreadChurn\\.spawn\",service=\"churn\"\\} ([0-9.eE+-]+)");
  private static final Pattern CHURN = Pattern.compile("churn (\\d+) (\\d+)");

  private JarDaemon collector;
  private AgentApp app;
  private Path tmp; // the program's java.io.tmpdir
  private AtomicReference<long[]> measured; // the program's own figures, from its output

  @BeforeAll
  void start() throws Exception {
    collector = JarDaemon.start("--interval", "1s");
    tmp = Files.createTempDirectory("profold-churn-tmp");
    app =
        AgentApp.start(
            PlantedThreadChurn.class,
            "service=churn,instance=churn-1,interval=1s,endpoint=127.0.0.1:" + collector.grpcPort,
            "planted thread churn running",
            "-XX:+UnlockDiagnosticVMOptions",
            "-XX:+DebugNonSafepoints",
            "-Djava.io.tmpdir=" + tmp);
    measured = app.lastNumbers(CHURN);
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
    if (tmp != null) { // JFR's repository is in there too
      try (Stream<Path> files = Files.walk(tmp)) {
        for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(f);
        }
      }
    }
  }

  @Test
  void threadStartsAreThreadManagementTimeAsTheProgramMeasuredIt() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    Map<String, Double> from = Map.of();
    while (System.nanoTime() < deadline && from.getOrDefault("thread_mgmt", 0.0) < 2.0) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(250)); // a poll tick
      from = classSeconds();
    }
    long[] measuredFrom = measured.get();
    assertThat(measuredFrom)
        .as(
            "the spawner's thread_mgmt seconds (%s) and the program's own line; stderr:%n%s",
            from, app.stderr())
        .isNotNull();
    assertThat(from.getOrDefault("thread_mgmt", 0.0))
        .as("the spawner's thread_mgmt seconds; agent's log:%n%s", app.stderr())
        .isGreaterThanOrEqualTo(2.0);

    LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(6)); // the window compared
    Map<String, Double> to = classSeconds();
    long[] measuredTo = measured.get();

    double estimate = ThreadSeconds.share(from, to, "thread_mgmt");
    double idle = ThreadSeconds.share(from, to, "idle");
    double truth = (measuredTo[0] - measuredFrom[0]) / (double) (measuredTo[1] - measuredFrom[1]);
    System.out.printf(
        java.util.Locale.ROOT,
        "planted thread churn: spawner's thread_mgmt share %.3f (idle %.3f), measured in"
            + " new Thread + start() %.3f%n",
        estimate,
        idle,
        truth);
    assertThat(estimate)
        .as("thread_mgmt share of %s (measured %.3f); classes %s -> %s", SPAWNER, truth, from, to)
        .isBetween(truth * 0.8, truth * 1.2);
    assertThat(idle).as("the starts' time off CPU is no longer idle").isLessThan(0.2);

    Matcher m = START_RECORDS.matcher(collector.scrape());
    assertThat(m.find()).as("thread_mgmt records at PlantedThreadChurn.spawn").isTrue();
    assertThat(Double.parseDouble(m.group(1)))
        .as("the starts' durations at the calling method, seconds")
        .isGreaterThan(1.0);
  }

  @Test
  void theHookJarIsDeletedOnceLoadedNotAtExit() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline && !app.stderr().contains("timing Thread.start")) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100)); // a poll tick
    }
    assertThat(app.stderr()).as("the agent's log").contains("timing Thread.start");
    assertThat(app.process.isAlive()).isTrue();
    try (Stream<Path> files = Files.list(tmp)) {
      List<String> boot =
          files
              .map(f -> f.getFileName().toString())
              .filter(n -> n.startsWith("profold-boot-"))
              .toList();
      assertThat(boot).as("boot jars left in the running program's temp directory").isEmpty();
    }
  }

  /** Seconds per class the collector has counted for the spawner. */
  private Map<String, Double> classSeconds() throws Exception {
    return ThreadSeconds.of(collector.scrape(), "churn", SPAWNER);
  }
}
