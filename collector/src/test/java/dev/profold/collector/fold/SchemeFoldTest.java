package dev.profold.collector.fold;

import static dev.profold.collector.fold.FoldEngineTest.INTERVAL;
import static dev.profold.collector.fold.FoldEngineTest.SECOND;
import static dev.profold.collector.fold.FoldEngineTest.T0;
import static dev.profold.collector.fold.FoldEngineTest.TIME;
import static dev.profold.collector.fold.FoldEngineTest.assertState;
import static dev.profold.collector.fold.FoldEngineTest.find;
import static dev.profold.collector.fold.FoldEngineTest.has;
import static dev.profold.proto.v1.AttributeKind.ATTRIBUTE_KIND_DIMENSION;
import static dev.profold.proto.v1.AttributeKind.ATTRIBUTE_KIND_MEASUREMENT;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_COMPUTE;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_WAIT;
import static dev.profold.proto.v1.ValueType.VALUE_TYPE_DOUBLE;
import static dev.profold.proto.v1.ValueType.VALUE_TYPE_INT;
import static dev.profold.proto.v1.ValueType.VALUE_TYPE_STRING;
import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.collector.scheme.SchemeException;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.testing.Deltas;
import dev.profold.collector.testing.LogLines;
import dev.profold.collector.testing.MutableClock;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.MetricState;
import dev.profold.sinks.snapshot.IntervalSnapshot;
import dev.profold.sinks.snapshot.Measure;
import dev.profold.sinks.snapshot.SchemeSnapshot;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Online schemes other than the built-in one, through {@link FoldEngine}: WHERE, grouping by entry
 * attributes, groups shared by instances, retention, per-scheme intervals and reconfiguration. Same
 * clock and windows as {@link FoldEngineTest}; entries are regions main (1, compute) and
 * main/db.query (2, io) of service checkout, tenant (attribute 3, string) and shard (4, int).
 */
class SchemeFoldTest {
  static final int TENANT = 3;
  static final int SHARD = 4;
  static final int ACME = Deltas.FREE_STRING_IDS;
  static final int GLOBEX = Deltas.FREE_STRING_IDS + 1;

  final MutableClock clock = MutableClock.atNanos(T0 + SECOND);
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  final CollectorMetrics metrics = new CollectorMetrics(registry);
  final GlobalDictionary dictionary = new GlobalDictionary(100_000);
  FoldEngine engine;

  static SchemeDefinition scheme(String name, String query) throws SchemeException {
    return scheme(name, query, INTERVAL, 1000, 360);
  }

  static SchemeDefinition scheme(
      String name, String query, long intervalNanos, int limit, int retention)
      throws SchemeException {
    return SchemeDefinition.compile(name, query, Duration.ofNanos(intervalNanos), limit, retention);
  }

  void start(SchemeDefinition... schemes) {
    engine =
        new FoldEngine(
            new FoldConfig(INTERVAL, 5, 1000, 20, List.of(schemes)), dictionary, clock, metrics);
  }

  static Deltas.Builder checkout(String instance) {
    return FoldEngineTest.checkout(instance)
        .attribute(TENANT, "tenant", VALUE_TYPE_STRING, ATTRIBUTE_KIND_DIMENSION, "")
        .attribute(SHARD, "shard", VALUE_TYPE_INT, ATTRIBUTE_KIND_DIMENSION, "")
        .string(ACME, "acme")
        .string(GLOBEX, "globex");
  }

  /** An entry at region {@code region} for {@code tenant} (a string id) and shard. */
  static Entry entry(int region, int tenant, long shard, double... values) {
    return Entry.newBuilder()
        .addKey(Deltas.regionKey(region))
        .addKey(AttributeValue.newBuilder().setAttributeId(TENANT).setStringId(tenant))
        .addKey(AttributeValue.newBuilder().setAttributeId(SHARD).setIntValue(shard))
        .addMeasurements(Deltas.time(values))
        .build();
  }

  void apply(Deltas.Builder b) {
    assertThat(engine.apply(b.decode(dictionary)).outcome()).isEqualTo(FoldResult.Outcome.APPLIED);
  }

  void at(long unixNanos) {
    clock.setNanos(unixNanos);
    engine.advance();
  }

  SchemeSnapshot snapshot(String name) {
    return engine.snapshot().schemes().stream()
        .filter(s -> s.scheme().equals(name))
        .findFirst()
        .orElseThrow();
  }

  @Test
  void whereSelectsEntriesAndGroupByTheirAttributesAcrossInstances() throws Exception {
    start(
        scheme(
            "tenant_io",
            "SELECT sum(time) WHERE kind=io, shard<3 GROUP BY service, tenant, shard"));
    apply(
        checkout("i-1")
            .seq(1)
            .entry(entry(2, ACME, 1, 0.5))
            .entry(entry(2, ACME, 2, 0.25))
            .entry(entry(2, GLOBEX, 1, 4.0))
            .entry(entry(2, ACME, 3, 64.0)) // shard 3: not < 3
            .entry(entry(1, ACME, 1, 8.0))); // compute: not io
    apply(checkout("i-2").seq(1).entry(entry(2, ACME, 1, 2.0)));

    SchemeSnapshot s = snapshot("tenant_io");
    assertThat(s.labelNames()).containsExactly("service", "tenant", "shard");
    assertThat(s.cumulative()).hasSize(3);
    // Both instances feed one group: the scheme does not group by instance.
    assertState(find(s.cumulative(), List.of("checkout", "acme", "1")), 0.5, 2.0);
    assertState(find(s.cumulative(), List.of("checkout", "acme", "2")), 0.25);
    assertState(find(s.cumulative(), List.of("checkout", "globex", "1")), 4.0);
    assertThat(s.query()).contains("WHERE kind=io");
  }

  @Test
  void notMatchesRecordsWithoutTheAttributeAsInCaliper() throws Exception {
    start(scheme("no_acme", "SELECT sum(time) WHERE NOT tenant=acme GROUP BY path"));
    apply(
        checkout("i-1")
            .seq(1)
            .entry(entry(2, ACME, 1, 0.5))
            .entry(entry(2, GLOBEX, 1, 4.0))
            .entry(1, 8.0)); // no tenant at all: NOT tenant=acme holds
    SchemeSnapshot s = snapshot("no_acme");
    assertState(find(s.cumulative(), List.of("main/db.query")), 4.0);
    assertState(find(s.cumulative(), List.of("main")), 8.0);
    assertThat(s.cumulative()).hasSize(2);
  }

  @Test
  void everySchemeSeesEveryDeltaAndMetricNamesFollowTheirLabels() throws Exception {
    start(
        SchemeDefinition.builtIn(Duration.ofNanos(INTERVAL), 1000),
        scheme("by_kind", "SELECT count(), max(time) GROUP BY kind"));
    apply(checkout("i-1").seq(1).entry(1, 1.0).entry(2, 0.5, 0.25));
    assertThat(engine.snapshot().schemes())
        .extracting(SchemeSnapshot::scheme)
        .containsExactly("region", "by_kind");
    SchemeSnapshot byKind = snapshot("by_kind");
    assertThat(byKind.labelNames()).containsExactly("kind");
    assertState(find(byKind.cumulative(), List.of("compute")), 1.0);
    assertState(find(byKind.cumulative(), List.of("io")), 0.5, 0.25);
    assertState(
        find(snapshot("region").cumulative(), List.of("checkout", "i-1", "main", "compute")), 1.0);
  }

  @Test
  void sharedGroupLivesWhileAnyInstanceFeedsItAndRestartsDoNotResetIt() throws Exception {
    start(
        SchemeDefinition.builtIn(Duration.ofNanos(INTERVAL), 1000),
        scheme("by_service", "SELECT sum(time) GROUP BY service"));
    apply(checkout("a").seq(1).entry(1, 1.0));
    apply(checkout("b").seq(1).entry(1, 2.0));
    // a restarts: its own (per-instance) series start again, the shared one keeps counting.
    apply(
        checkout("a").incarnation(8).processStart(Deltas.DEFAULT_PROCESS_START + 1).entry(1, 4.0));
    assertState(find(snapshot("by_service").cumulative(), List.of("checkout")), 1.0, 2.0, 4.0);
    assertState(
        find(snapshot("region").cumulative(), List.of("checkout", "a", "main", "compute")), 4.0);

    // b goes silent and expires; a keeps sending: the shared group stays.
    for (int i = 1; i <= 6; i++) {
      at(T0 + i * INTERVAL);
      apply(
          checkout("a")
              .incarnation(8)
              .seq(1 + i)
              .interval(T0 + i * INTERVAL, T0 + (i + 1) * INTERVAL)
              .entry(1, 0.5));
    }
    assertThat(engine.activeSources()).isEqualTo(1);
    assertThat(has(snapshot("by_service").cumulative(), List.of("checkout"))).isTrue();
    assertThat(has(snapshot("region").cumulative(), List.of("checkout", "b", "main", "compute")))
        .isFalse();

    // a expires too: nobody feeds the group, it goes.
    at(T0 + 20 * INTERVAL);
    assertThat(engine.activeSources()).isZero();
    assertThat(snapshot("by_service").cumulative()).isEmpty();
    assertThat(snapshot("by_service").groups()).isZero();
  }

  @Test
  void aRestartKeepsTheTotalsOfAGroupAnotherServicesInstanceOfTheSameNameFeeds() throws Exception {
    start(scheme("by_instance", "SELECT sum(time) GROUP BY instance, path"));
    apply(checkout("pod-1").seq(1).entry(1, 1.0));
    apply(
        Deltas.source("inventory", "pod-1") // the same instance name in another service
            .incarnation(7)
            .region(1, "main", REGION_KIND_COMPUTE)
            .interval(T0, T0 + INTERVAL)
            .seq(1)
            .entry(1, 2.0));
    assertState(find(snapshot("by_instance").cumulative(), List.of("pod-1", "main")), 1.0, 2.0);

    // checkout's pod-1 restarts: the group is not its own, so inventory's total stays.
    apply(
        checkout("pod-1")
            .incarnation(8)
            .processStart(Deltas.DEFAULT_PROCESS_START + 1)
            .entry(1, 4.0));
    assertState(
        find(snapshot("by_instance").cumulative(), List.of("pod-1", "main")), 1.0, 2.0, 4.0);
  }

  /**
   * Delta {@code seq} of checkout/i-1 with one value at each of two paths of 16,003 characters: a
   * scheme limited to 2 groups has room for the labels of one.
   */
  private static Deltas.Builder deepPaths(long seq) {
    Deltas.Builder deep = FoldEngineTest.checkout("i-1").seq(seq);
    int parent = 0;
    for (int i = 0; i < 4; i++) {
      deep.region(10 + i, parent, String.valueOf((char) ('a' + i)).repeat(4000), REGION_KIND_WAIT);
      parent = 10 + i;
    }
    deep.region(20, 12, "x".repeat(4000), REGION_KIND_WAIT);
    return deep.entry(13, 1.0).entry(20, 2.0);
  }

  @Test
  void aKeyOverflowedForItsLabelsIsNotJudgedAgainUntilAGroupGoes() throws Exception {
    // With room for groups but not for their labels, every overflowed key was judged again (WHERE,
    // labels, path) on every entry: the fold slowed to a crawl once the label bound bit.
    start(scheme("by_path", "SELECT sum(time) GROUP BY path", INTERVAL, 2, 360));
    assertThat(engine.apply(deepPaths(1).decode(dictionary)).overflowed()).isEqualTo(1);
    long judged = engine.fold("by_path").resolutions();
    for (int seq = 2; seq <= 50; seq++) {
      assertThat(engine.apply(deepPaths(seq).decode(dictionary)).overflowed()).isEqualTo(1);
    }
    assertThat(engine.fold("by_path").resolutions()).as("keys judged again").isEqualTo(judged);
  }

  @Test
  void aRestartFreesTheGroupsOnlyTheOldIncarnationFed() throws Exception {
    // A pod that keeps its name and restarts within the TTL: the old incarnation's groups stayed
    // (empty, so not exposed) and counted against the limit for good, until real new groups
    // overflowed.
    start(scheme("by_path", "SELECT sum(time) GROUP BY instance, path", INTERVAL, 2, 360));
    apply(checkout("a").seq(1).entry(1, 1.0).entry(2, 0.5));
    assertThat(snapshot("by_path").groups()).isEqualTo(2); // the limit
    at(T0 + 3 * INTERVAL); // the delta's window has closed

    FoldResult r =
        engine.apply(
            checkout("a")
                .incarnation(8)
                .processStart(Deltas.DEFAULT_PROCESS_START + 1)
                .region(9, 1, "cache", REGION_KIND_WAIT) // a path the old one never took
                .interval(T0 + 3 * INTERVAL, T0 + 4 * INTERVAL)
                .seq(1)
                .entry(9, 4.0)
                .decode(dictionary));
    assertThat(r.outcome()).isEqualTo(FoldResult.Outcome.APPLIED);
    assertThat(r.overflowed()).isZero();
    SchemeSnapshot s = snapshot("by_path");
    assertThat(s.groups()).isEqualTo(1);
    assertThat(s.cumulative()).hasSize(1);
    assertState(find(s.cumulative(), List.of("a", "main/cache")), 4.0);
  }

  @Test
  void aRestartWhileTheOldIncarnationsWindowIsOpenKeepsItsIntervalAndTakesBackItsGroups()
      throws Exception {
    start(scheme("by_path", "SELECT sum(time) GROUP BY instance, path", INTERVAL, 10, 360));
    apply(checkout("a").seq(1).entry(1, 1.0).entry(2, 0.5));
    apply(
        checkout("a")
            .incarnation(8)
            .processStart(Deltas.DEFAULT_PROCESS_START + 1)
            .seq(1)
            .entry(1, 4.0));
    SchemeSnapshot s = snapshot("by_path");
    assertState(find(s.cumulative(), List.of("a", "main")), 4.0); // started again
    assertThat(has(s.cumulative(), List.of("a", "main/db.query"))).isFalse();

    at(T0 + 2 * INTERVAL); // the window closes with both incarnations' data
    List<SeriesSnapshot> closed = snapshot("by_path").lastInterval();
    assertState(find(closed, List.of("a", "main")), 1.0, 4.0);
    assertState(find(closed, List.of("a", "main/db.query")), 0.5);
    at(T0 + 3 * INTERVAL);
    assertThat(snapshot("by_path").groups()).as("main/db.query, fed by nobody, went").isEqualTo(1);
  }

  @Test
  void aSchemeIntervalShorterThanTheClientsDeltasIsSaidOnceWithTheFix() throws Exception {
    // A 2 s scheme fed 10 s deltas: each came after its window had closed, and the scheme's
    // interval values never existed, without a word.
    start(scheme("fast", "SELECT sum(time) GROUP BY path", INTERVAL / 5, 100, 360));
    List<String> said;
    try (LogLines lines = LogLines.capture(SchemeFold.class)) {
      at(T0 + INTERVAL + SECOND);
      for (int i = 0; i < SchemeFold.LONG_DELTAS_TO_WARN - 1; i++) {
        apply(checkout("i-" + i).seq(1).entry(1, 1.0));
      }
      assertThat(lines.messages())
          .as("not before %d in a row", SchemeFold.LONG_DELTAS_TO_WARN)
          .isEmpty();
      apply(checkout("a").seq(1).entry(1, 1.0));
      apply(checkout("b").seq(1).entry(1, 2.0));
      said = lines.messages();
    }
    assertThat(said).hasSize(1);
    assertThat(said.get(0))
        .contains("scheme 'fast'")
        .contains("deltas of 10000 ms")
        .contains("interval of 2000 ms")
        .contains("set the scheme's interval to at least the clients'");
    assertThat(snapshot("fast").cumulative()).hasSize(1); // the data is there, cumulative only
  }

  @Test
  void deltasAFlushsDelayLongerThanTheSchemesIntervalSayNothing() throws Exception {
    // The default: clients and scheme at 10 s, each delta 10 s and a few milliseconds (the
    // flush's delay), one now and then twice as long (a flush late by an interval).
    start(scheme("same", "SELECT sum(time) GROUP BY path"));
    try (LogLines lines = LogLines.capture(SchemeFold.class)) {
      for (int i = 0; i < 3 * SchemeFold.LONG_DELTAS_TO_WARN; i++) {
        long start = T0 + i * INTERVAL;
        long end = start + (i % 7 == 3 ? 2 * INTERVAL : INTERVAL + 4_000_000L);
        at(end + SECOND / 10);
        apply(checkout("a").seq(i + 1).interval(start, end).entry(1, 1.0));
      }
      assertThat(lines.messages()).noneMatch(m -> m.contains("longer than"));
    }
  }

  @Test
  void aMeasurementSentAsAnIntegerAndAsAFloatIsOneMeasurement() throws Exception {
    start(scheme("by_path", "SELECT sum(bytes) GROUP BY path"));
    Measure bytes = new Measure("bytes", "bytes");
    apply(
        checkout("a")
            .seq(1)
            .attribute(5, "bytes", VALUE_TYPE_INT, ATTRIBUTE_KIND_MEASUREMENT, "bytes")
            .entry(
                Entry.newBuilder()
                    .addKey(Deltas.regionKey(1))
                    .addMeasurements(Deltas.measurement(5, 64))
                    .build()));
    apply(
        checkout("b")
            .seq(1)
            .attribute(5, "bytes", VALUE_TYPE_DOUBLE, ATTRIBUTE_KIND_MEASUREMENT, "bytes")
            .entry(
                Entry.newBuilder()
                    .addKey(Deltas.regionKey(1))
                    .addMeasurements(Deltas.measurement(5, 0.5))
                    .build()));
    SchemeSnapshot s = snapshot("by_path");
    assertThat(s.groups()).as("one group for both").isEqualTo(1);
    assertState(find(s.cumulative(), List.of("main"), bytes), 64, 0.5);
  }

  @Test
  void labelsBeyondTheirBoundOverflowLikeGroupsBeyondTheLimit() throws Exception {
    // A limit of 2 groups allows 16,384 label characters: one path of four 4,000-character
    // names (16,003 with its slashes) fits, a second does not.
    start(scheme("by_path", "SELECT sum(time) GROUP BY path", INTERVAL, 2, 360));
    Deltas.Builder deep = FoldEngineTest.checkout("i-1").seq(1);
    int parent = 0;
    for (int i = 0; i < 4; i++) {
      deep.region(10 + i, parent, String.valueOf((char) ('a' + i)).repeat(4000), REGION_KIND_WAIT);
      parent = 10 + i;
    }
    deep.region(20, 12, "x".repeat(4000), REGION_KIND_WAIT); // a sibling of node 13's path
    FoldResult r = engine.apply(deep.entry(13, 1.0).entry(20, 2.0).decode(dictionary));
    assertThat(r.overflowed()).isEqualTo(1);
    SchemeSnapshot s = snapshot("by_path");
    assertThat(s.groups()).as("one regular group and the overflow group").isEqualTo(2);
    assertState(find(s.cumulative(), List.of(FoldEngine.OVERFLOW)), 2.0);
    assertThat(
            registry
                .get("profold.scheme.overflow.measurements")
                .tag("scheme", "by_path")
                .counter()
                .count())
        .isEqualTo(1);
  }

  @Test
  void anOverflowGroupWhoseCountSaturatesIsLoggedAndTheDeltaApplied() throws Exception {
    // Before: with a limit of 64 the first overflow group's id was past the array of regular
    // groups' keys, and the saturation's log line failed the delta half-applied.
    start(scheme("by_path", "SELECT sum(time) GROUP BY path", INTERVAL, 64, 360));
    Deltas.Builder fill = FoldEngineTest.checkout("i-1").seq(1);
    for (int r = 10; r < 10 + 64; r++) {
      fill.region(r, "r" + r, REGION_KIND_WAIT).entry(r, 1.0);
    }
    apply(fill);
    Deltas.Builder big =
        FoldEngineTest.checkout("i-1").seq(2).region(200, "more", REGION_KIND_WAIT);
    MetricState most =
        MetricState.newBuilder().setCount(1L << 53).setSum(1).setMin(1).setMax(1).build();
    for (int i = 0; i < 1025; i++) {
      big.entry(
          Entry.newBuilder()
              .addKey(Deltas.regionKey(200))
              .addMeasurements(Measurement.newBuilder().setAttributeId(Deltas.TIME).setState(most))
              .build());
    }
    FoldResult r = engine.apply(big.decode(dictionary));
    assertThat(r.outcome()).isEqualTo(FoldResult.Outcome.APPLIED);
    assertThat(r.overflowed()).isEqualTo(1025);
    assertThat(
            registry
                .get("profold.scheme.counts.saturated")
                .tag("scheme", "by_path")
                .counter()
                .count())
        .as("the cumulative state and the window's")
        .isEqualTo(2);
  }

  @Test
  void anIntervalWithDataBeforeAClockJumpBeyondTheRetentionIsStillHandedToTheArchive()
      throws Exception {
    start(scheme("kept", "SELECT sum(time) GROUP BY path", INTERVAL, 1000, 2));
    List<Long> closedStarts = new java.util.ArrayList<>();
    engine.onIntervalClosed(
        (scheme, labels, paths, interval) -> {
          if (scheme.equals("kept")) {
            closedStarts.add(interval.startUnixNanos());
          }
        });
    apply(checkout("i-1").seq(1).entry(1, 1.0)); // window T0
    at(T0 + 50 * INTERVAL); // a suspended machine wakes up: 50 intervals later
    // Before: window T0 was emptied without reaching the archive.
    assertThat(closedStarts).containsExactly(T0);
    assertThat(snapshot("kept").retained()).hasSize(2);
  }

  @Test
  void retainsTheLastIntervalsConsecutivelyEmptyOnesIncluded() throws Exception {
    start(scheme("kept", "SELECT sum(time) GROUP BY path", INTERVAL, 1000, 3));
    long w0 = T0 / INTERVAL;
    for (int i = 0; i < 5; i++) {
      if (i == 3) {
        continue; // interval W0+3 has no data
      }
      at(T0 + i * INTERVAL + SECOND);
      apply(
          checkout("i-1")
              .seq(i + 1)
              .interval((w0 + i) * INTERVAL, (w0 + i + 1) * INTERVAL)
              .entry(1, 1 << i));
    }
    at(T0 + 6 * INTERVAL); // closes up to W0+4
    List<IntervalSnapshot> kept = snapshot("kept").retained();
    assertThat(kept).hasSize(3);
    assertThat(kept)
        .extracting(IntervalSnapshot::startUnixNanos)
        .containsExactly(T0 + 2 * INTERVAL, T0 + 3 * INTERVAL, T0 + 4 * INTERVAL);
    assertState(find(kept.get(0).series(), List.of("main")), 4.0);
    assertThat(kept.get(1).series()).isEmpty();
    assertState(find(kept.get(2).series(), List.of("main")), 16.0);
    assertThat(snapshot("kept").lastInterval()).isEqualTo(kept.get(2).series());
    assertThat(snapshot("kept").lastIntervalEndUnixNanos()).isEqualTo(T0 + 5 * INTERVAL);
  }

  /**
   * Starts a scheme "fast" on the default interval and "slow" on {@code slowInterval}; returns the
   * start of the slow scheme's window that holds T0.
   */
  private long startFastAndSlow(long slowInterval) throws Exception {
    start(
        scheme("fast", "SELECT sum(time) GROUP BY path"),
        scheme("slow", "SELECT sum(time) GROUP BY path", slowInterval, 1000, 10));
    return Math.floorDiv(T0, slowInterval) * slowInterval;
  }

  @Test
  void aSchemeWithALongerIntervalClosesOnItsOwnBoundaries() throws Exception {
    long minute = 60 * SECOND;
    long start = startFastAndSlow(minute);
    at(start + SECOND);
    apply(checkout("i-1").seq(1).interval(start, start + INTERVAL).entry(1, 1.0));
    at(start + INTERVAL + SECOND);
    apply(checkout("i-1").seq(2).interval(start + INTERVAL, start + 2 * INTERVAL).entry(1, 2.0));
    at(start + 3 * INTERVAL);
    assertState(find(snapshot("fast").lastInterval(), List.of("main")), 2.0);
    assertThat(snapshot("slow").lastInterval()).isEmpty(); // its first minute is still open
    at(start + 2 * minute);
    assertState(find(snapshot("slow").lastInterval(), List.of("main")), 1.0, 2.0);
    assertThat(snapshot("slow").intervalNanos()).isEqualTo(minute);
  }

  @Test
  void aSourceExpiringBeforeALongerIntervalClosesKeepsItsDataInThatInterval() throws Exception {
    long minute = 60 * SECOND;
    long start = startFastAndSlow(minute);
    at(start + SECOND);
    apply(checkout("i-1").seq(1).interval(start, start + INTERVAL).entry(1, 1.0));
    // The fold thread ticks all the time: the source expires 50 s after it was last heard from,
    // while the slow scheme's first minute is still open (it closes two minutes in).
    for (long t = start + 2 * SECOND; t <= start + 2 * minute; t += SECOND) {
      at(t);
    }
    assertThat(engine.activeSources()).isZero();
    assertState(find(snapshot("slow").lastInterval(), List.of("main")), 1.0);
    assertThat(snapshot("slow").cumulative()).isEmpty();
    assertThat(snapshot("slow").groups()).isZero();
  }

  @Test
  void aGroupWaitingForItsWindowToCloseIsFedAgainByAnotherInstance() throws Exception {
    long minute = 60 * SECOND;
    start(scheme("slow", "SELECT sum(time) GROUP BY path", minute, 1000, 10));
    long start = Math.floorDiv(T0, minute) * minute;
    at(start + SECOND);
    apply(checkout("i-1").seq(1).interval(start, start + INTERVAL).entry(1, 1.0));
    for (long t = start + 2 * SECOND; t <= start + 52 * SECOND; t += SECOND) {
      at(t); // i-1 expires
    }
    assertThat(engine.activeSources()).isZero();
    apply(checkout("i-2").seq(1).interval(start + 40 * SECOND, start + 50 * SECOND).entry(1, 2.0));
    assertState(find(snapshot("slow").cumulative(), List.of("main")), 2.0);
    for (long t = start + 53 * SECOND; t < start + 2 * minute; t += SECOND) {
      at(t);
      assertThat(snapshot("slow").groups()).isEqualTo(1); // its window is still open
    }
    at(start + 2 * minute);
    assertState(find(snapshot("slow").lastInterval(), List.of("main")), 1.0, 2.0);
    assertThat(snapshot("slow").groups()).isZero(); // i-2 expired 102 s in
  }

  @Test
  void reconfigureKeepsUnchangedSchemesAndStartsOthersEmpty() throws Exception {
    SchemeDefinition paths = scheme("paths", "SELECT sum(time) GROUP BY path");
    start(paths, scheme("kinds", "SELECT sum(time) GROUP BY kind"));
    apply(checkout("i-1").seq(1).entry(1, 1.0));

    List<String> kept =
        engine.reconfigure(
            List.of(
                scheme("paths", "SELECT sum(time) GROUP BY path"), // same definition
                scheme("kinds", "SELECT max(time) GROUP BY kind"), // changed
                scheme("tenants", "SELECT sum(time) GROUP BY tenant"))); // new
    assertThat(kept).containsExactly("paths");
    assertState(find(snapshot("paths").cumulative(), List.of("main")), 1.0);
    assertThat(snapshot("kinds").cumulative()).isEmpty();
    assertThat(engine.schemes())
        .extracting(SchemeDefinition::name)
        .containsExactly("paths", "kinds", "tenants");

    apply(checkout("i-1").seq(2).entry(entry(1, ACME, 1, 2.0)));
    assertState(find(snapshot("paths").cumulative(), List.of("main")), 1.0, 2.0);
    assertState(find(snapshot("kinds").cumulative(), List.of("compute")), 2.0);
    assertState(find(snapshot("tenants").cumulative(), List.of("acme")), 2.0);

    engine.reconfigure(List.of(paths));
    assertThat(engine.snapshot().schemes())
        .extracting(SchemeSnapshot::scheme)
        .containsExactly("paths");
  }

  @Test
  void aReloadThatChangesOrRemovesASchemeHandsItsOpenWindowsToTheArchive() throws Exception {
    // The changed scheme's fold was dropped with its open windows: the archive, which promises
    // every interval with data, never got them.
    start(
        scheme("paths", "SELECT sum(time) GROUP BY path"),
        scheme("kinds", "SELECT sum(time) GROUP BY kind"),
        scheme("gone", "SELECT count() GROUP BY path"));
    List<String> archived = new java.util.ArrayList<>();
    engine.onIntervalClosed(
        (scheme, labels, paths, interval) ->
            archived.add(scheme + "@" + (interval.startUnixNanos() - T0) / INTERVAL));
    apply(checkout("i-1").seq(1).entry(1, 1.0)); // window T0, still open
    engine.reconfigure(
        List.of(
            scheme("paths", "SELECT sum(time) GROUP BY path"), // the same: keeps its windows
            scheme("kinds", "SELECT max(time) GROUP BY kind"))); // changed; gone removed
    assertThat(archived).containsExactlyInAnyOrder("kinds@0", "gone@0");
    at(T0 + 2 * INTERVAL);
    assertThat(archived).containsExactlyInAnyOrder("kinds@0", "gone@0", "paths@0");
  }

  @Test
  void eachSchemeHasItsOwnCardinalityLimit() throws Exception {
    start(
        scheme("wide", "SELECT sum(time) GROUP BY tenant, shard", INTERVAL, 1000, 10),
        scheme("narrow", "SELECT sum(time) GROUP BY tenant, shard", INTERVAL, 2, 10));
    apply(
        checkout("i-1")
            .seq(1)
            .entry(entry(1, ACME, 1, 1.0))
            .entry(entry(1, ACME, 2, 2.0))
            .entry(entry(1, GLOBEX, 1, 4.0))
            .entry(entry(1, GLOBEX, 2, 8.0)));
    assertThat(snapshot("wide").cumulative()).hasSize(4);
    SchemeSnapshot narrow = snapshot("narrow");
    assertThat(narrow.cumulative()).hasSize(3);
    assertState(
        find(narrow.cumulative(), List.of(FoldEngine.OVERFLOW, FoldEngine.OVERFLOW)), 4.0, 8.0);
    assertThat(
            registry
                .get("profold.scheme.overflow.measurements")
                .tag("scheme", "narrow")
                .counter()
                .count())
        .isEqualTo(2);
    // The same overflowed tuples again: still the overflow group, and counted again.
    apply(checkout("i-1").seq(2).entry(entry(1, GLOBEX, 1, 16.0)));
    assertState(
        find(snapshot("narrow").cumulative(), List.of(FoldEngine.OVERFLOW, FoldEngine.OVERFLOW)),
        4.0,
        8.0,
        16.0);
  }

  @Test
  void everNewAttributeValuesDoNotGrowTheCachedKeysWithoutBound() throws Exception {
    start(scheme("shards", "SELECT sum(time) GROUP BY shard", INTERVAL, 2, 10));
    int bound = SchemeFold.maxKeysPerInstance(2);
    Deltas.Builder b = checkout("i-1").seq(1);
    int n = bound + 1000;
    for (int shard = 0; shard < n; shard++) {
      b.entry(entry(1, ACME, shard, 1.0));
    }
    apply(b);
    apply(checkout("i-1").seq(2).entry(entry(1, ACME, n + 5, 1.0)));
    assertThat(engine.keysHeld("shards")).isEqualTo(bound);
    SchemeSnapshot s = snapshot("shards");
    assertThat(s.cumulative()).hasSize(3); // shards 0 and 1, then the overflow group
    assertThat(find(s.cumulative(), List.of(FoldEngine.OVERFLOW)).count()).isEqualTo(n - 1);
  }

  @Test
  void missingGroupByAttributeIsAnEmptyLabel() throws Exception {
    start(scheme("tenants", "SELECT sum(time) GROUP BY tenant, shard"));
    apply(checkout("i-1").seq(1).entry(1, 1.0));
    assertState(find(snapshot("tenants").cumulative(), List.of("", "")), 1.0);
    assertThat(find(snapshot("tenants").cumulative(), List.of("", ""))).isNotNull();
    assertThat(snapshot("tenants").cumulative().get(0).measure()).isEqualTo(TIME);
  }
}
