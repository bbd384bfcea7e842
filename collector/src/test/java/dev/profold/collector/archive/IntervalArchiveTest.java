package dev.profold.collector.archive;

import static dev.profold.proto.v1.RegionKind.REGION_KIND_COMPUTE;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_IO;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.profold.collector.cli.Main;
import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.fold.FoldConfig;
import dev.profold.collector.fold.FoldEngine;
import dev.profold.collector.fold.FoldResult;
import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.testing.Deltas;
import dev.profold.collector.testing.MutableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * The archive fed by a real {@link FoldEngine}, read back by {@code profold query}: merged
 * intervals give exact results, and the interval bounds select by time.
 */
class IntervalArchiveTest {
  static final long SECOND = 1_000_000_000L;
  static final long INTERVAL = 10 * SECOND;
  static final long T0 = 1_700_000_000L * SECOND; // 2023-11-14T22:13:20Z

  @TempDir Path dir;
  final MutableClock clock = MutableClock.atNanos(T0 + SECOND);
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  final GlobalDictionary dictionary = new GlobalDictionary(10_000);

  FoldEngine engine(IntervalArchive archive) throws Exception {
    return engine(
        archive,
        SchemeDefinition.builtIn(Duration.ofNanos(INTERVAL), 1000),
        scheme("by_path", "SELECT sum(time) GROUP BY path"));
  }

  /** An engine of {@code schemes} feeding {@code archive}. */
  FoldEngine engine(IntervalArchive archive, SchemeDefinition... schemes) {
    FoldEngine e =
        new FoldEngine(
            new FoldConfig(INTERVAL, 5, 1000, 20, List.of(schemes)),
            dictionary,
            clock,
            new CollectorMetrics(registry));
    e.onIntervalClosed(archive);
    return e;
  }

  static SchemeDefinition scheme(String name, String query) throws Exception {
    return SchemeDefinition.compile(name, query, Duration.ofNanos(INTERVAL), 1000, 10);
  }

  static Deltas.Builder delta(String instance, long seq, long window) {
    return Deltas.source("checkout", instance)
        .region(1, "main", REGION_KIND_COMPUTE)
        .region(2, 1, "read", REGION_KIND_IO)
        .seq(seq)
        .interval(window * INTERVAL, (window + 1) * INTERVAL);
  }

  String query(String q, Path... files) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cl = Main.commandLine();
    cl.setOut(new PrintWriter(out));
    cl.setErr(new PrintWriter(err));
    String[] args = new String[3 + files.length];
    args[0] = "query";
    args[1] = "-q";
    args[2] = q;
    for (int i = 0; i < files.length; i++) {
      args[3 + i] = files[i].toString();
    }
    assertThat(cl.execute(args)).as("stderr: %s", err).isZero();
    return out.toString();
  }

  @Test
  void intervalsStillQueuedWhenTheShutdownsTimeRunsOutAreCounted() throws Exception {
    IntervalArchive archive = new IntervalArchive(dir, Set.of(), registry);
    List<dev.profold.sinks.snapshot.SeriesSnapshot> series = new java.util.ArrayList<>();
    for (int g = 0; g < 2000; g++) {
      dev.profold.reduce.Aggregate a = new dev.profold.reduce.Aggregate();
      a.record(g + 0.5);
      series.add(
          new dev.profold.sinks.snapshot.SeriesSnapshot(
              List.of("p" + g),
              new dev.profold.sinks.snapshot.Measure("time", "seconds"),
              dev.profold.sinks.snapshot.StateSnapshot.of(a)));
    }
    int queued = 400;
    for (int i = 0; i < queued; i++) {
      archive.closed(
          "by_path",
          List.of("path"),
          List.of(),
          new dev.profold.sinks.snapshot.IntervalSnapshot(
              T0 + i * INTERVAL, T0 + (i + 1) * INTERVAL, series));
    }
    archive.close(Duration.ofMillis(1)); // far too short to write 800,000 lines
    double written = registry.get("profold.archive.intervals.written").counter().count();
    double shutdown = dropped("shutdown");
    double failed = dropped("write_failed");
    // Before: what was still queued was neither written nor counted.
    assertThat(shutdown).isPositive();
    assertThat(written + shutdown + failed).as("every interval accounted once").isEqualTo(queued);
    // The write in progress ends whole: the writer was interrupted, which closed the file under
    // it, so its undo failed too (a torn line, or an interval written but counted as failed).
    assertThat(failed).isZero();
    Path file = dir.resolve("by_path").resolve("by_path-2023-11-14.jsonl");
    String text = Files.exists(file) ? Files.readString(file) : "";
    assertThat(text.isEmpty() || text.endsWith("\n")).as("whole lines only").isTrue();
    assertThat(text.lines().map(l -> l.substring(0, l.indexOf(",\"interval.end\""))).distinct())
        .as("intervals in the file")
        .hasSize((int) written);
    // An interval the fold thread closes after the archive's time ran out is counted too.
    archive.closed(
        "by_path",
        List.of("path"),
        List.of(),
        new dev.profold.sinks.snapshot.IntervalSnapshot(
            T0 + queued * INTERVAL, T0 + (queued + 1) * INTERVAL, series));
    assertThat(dropped("shutdown")).isEqualTo(shutdown + 1);
  }

  @Test
  void theLockFileIsKeptRecentAndItsRemovalIsSaid() throws Exception {
    IntervalArchive archive = new IntervalArchive(dir, Set.of(), registry);
    Path lock = dir.resolve(IntervalArchive.LOCK_FILE);
    java.nio.file.attribute.FileTime old =
        java.nio.file.attribute.FileTime.from(java.time.Instant.parse("2020-01-01T00:00:00Z"));
    Files.setLastModifiedTime(lock, old);
    FoldEngine engine = engine(archive);
    long w0 = T0 / INTERVAL;
    apply(engine, delta("a", 1, w0).entry(1, 1.0));
    clock.setNanos(T0 + 2 * INTERVAL);
    try (dev.profold.collector.testing.LogLines logs =
        dev.profold.collector.testing.LogLines.capture(IntervalArchive.class)) {
      engine.advance();
      long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (registry.get("profold.archive.intervals.written").counter().count() < 2
          && System.nanoTime() < until) {
        java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // the writer's thread
      }
      assertThat(Files.getLastModifiedTime(lock)).as("touched by the write").isGreaterThan(old);
      Files.delete(lock); // a clean-up of old files by age, say
      apply(engine, delta("a", 2, w0 + 2).entry(1, 1.0));
      clock.setNanos(T0 + 4 * INTERVAL);
      engine.advance();
      archive.close(Duration.ofSeconds(10));
      assertThat(logs.messages())
          .filteredOn(m -> m.contains("collector.lock was removed"))
          .hasSize(1);
    }
    assertThat(registry.get("profold.archive.intervals.written").counter().count())
        .isEqualTo(4); // two schemes, two intervals: the files go on
  }

  /**
   * Another process can lock the archive's lock file: true when it could, false when it is held.
   * The probe is a JDK-only program run from its source, so it needs no class path.
   */
  boolean anotherProcessCanLock(Path lockFile) throws Exception {
    Path probe = dir.resolve("probe").resolve("LockProbe.java");
    if (!Files.exists(probe)) {
      Files.createDirectories(probe.getParent());
      Files.writeString(
          probe,
          String.join(
              "\n",
              "import java.nio.channels.FileChannel;",
              "import java.nio.file.Path;",
              "import java.nio.file.StandardOpenOption;",
              "public class LockProbe {",
              "  public static void main(String[] a) throws Exception {",
              "    try (FileChannel ch = FileChannel.open(Path.of(a[0]), StandardOpenOption.WRITE)) {",
              "      System.exit(ch.tryLock() != null ? 0 : 3);",
              "    }",
              "  }",
              "}",
              ""));
    }
    Process p =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                probe.toString(),
                lockFile.toString())
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as("probe output: %s", out).isIn(0, 3);
    return p.exitValue() == 0;
  }

  @Test
  void theDirectoryStaysLockedAgainstOtherProcessesWhileTheArchiveWrites() throws Exception {
    Path archiveDir = dir.resolve("archive");
    Path lock = archiveDir.resolve(IntervalArchive.LOCK_FILE);
    IntervalArchive archive = new IntervalArchive(archiveDir, Set.of(), registry);
    FoldEngine engine = engine(archive);
    long w0 = T0 / INTERVAL;
    apply(engine, delta("a", 1, w0).entry(1, 1.0));
    clock.setNanos(T0 + 2 * INTERVAL);
    engine.advance();
    long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (registry.get("profold.archive.intervals.written").counter().count() < 2
        && System.nanoTime() < until) {
      java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // the writer's thread
    }
    assertThat(registry.get("profold.archive.intervals.written").counter().count()).isEqualTo(2);

    // Before: touching the lock file after a write opened and closed it, which dropped this
    // process's lock (POSIX record locks), and a second collector could start on the directory.
    assertThat(anotherProcessCanLock(lock)).as("locked after writing").isFalse();
    // A second archive of this process is refused without dropping the lock either (before, it
    // opened the file, found the lock this JVM holds, and closed the file: the lock went).
    assertThatThrownBy(() -> new IntervalArchive(archiveDir, Set.of(), registry))
        .isInstanceOf(IntervalArchive.InUse.class)
        .hasMessageContaining("pid " + ProcessHandle.current().pid());
    assertThat(anotherProcessCanLock(lock)).as("locked after a refused second archive").isFalse();

    archive.close(Duration.ofSeconds(10));
    assertThat(anotherProcessCanLock(lock)).as("released by close").isTrue();
    new IntervalArchive(archiveDir, Set.of(), registry).close(Duration.ofSeconds(10));
  }

  @Test
  void anArchiveThatFailsToStartAfterLockingGivesTheDirectoryBack() throws Exception {
    Path archiveDir = dir.resolve("archive");
    SimpleMeterRegistry failing = new SimpleMeterRegistry();
    failing
        .config()
        .meterFilter(
            new io.micrometer.core.instrument.config.MeterFilter() {
              @Override
              public io.micrometer.core.instrument.Meter.Id map(
                  io.micrometer.core.instrument.Meter.Id id) {
                throw new IllegalStateException("no meters today");
              }
            });
    // Its meters are registered after the lock is taken: the failure comes with the lock held.
    assertThatThrownBy(() -> new IntervalArchive(archiveDir, Set.of(), failing))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("no meters today");

    assertThat(anotherProcessCanLock(archiveDir.resolve(IntervalArchive.LOCK_FILE)))
        .as("the lock released")
        .isTrue();
    new IntervalArchive(archiveDir, Set.of(), registry).close(Duration.ofSeconds(10)); // and HELD
  }

  @Test
  void aSecondCloseLeavesALaterArchiveOfTheDirectoryLocked() throws Exception {
    Path archiveDir = dir.resolve("archive");
    IntervalArchive first = new IntervalArchive(archiveDir, Set.of(), registry);
    first.close(Duration.ofSeconds(10));
    IntervalArchive second = new IntervalArchive(archiveDir, Set.of(), registry);

    first.close(Duration.ofSeconds(10)); // before: freed the second one's place in this process

    assertThatThrownBy(() -> new IntervalArchive(archiveDir, Set.of(), registry))
        .isInstanceOf(IntervalArchive.InUse.class);
    // Refused before it opened the lock file: opening and closing it would drop the lock.
    assertThat(anotherProcessCanLock(archiveDir.resolve(IntervalArchive.LOCK_FILE))).isFalse();
    second.close(Duration.ofSeconds(10));
  }

  @Test
  void theIntervalBoundsWinOverAMeasurementOfTheSameName() {
    dev.profold.reduce.Aggregate a = new dev.profold.reduce.Aggregate();
    a.record(1.5);
    dev.profold.sinks.snapshot.IntervalSnapshot interval =
        new dev.profold.sinks.snapshot.IntervalSnapshot(
            T0,
            T0 + INTERVAL,
            List.of(
                new dev.profold.sinks.snapshot.SeriesSnapshot(
                    List.of("main"),
                    new dev.profold.sinks.snapshot.Measure(IntervalArchive.START, ""),
                    dev.profold.sinks.snapshot.StateSnapshot.of(a))));

    List<Map<String, Object>> records =
        IntervalArchive.records(List.of("path"), List.of(), interval);

    // Before: the measurement's state replaced the bound, and a query by time read it.
    assertThat(records).hasSize(1);
    assertThat(records.get(0).get(IntervalArchive.START)).isEqualTo("2023-11-14T22:13:20.000Z");
    assertThat(records.get(0).keySet()).startsWith(IntervalArchive.START, IntervalArchive.END);
  }

  @Test
  void archivedIntervalsQueryExactlyAndByTime() throws Exception {
    IntervalArchive archive = new IntervalArchive(dir, Set.of("by_path"), registry);
    FoldEngine engine = engine(archive);
    long w0 = T0 / INTERVAL;
    apply(engine, delta("a", 1, w0).entry(1, 1.0).entry(2, 0.25, 0.5));
    apply(engine, delta("b", 1, w0).entry(1, 3.0));
    clock.setNanos(T0 + INTERVAL + SECOND);
    engine.advance();
    apply(engine, delta("a", 2, w0 + 1).entry(1, 2.0, 4.0));
    clock.setNanos(T0 + 3 * INTERVAL); // closes W0 and W0+1
    engine.advance();
    archive.close(Duration.ofSeconds(10));

    Path file = dir.resolve("by_path").resolve("by_path-2023-11-14.jsonl");
    assertThat(file).exists();
    assertThat(dir.resolve("region")).as("only the chosen schemes").doesNotExist();
    List<String> lines = Files.readAllLines(file);
    assertThat(lines).hasSize(3); // W0: main, main/read; W0+1: main
    assertThat(lines.get(0))
        .startsWith(
            "{\"interval.start\":\"2023-11-14T22:13:20.000Z\","
                + "\"interval.end\":\"2023-11-14T22:13:30.000Z\",\"path\":[\"main\"],\"count\":2,");

    Map<String, JsonNode> all =
        rows(query("SELECT path, count(), sum(time), avg(time) GROUP BY path FORMAT json", file));
    assertThat(all.get("main").get("count").asLong()).isEqualTo(4);
    assertThat(all.get("main").get("sum#time").asDouble()).isEqualTo(10.0);
    assertThat(all.get("main").get("avg#time").asDouble()).isEqualTo(2.5);
    assertThat(all.get("main/read").get("sum#time").asDouble()).isEqualTo(0.75);
    // The path label is a nested path, as in Caliper: WHERE matches any level of it.
    assertThat(
            rows(query("SELECT path, sum(time) WHERE path=read GROUP BY path FORMAT json", file)))
        .containsOnlyKeys("main/read");

    Map<String, JsonNode> second =
        rows(
            query(
                "SELECT path, sum(time) WHERE interval.start>2023-11-14T22:13:20.000Z"
                    + " GROUP BY path FORMAT json",
                file));
    assertThat(second).containsOnlyKeys("main");
    assertThat(second.get("main").get("sum#time").asDouble()).isEqualTo(6.0);
    assertThat(registry.get("profold.archive.intervals.written").counter().count()).isEqualTo(2);
  }

  @Test
  void aWriteThatFailsIsCountedAndTheCollectorGoesOn() throws Exception {
    IntervalArchive archive = new IntervalArchive(dir, Set.of(), registry);
    Files.writeString(dir.resolve("by_path"), "not a directory");
    FoldEngine engine = engine(archive);
    apply(engine, delta("a", 1, T0 / INTERVAL).entry(1, 1.0));
    clock.setNanos(T0 + 2 * INTERVAL);
    engine.advance();
    archive.close(Duration.ofSeconds(10));
    assertThat(dropped("write_failed")).isEqualTo(1);
    assertThat(dir.resolve("region").resolve("region-2023-11-14.jsonl")).exists();
  }

  @Test
  void aLineTornByAnInterruptedWriteIsCutOffBeforeTheNextAppend() throws Exception {
    long w0 = T0 / INTERVAL;
    IntervalArchive first = new IntervalArchive(dir, Set.of("by_path"), registry);
    FoldEngine engine = engine(first);
    apply(engine, delta("a", 1, w0).entry(1, 1.0));
    clock.setNanos(T0 + 2 * INTERVAL);
    engine.advance();
    first.close(Duration.ofSeconds(10));
    Path file = dir.resolve("by_path").resolve("by_path-2023-11-14.jsonl");
    String written = Files.readString(file);
    // The collector was killed (or its writer interrupted at shutdown) halfway through a line.
    Files.writeString(
        file, written.substring(0, written.length() / 2), java.nio.file.StandardOpenOption.APPEND);

    IntervalArchive second = new IntervalArchive(dir, Set.of("by_path"), registry);
    engine = engine(second);
    apply(engine, delta("a", 2, w0 + 2).entry(1, 2.0));
    clock.setNanos(T0 + 4 * INTERVAL);
    engine.advance();
    second.close(Duration.ofSeconds(10));

    assertThat(Files.readString(file)).startsWith(written).endsWith("\n");
    Map<String, JsonNode> all =
        rows(query("SELECT path, count(), sum(time) GROUP BY path FORMAT json", file));
    assertThat(all.get("main").get("count").asLong()).isEqualTo(2);
    assertThat(all.get("main").get("sum#time").asDouble()).isEqualTo(3.0);
  }

  @Test
  void archivedRecordsNameTheirAttributesAsTheSchemesQueryDoesSoItAnswersOffline()
      throws Exception {
    // The archive named them by their Prometheus labels (thread_group): the scheme's own query,
    // which answers online, gave one group with an empty thread.group offline.
    IntervalArchive archive = new IntervalArchive(dir, Set.of(), registry);
    FoldEngine engine =
        engine(archive, scheme("threads", "SELECT sum(time) GROUP BY service, thread.group"));
    long w0 = T0 / INTERVAL;
    Deltas.Builder d =
        delta("a", 1, w0)
            .attribute(
                7,
                "thread.group",
                dev.profold.proto.v1.ValueType.VALUE_TYPE_STRING,
                dev.profold.proto.v1.AttributeKind.ATTRIBUTE_KIND_DIMENSION,
                "")
            .string(70, "http-exec-*")
            .entry(
                dev.profold.proto.v1.Entry.newBuilder()
                    .addKey(Deltas.regionKey(1))
                    .addKey(
                        dev.profold.proto.v1.AttributeValue.newBuilder()
                            .setAttributeId(7)
                            .setStringId(70))
                    .addMeasurements(Deltas.time(2.0))
                    .build());
    apply(engine, d);
    clock.setNanos(T0 + 2 * INTERVAL);
    engine.advance();
    archive.close(Duration.ofSeconds(10));

    Path file = dir.resolve("threads").resolve("threads-2023-11-14.jsonl");
    assertThat(Files.readString(file)).contains("\"thread.group\":\"http-exec-*\"");
    Map<String, JsonNode> rows =
        rows(
            query(
                "SELECT thread.group, sum(time) WHERE service=checkout GROUP BY thread.group"
                    + " FORMAT json",
                file),
            "thread.group");
    assertThat(rows.get("http-exec-*").get("sum#time").asDouble()).isEqualTo(2.0);
  }

  @Test
  void theDirectoryIsHeldByOneArchiveAtATimeAndNamesItsHolder() throws Exception {
    IntervalArchive first = new IntervalArchive(dir, Set.of(), registry);
    assertThat(Files.readString(dir.resolve(IntervalArchive.LOCK_FILE)))
        .isEqualTo(ProcessHandle.current().pid() + "\n");
    assertThatThrownBy(() -> new IntervalArchive(dir, Set.of(), registry))
        .isInstanceOfSatisfying(
            IntervalArchive.InUse.class,
            e -> assertThat(e.pid()).isEqualTo(Long.toString(ProcessHandle.current().pid())));
    first.close(Duration.ofSeconds(10));
    IntervalArchive again = new IntervalArchive(dir, Set.of(), registry);
    again.close(Duration.ofSeconds(10));
  }

  @Test
  void anUnusableDirectoryIsRefusedAtStart() throws Exception {
    Path file = dir.resolve("file");
    Files.writeString(file, "x");
    assertThatThrownBy(() -> new IntervalArchive(file.resolve("sub"), Set.of(), registry))
        .isInstanceOf(java.io.IOException.class);
  }

  void apply(FoldEngine engine, Deltas.Builder b) {
    assertThat(engine.apply(b.decode(dictionary)).outcome()).isEqualTo(FoldResult.Outcome.APPLIED);
  }

  /** Intervals counted as not archived for {@code reason}. */
  double dropped(String reason) {
    return registry
        .get("profold.archive.intervals.dropped")
        .tag("reason", reason)
        .counter()
        .count();
  }

  static Map<String, JsonNode> rows(String json) throws Exception {
    return rows(json, "path");
  }

  static Map<String, JsonNode> rows(String json, String key) throws Exception {
    Map<String, JsonNode> out = new HashMap<>();
    new ObjectMapper().readTree(json).forEach(r -> out.put(r.get(key).asText(), r));
    return out;
  }
}
