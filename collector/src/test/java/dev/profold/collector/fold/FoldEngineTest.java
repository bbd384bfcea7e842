package dev.profold.collector.fold;

import static dev.profold.proto.v1.AttributeKind.ATTRIBUTE_KIND_DIMENSION;
import static dev.profold.proto.v1.AttributeKind.ATTRIBUTE_KIND_MEASUREMENT;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_COMPUTE;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_IO;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_WAIT;
import static dev.profold.proto.v1.ValueType.VALUE_TYPE_INT;
import static dev.profold.proto.v1.ValueType.VALUE_TYPE_PATH;
import static dev.profold.proto.v1.ValueType.VALUE_TYPE_STRING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.ingest.DecodedDelta;
import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.testing.Deltas;
import dev.profold.collector.testing.LogLines;
import dev.profold.collector.testing.MutableClock;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Entry;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.ExpHistogram;
import dev.profold.sinks.snapshot.ClientExport;
import dev.profold.sinks.snapshot.Measure;
import dev.profold.sinks.snapshot.OverheadClass;
import dev.profold.sinks.snapshot.SchemeSnapshot;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import dev.profold.sinks.snapshot.SourceSnapshot;
import dev.profold.sinks.snapshot.StateSnapshot;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * {@link FoldEngine} with an injected {@link MutableClock}: 10 s windows, sources expire after 5
 * silent intervals. Values are dyadic so every sum is exact.
 */
class FoldEngineTest {
  static final long SECOND = 1_000_000_000L;
  static final long INTERVAL = 10 * SECOND;

  /** Start of window {@link #W0}; the clock starts one second into it. */
  static final long T0 = 1_700_000_000L * SECOND;

  static final long W0 = T0 / INTERVAL;
  static final Measure TIME = new Measure("time", "seconds");

  final MutableClock clock = MutableClock.atNanos(T0 + SECOND);
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  final CollectorMetrics metrics = new CollectorMetrics(registry);
  final GlobalDictionary dictionary = new GlobalDictionary(100_000);
  FoldEngine engine = engine(1000);

  FoldEngine engine(int cardinalityLimit) {
    return new FoldEngine(
        new FoldConfig(INTERVAL, 5, cardinalityLimit), dictionary, clock, metrics);
  }

  /** An engine like {@link #engine(int)}'s that tracks at most {@code maxSources} sources. */
  FoldEngine engineWithMaxSources(int maxSources) {
    return new FoldEngine(
        new FoldConfig(
            INTERVAL,
            5,
            1000,
            ExpHistogram.MAX_SCALE,
            List.of(SchemeDefinition.builtIn(Duration.ofNanos(INTERVAL), 1000)),
            maxSources),
        dictionary,
        clock,
        metrics);
  }

  /** The first delta of a new incarnation of checkout's instance i-1 (started a second later). */
  static Deltas.Builder restartedCheckout() {
    return checkout("i-1")
        .incarnation(8)
        .processStart(Deltas.DEFAULT_PROCESS_START + SECOND)
        .seq(1);
  }

  /** checkout/{instance}, incarnation 7, regions main (1) and main/db.query (2), window W0. */
  static Deltas.Builder checkout(String instance) {
    return Deltas.source("checkout", instance)
        .incarnation(7)
        .region(1, "main", REGION_KIND_COMPUTE)
        .region(2, 1, "db.query", REGION_KIND_IO)
        .interval(T0, T0 + INTERVAL);
  }

  /** Puts the delta's interval exactly on window {@code w}. */
  static Deltas.Builder inWindow(Deltas.Builder b, long w) {
    return b.interval(w * INTERVAL, (w + 1) * INTERVAL);
  }

  FoldResult apply(Deltas.Builder b) {
    return engine.apply(b.decode(dictionary));
  }

  void at(long unixNanos) {
    clock.setNanos(unixNanos);
    engine.advance();
  }

  SchemeSnapshot scheme() {
    List<SchemeSnapshot> schemes = engine.snapshot().schemes();
    assertThat(schemes).hasSize(1);
    return schemes.get(0);
  }

  static List<String> labels(String instance, String path, String kind) {
    return List.of("checkout", instance, path, kind);
  }

  static final List<String> OVERFLOW =
      List.of(FoldEngine.OVERFLOW, FoldEngine.OVERFLOW, FoldEngine.OVERFLOW, FoldEngine.OVERFLOW);

  static StateSnapshot find(List<SeriesSnapshot> series, List<String> labels) {
    return find(series, labels, TIME);
  }

  static StateSnapshot find(List<SeriesSnapshot> series, List<String> labels, Measure m) {
    List<SeriesSnapshot> hits =
        series.stream()
            .filter(s -> s.labelValues().equals(labels) && s.measure().equals(m))
            .toList();
    assertThat(hits).as("series %s %s in %s", labels, m, series).hasSize(1);
    return hits.get(0).state();
  }

  static boolean has(List<SeriesSnapshot> series, List<String> labels) {
    return series.stream().anyMatch(s -> s.labelValues().equals(labels));
  }

  /** Asserts {@code s} holds exactly the values {@code values} (moments and histogram). */
  static void assertState(StateSnapshot s, double... values) {
    Aggregate want = Deltas.aggregate(values);
    assertThat(s.count()).as("count").isEqualTo(want.count());
    assertThat(s.sum()).as("sum").isEqualTo(want.sum());
    assertThat(s.min()).as("min").isEqualTo(want.min());
    assertThat(s.max()).as("max").isEqualTo(want.max());
    assertThat(s.sumOfSquares()).as("sum of squares").isEqualTo(want.sumOfSquares());
    assertThat(s.histogramTotal()).as("histogram total").isEqualTo(want.count());
    ExpHistogram h = want.histogram();
    assertThat(s.zeroCount()).as("zero count").isEqualTo(h.zeroCount());
    long[] positive = new long[h.positiveSize()];
    Arrays.setAll(positive, i -> h.positiveCount(h.positiveOffset() + i));
    if (positive.length > 0) {
      // The engine may hold the histogram at a lower scale only if the values forced it.
      assertThat(s.scale()).as("scale").isEqualTo(h.scale());
      assertThat(s.positiveOffset()).isEqualTo(h.positiveOffset());
    }
    assertThat(s.positiveCounts()).as("positive buckets").containsExactly(positive);
  }

  SourceSnapshot source(String instance) {
    List<SourceSnapshot> hits =
        engine.snapshot().sources().stream().filter(s -> s.instance().equals(instance)).toList();
    assertThat(hits).as("source %s", instance).hasSize(1);
    return hits.get(0);
  }

  double counter(String name) {
    return registry.get(name).counter().count();
  }

  double counter(String name, String tag, String value) {
    return registry.get(name).tag(tag, value).counter().count();
  }

  @Nested
  @DisplayName("applying deltas")
  class Applying {
    @Test
    void appliedDeltaAppearsInCumulativeSnapshot() {
      long before = engine.version();
      FoldResult r = apply(checkout("i-1").seq(1).entry(2, 0.25, 0.5).entry(1, 1.0, 2.0, 0.125));

      assertThat(r).isEqualTo(new FoldResult(FoldResult.Outcome.APPLIED, null, "", 0));
      assertThat(engine.version()).isGreaterThan(before);
      SchemeSnapshot s = scheme();
      assertThat(s.scheme()).isEqualTo("region");
      assertThat(s.labelNames()).containsExactly("service", "instance", "path", "kind");
      assertThat(s.cumulative()).hasSize(2);
      assertThat(s.groups()).isEqualTo(2);
      StateSnapshot query = find(s.cumulative(), labels("i-1", "main/db.query", "io"));
      assertThat(query.count()).isEqualTo(2);
      assertThat(query.sum()).isEqualTo(0.75);
      assertThat(query.min()).isEqualTo(0.25);
      assertThat(query.max()).isEqualTo(0.5);
      assertState(query, 0.25, 0.5);
      assertState(find(s.cumulative(), labels("i-1", "main", "compute")), 1.0, 2.0, 0.125);
      assertThat(s.lastInterval()).isEmpty();
      assertThat(s.lastIntervalEndUnixNanos()).isZero();

      SourceSnapshot src = source("i-1");
      assertThat(src.service()).isEqualTo("checkout");
      assertThat(src.lastSequence()).isEqualTo(1);
      assertThat(src.missingDeltas()).isZero();
      assertThat(src.processStartUnixNanos()).isEqualTo(Deltas.DEFAULT_PROCESS_START);
      assertThat(engine.activeSources()).isEqualTo(1);
      assertThat(counter("profold.deltas.applied")).isEqualTo(1);
      assertThat(counter("profold.entries.received")).isEqualTo(2);
      assertThat(registry.get("profold.sources.active").gauge().value()).isEqualTo(1);
    }

    @Test
    void consecutiveDeltasAccumulate() {
      apply(checkout("i-1").seq(1).entry(2, 0.25, 0.5));
      apply(checkout("i-1").seq(2).entry(2, 4.0).entry(1, 0.5));
      apply(checkout("i-1").seq(3).entry(2, 0.0625));
      SchemeSnapshot s = scheme();
      assertState(
          find(s.cumulative(), labels("i-1", "main/db.query", "io")), 0.25, 0.5, 4.0, 0.0625);
      assertState(find(s.cumulative(), labels("i-1", "main", "compute")), 0.5);
      assertThat(source("i-1").lastSequence()).isEqualTo(3);
    }

    @Test
    void instancesAndServicesAreSeparateSeries() {
      apply(checkout("i-1").seq(1).entry(2, 0.25));
      apply(checkout("i-2").seq(1).entry(2, 0.5));
      apply(
          Deltas.source("payments", "i-1")
              .region(2, "db.query", REGION_KIND_IO)
              .interval(T0, T0 + INTERVAL)
              .entry(2, 1.0));
      SchemeSnapshot s = scheme();
      assertThat(s.cumulative()).hasSize(3);
      assertState(find(s.cumulative(), labels("i-1", "main/db.query", "io")), 0.25);
      assertState(find(s.cumulative(), labels("i-2", "main/db.query", "io")), 0.5);
      assertState(find(s.cumulative(), List.of("payments", "i-1", "db.query", "io")), 1.0);
      assertThat(engine.activeSources()).isEqualTo(3);
    }

    @Test
    void eachMeasurementIsItsOwnSeries() {
      apply(
          checkout("i-1")
              .attribute(3, "allocated", VALUE_TYPE_INT, ATTRIBUTE_KIND_MEASUREMENT, "bytes")
              .entry(
                  Entry.newBuilder()
                      .addKey(Deltas.regionKey(2))
                      .addMeasurements(Deltas.time(0.25))
                      .addMeasurements(Deltas.measurement(3, 64, 128))));
      SchemeSnapshot s = scheme();
      assertThat(s.cumulative()).hasSize(2);
      assertState(find(s.cumulative(), labels("i-1", "main/db.query", "io")), 0.25);
      assertState(
          find(
              s.cumulative(),
              labels("i-1", "main/db.query", "io"),
              new Measure("allocated", "bytes")),
          64,
          128);
    }

    @Test
    void clientOverheadIsSummedAndBytesHeldIsTheLatest() {
      apply(checkout("i-1").seq(1).overhead(1000, 2, 4096).entry(1, 1.0));
      apply(checkout("i-1").seq(2).overhead(500, 1, 1024).entry(1, 1.0));
      SourceSnapshot src = source("i-1");
      assertThat(src.clientCpuNanos()).isEqualTo(1500);
      assertThat(src.clientEventsDropped()).isEqualTo(3);
      assertThat(src.clientBytesHeld()).isEqualTo(1024);
    }

    @Test
    void clientExportCountsAreSummedAndItsBufferLevelIsTheLatest() {
      apply(checkout("i-1").seq(1).overhead(1000, 0, 4096).export(2, 5, 9000, 65536).entry(1, 1.0));
      apply(checkout("i-1").seq(2).overhead(500, 0, 1024).export(1, 0, 300, 65536).entry(1, 1.0));
      assertThat(source("i-1").clientExport()).isEqualTo(new ClientExport(3, 5, 300, 65536));
      assertThat(source("i-1").clientCpuNanos()).isEqualTo(1500); // the rest as before
    }

    @Test
    void aClientThatDoesNotReportItsExportShowsNone() {
      apply(checkout("i-1").seq(1).overhead(1000, 0, 4096).entry(1, 1.0));
      assertThat(source("i-1").clientExport()).isEqualTo(ClientExport.NONE);
      assertThat(source("i-1").clientExport().reported()).isFalse();
    }

    @Test
    void clientMisuseIsSummedByKindAndStartsAgainWithANewIncarnation() {
      apply(
          checkout("i-1")
              .seq(1)
              .overhead(1000, 2, 4096, java.util.Map.of("contexts_full", 5L, "too_deep", 1L))
              .entry(1, 1.0));
      apply(
          checkout("i-1")
              .seq(2)
              .overhead(500, 1, 1024, java.util.Map.of("contexts_full", 2L))
              .entry(1, 1.0));
      assertThat(source("i-1").clientMisuse())
          .containsExactlyInAnyOrderEntriesOf(
              java.util.Map.of("contexts_full", 7L, "too_deep", 1L));
    }

    @Test
    void clientCountsHoldAtTheLargestLongRatherThanWrapNegative() {
      apply(
          checkout("i-1")
              .seq(1)
              .overhead(
                  Long.MAX_VALUE, Long.MAX_VALUE, 1, java.util.Map.of("table_full", Long.MAX_VALUE))
              .entry(1, 1.0));
      apply(
          checkout("i-1")
              .seq(2)
              .overhead(1, 1, 1, java.util.Map.of("table_full", 1L))
              .entry(1, 1.0));
      SourceSnapshot src = source("i-1");
      assertThat(src.clientCpuNanos()).isEqualTo(Long.MAX_VALUE);
      assertThat(src.clientEventsDropped()).isEqualTo(Long.MAX_VALUE);
      assertThat(src.clientMisuse()).containsEntry("table_full", Long.MAX_VALUE);
    }

    @Test
    void sourceDescriptionIsKept() {
      Deltas.Builder b = checkout("i-1").host("h1").entry(1, 1.0);
      b.sourceBuilder().setRuntimeVersion("OpenJDK 21").setSdkVersion("profold-java/0.1");
      apply(b);
      SourceSnapshot src = source("i-1");
      assertThat(src.host()).isEqualTo("h1");
      assertThat(src.runtimeVersion()).isEqualTo("OpenJDK 21");
      assertThat(src.sdkVersion()).isEqualTo("profold-java/0.1");
    }
  }

  @Nested
  @DisplayName("sequence numbers")
  class Sequences {
    @Test
    void duplicateIsAcknowledgedButNotApplied() {
      apply(checkout("i-1").seq(1).entry(2, 0.25));
      apply(checkout("i-1").seq(2).entry(2, 0.5));
      long version = engine.version();

      FoldResult again = apply(checkout("i-1").seq(2).entry(2, 0.5));
      FoldResult older = apply(checkout("i-1").seq(1).entry(2, 0.25));

      assertThat(again.outcome()).isEqualTo(FoldResult.Outcome.DUPLICATE);
      assertThat(again.reason()).isNull();
      assertThat(older.outcome()).isEqualTo(FoldResult.Outcome.DUPLICATE);
      assertThat(engine.version()).isEqualTo(version);
      assertState(find(scheme().cumulative(), labels("i-1", "main/db.query", "io")), 0.25, 0.5);
      assertThat(source("i-1").lastSequence()).isEqualTo(2);
      assertThat(source("i-1").missingDeltas()).isZero();
      assertThat(counter("profold.deltas.duplicate")).isEqualTo(2);
      assertThat(counter("profold.deltas.applied")).isEqualTo(2);
    }

    /**
     * A fold that fails part-way (here: a bucket index no double has, which the decoder refuses,
     * put into an already decoded delta to stand for a collector bug) cannot take out the entries
     * it folded: the delta's sequence counts as applied, so its resend is a duplicate and nothing
     * is counted twice, and the folded part is in the next snapshot.
     */
    @Test
    void aFoldFailingPartWayTakesTheSequenceAsAppliedSoAResendIsNotCountedTwice() {
      apply(checkout("i-1").seq(1).entry(1, 0.5));
      long version = engine.version();
      DecodedDelta broken = checkout("i-1").seq(2).entry(2, 0.25).entry(1, 0.5).decode(dictionary);
      int second = broken.measStart[1];
      assertThat(broken.posLen[second]).isEqualTo(1);
      broken.bucketIndex[broken.posFrom[second]] = Integer.MAX_VALUE;

      assertThatThrownBy(() -> engine.apply(broken))
          .isInstanceOfSatisfying(
              PartlyAppliedException.class,
              e -> {
                assertThat(e.sequence()).isEqualTo(2);
                assertThat(e.getCause()).isInstanceOf(IllegalArgumentException.class);
              });
      assertThat(engine.version()).isGreaterThan(version);
      assertThat(source("i-1").lastSequence()).isEqualTo(2);
      List<SeriesSnapshot> cumulative = scheme().cumulative();
      assertState(find(cumulative, labels("i-1", "main/db.query", "io")), 0.25);
      assertState(find(cumulative, labels("i-1", "main", "compute")), 0.5);

      FoldResult resent = apply(checkout("i-1").seq(2).entry(2, 0.25).entry(1, 0.5));
      assertThat(resent.outcome()).isEqualTo(FoldResult.Outcome.DUPLICATE);
      assertState(find(scheme().cumulative(), labels("i-1", "main/db.query", "io")), 0.25);
    }

    @Test
    void duplicateDoesNotReachTheWindow() {
      apply(checkout("i-1").seq(1).entry(2, 0.25));
      apply(checkout("i-1").seq(1).entry(2, 0.25));
      at(T0 + 2 * INTERVAL);
      assertState(find(scheme().lastInterval(), labels("i-1", "main/db.query", "io")), 0.25);
    }

    @Test
    void firstContactIsNotAGap() {
      // A source already on sequence 9 when this collector first hears of it (a collector
      // restart, or an expiry): the earlier deltas were never ours to receive.
      assertThat(apply(checkout("i-1").seq(9).entry(1, 1.0)).outcome())
          .isEqualTo(FoldResult.Outcome.APPLIED);
      assertThat(source("i-1").missingDeltas()).isZero();
      assertThat(counter("profold.sequence.gaps")).isZero();
      assertThat(apply(checkout("i-1").seq(8).entry(1, 1.0)).outcome())
          .isEqualTo(FoldResult.Outcome.DUPLICATE);
    }

    @Test
    void expiryIsDueAtTheTtlNotAtTheNextWindow() {
      apply(checkout("i-1").seq(1).entry(1, 1.0)); // heard at T0
      at(T0 + 5 * INTERVAL - 1);
      assertThat(engine.activeSources()).isEqualTo(1);
      at(T0 + 5 * INTERVAL + INTERVAL / 10); // within the same window, past the TTL
      assertThat(engine.activeSources()).isZero();
    }

    @Test
    void gapIsCounted() {
      apply(checkout("i-1").seq(1).entry(1, 1.0));
      FoldResult r = apply(checkout("i-1").seq(4).entry(1, 2.0));
      assertThat(r.outcome()).isEqualTo(FoldResult.Outcome.APPLIED);
      assertThat(source("i-1").missingDeltas()).isEqualTo(2);
      assertThat(source("i-1").lastSequence()).isEqualTo(4);
      assertThat(counter("profold.sequence.gaps")).isEqualTo(2);

      apply(checkout("i-1").seq(5).entry(1, 4.0));
      assertThat(source("i-1").missingDeltas()).isEqualTo(2);

      // A skipped delta arriving after its successors is below the last applied: a duplicate.
      assertThat(apply(checkout("i-1").seq(3).entry(1, 8.0)).outcome())
          .isEqualTo(FoldResult.Outcome.DUPLICATE);
      assertState(find(scheme().cumulative(), labels("i-1", "main", "compute")), 1.0, 2.0, 4.0);
      assertThat(counter("profold.sequence.gaps")).isEqualTo(2);
    }

    @Test
    void gapsOfSeveralSourcesAddUpInTheCounter() {
      apply(checkout("i-1").seq(1).entry(1, 1.0));
      apply(checkout("i-1").seq(3).entry(1, 1.0));
      apply(checkout("i-2").seq(1).entry(1, 1.0));
      apply(checkout("i-2").seq(5).entry(1, 1.0));
      assertThat(source("i-1").missingDeltas()).isEqualTo(1);
      assertThat(source("i-2").missingDeltas()).isEqualTo(3);
      assertThat(counter("profold.sequence.gaps")).isEqualTo(4);
    }

    @Test
    void mergedDeltaCountsGapsFromItsFirstSequence() {
      apply(checkout("i-1").seq(1).entry(1, 1.0));
      FoldResult contiguous = apply(checkout("i-1").firstSeq(2).seq(4).entry(1, 2.0, 4.0));
      assertThat(contiguous.outcome()).isEqualTo(FoldResult.Outcome.APPLIED);
      assertThat(source("i-1").missingDeltas()).isZero();
      assertThat(source("i-1").lastSequence()).isEqualTo(4);

      apply(checkout("i-1").firstSeq(7).seq(9).entry(1, 8.0));
      assertThat(source("i-1").missingDeltas()).isEqualTo(2); // 5 and 6
      assertThat(source("i-1").lastSequence()).isEqualTo(9);
      assertState(
          find(scheme().cumulative(), labels("i-1", "main", "compute")), 1.0, 2.0, 4.0, 8.0);
    }

    @Test
    void overlappingMergedDeltaIsRejected() {
      apply(checkout("i-1").seq(1).entry(1, 1.0));
      apply(checkout("i-1").seq(2).entry(1, 1.0));
      apply(checkout("i-1").seq(3).entry(1, 1.0));
      long version = engine.version();

      FoldResult r = apply(checkout("i-1").firstSeq(2).seq(5).entry(1, 64.0));

      assertThat(r.outcome()).isEqualTo(FoldResult.Outcome.REJECTED);
      assertThat(r.reason()).isEqualTo(FoldResult.Reason.OVERLAPPING_SEQUENCES);
      assertThat(r.message())
          .startsWith("first_sequence: ")
          .contains("covers sequences 2..5 but 3 was already applied");
      assertThat(engine.version()).isEqualTo(version);
      assertState(find(scheme().cumulative(), labels("i-1", "main", "compute")), 1.0, 1.0, 1.0);
      assertThat(source("i-1").lastSequence()).isEqualTo(3);
      assertThat(counter("profold.deltas.rejected", "reason", "overlapping_sequences"))
          .isEqualTo(1);

      // Starting right after the last applied one is fine.
      assertThat(apply(checkout("i-1").firstSeq(4).seq(5).entry(1, 2.0)).outcome())
          .isEqualTo(FoldResult.Outcome.APPLIED);
    }

    @Test
    void mergedDeltaEntirelyAtOrBelowLastAppliedIsADuplicate() {
      apply(checkout("i-1").seq(5).entry(1, 1.0));
      assertThat(apply(checkout("i-1").firstSeq(2).seq(5).entry(1, 1.0)).outcome())
          .isEqualTo(FoldResult.Outcome.DUPLICATE);
    }
  }

  @Nested
  @DisplayName("interval windows")
  class Windows {
    @Test
    void windowClosesOnlyWhenTheClockReachesTwoIntervalsAfterItsStart() {
      apply(checkout("i-1").seq(1).entry(2, 0.25, 0.5)); // window W0, clock in W0

      at(T0 + INTERVAL); // W0 + 1: closes W0 - 1, which had no data
      assertThat(scheme().lastInterval()).isEmpty();
      assertThat(scheme().lastIntervalEndUnixNanos()).isEqualTo(T0);

      at(T0 + 2 * INTERVAL - 1);
      assertThat(scheme().lastInterval()).isEmpty();
      assertThat(scheme().lastIntervalEndUnixNanos()).isEqualTo(T0);

      long version = engine.version();
      at(T0 + 2 * INTERVAL);
      assertThat(engine.version()).isGreaterThan(version);
      SchemeSnapshot s = scheme();
      assertThat(s.lastIntervalEndUnixNanos()).isEqualTo(T0 + INTERVAL);
      assertThat(s.lastInterval()).hasSize(1);
      assertThat(s.lastInterval().get(0).labelValues())
          .isEqualTo(labels("i-1", "main/db.query", "io"));
      assertThat(s.lastInterval().get(0).measure()).isEqualTo(TIME);
      assertState(s.lastInterval().get(0).state(), 0.25, 0.5);
      // The cumulative series is unaffected by closing.
      assertState(find(s.cumulative(), labels("i-1", "main/db.query", "io")), 0.25, 0.5);
    }

    @Test
    void intervalWithoutDataGivesEmptyLastInterval() {
      apply(checkout("i-1").seq(1).entry(2, 0.25));
      at(T0 + 2 * INTERVAL);
      assertThat(scheme().lastInterval()).hasSize(1);

      at(T0 + 3 * INTERVAL);
      assertThat(scheme().lastInterval()).isEmpty();
      assertThat(scheme().lastIntervalEndUnixNanos()).isEqualTo(T0 + 2 * INTERVAL);
      assertState(find(scheme().cumulative(), labels("i-1", "main/db.query", "io")), 0.25);
    }

    @Test
    void windowsAreTumblingAndEachHoldsOnlyItsOwnData() {
      apply(checkout("i-1").seq(1).entry(2, 0.25));
      at(T0 + INTERVAL + SECOND);
      apply(inWindow(checkout("i-1").seq(2).entry(2, 0.5), W0 + 1));
      at(T0 + 2 * INTERVAL);
      assertState(find(scheme().lastInterval(), labels("i-1", "main/db.query", "io")), 0.25);
      at(T0 + 3 * INTERVAL);
      assertState(find(scheme().lastInterval(), labels("i-1", "main/db.query", "io")), 0.5);
      assertState(find(scheme().cumulative(), labels("i-1", "main/db.query", "io")), 0.25, 0.5);
    }

    @Test
    void deltaGoesToTheWindowOfItsMidpoint() {
      // [T0-8s, T0+4s): midpoint T0-2s, window W0-1.
      apply(checkout("a").seq(1).interval(T0 - 8 * SECOND, T0 + 4 * SECOND).entry(1, 1.0));
      // [T0-4s, T0+8s): midpoint T0+2s, window W0.
      apply(checkout("b").seq(1).interval(T0 - 4 * SECOND, T0 + 8 * SECOND).entry(1, 2.0));
      // [T0-5s, T0+5s): midpoint exactly T0, the first instant of W0.
      apply(checkout("c").seq(1).interval(T0 - 5 * SECOND, T0 + 5 * SECOND).entry(1, 4.0));
      // [T0-5s, T0+5s-1ns): midpoint T0-1ns (rounded down), the last instant of W0-1.
      apply(checkout("d").seq(1).interval(T0 - 5 * SECOND, T0 + 5 * SECOND - 1).entry(1, 8.0));
      // A merged delta over three intervals: midpoint T0+5s, window W0.
      apply(
          checkout("e")
              .seq(3)
              .firstSeq(1)
              .interval(T0 - 10 * SECOND, T0 + 20 * SECOND)
              .entry(1, 0.5));

      at(T0 + INTERVAL);
      List<SeriesSnapshot> w0minus1 = scheme().lastInterval();
      assertThat(scheme().lastIntervalEndUnixNanos()).isEqualTo(T0);
      assertThat(w0minus1)
          .extracting(s -> s.labelValues().get(1))
          .containsExactlyInAnyOrder("a", "d");
      assertState(find(w0minus1, labels("a", "main", "compute")), 1.0);
      assertState(find(w0minus1, labels("d", "main", "compute")), 8.0);

      at(T0 + 2 * INTERVAL);
      List<SeriesSnapshot> w0 = scheme().lastInterval();
      assertThat(w0)
          .extracting(s -> s.labelValues().get(1))
          .containsExactlyInAnyOrder("b", "c", "e");
      assertState(find(w0, labels("b", "main", "compute")), 2.0);
      assertState(find(w0, labels("c", "main", "compute")), 4.0);
      assertState(find(w0, labels("e", "main", "compute")), 0.5);
      assertThat(counter("profold.entries.outside.window", "reason", "late")).isZero();
      assertThat(counter("profold.entries.outside.window", "reason", "future")).isZero();
    }

    @Test
    void dataForThePreviousWindowIsAcceptedUntilItCloses() {
      at(T0 + INTERVAL - 1); // still W0
      at(T0 + INTERVAL + 9 * SECOND); // W0+1: W0 open for one more interval
      apply(checkout("i-1").seq(1).entry(2, 0.25)); // data of W0, one interval late
      assertThat(counter("profold.entries.outside.window", "reason", "late")).isZero();
      at(T0 + 2 * INTERVAL);
      assertState(find(scheme().lastInterval(), labels("i-1", "main/db.query", "io")), 0.25);
    }

    @Test
    void lateDataGoesToCumulativeOnly() {
      at(T0 + 2 * INTERVAL); // W0+2: W0 is closed
      FoldResult r =
          apply(checkout("i-1").seq(1).entry(2, 0.25).entry(1, 1.0)); // data of W0: too late
      assertThat(r.outcome()).isEqualTo(FoldResult.Outcome.APPLIED);
      assertThat(counter("profold.entries.outside.window", "reason", "late")).isEqualTo(2);
      assertThat(counter("profold.entries.outside.window", "reason", "future")).isZero();
      assertState(find(scheme().cumulative(), labels("i-1", "main/db.query", "io")), 0.25);

      for (long w = 3; w <= 6; w++) {
        at(T0 + w * INTERVAL);
        assertThat(scheme().lastInterval()).as("window W0+%d", w - 2).isEmpty();
      }
    }

    @Test
    void lateBoundaryIsTheCloseOfTheWindow() {
      // One nanosecond before W0-1 closes, data of W0-1 is on time; at its close it is late.
      at(T0 + INTERVAL - 1);
      apply(inWindow(checkout("i-1").seq(1).entry(1, 1.0), W0 - 1));
      assertThat(counter("profold.entries.outside.window", "reason", "late")).isZero();
      at(T0 + INTERVAL);
      apply(inWindow(checkout("i-1").seq(2).entry(1, 2.0), W0 - 1));
      assertThat(counter("profold.entries.outside.window", "reason", "late")).isEqualTo(1);
      assertState(find(scheme().lastInterval(), labels("i-1", "main", "compute")), 1.0);
      assertState(find(scheme().cumulative(), labels("i-1", "main", "compute")), 1.0, 2.0);
    }

    @Test
    void futureDataGoesToCumulativeOnly() {
      // Clock in W0: W0+1 is open (clock skew), W0+2 is in the future.
      FoldResult next = apply(inWindow(checkout("i-1").seq(1).entry(1, 1.0), W0 + 1));
      FoldResult future =
          apply(inWindow(checkout("i-1").seq(2).entry(1, 2.0).entry(2, 4.0), W0 + 2));
      assertThat(next.outcome()).isEqualTo(FoldResult.Outcome.APPLIED);
      assertThat(future.outcome()).isEqualTo(FoldResult.Outcome.APPLIED);
      assertThat(counter("profold.entries.outside.window", "reason", "future")).isEqualTo(2);
      assertThat(counter("profold.entries.outside.window", "reason", "late")).isZero();
      assertState(find(scheme().cumulative(), labels("i-1", "main", "compute")), 1.0, 2.0);
      assertState(find(scheme().cumulative(), labels("i-1", "main/db.query", "io")), 4.0);

      at(T0 + 3 * INTERVAL); // closes W0+1
      assertThat(scheme().lastIntervalEndUnixNanos()).isEqualTo(T0 + 2 * INTERVAL);
      assertThat(scheme().lastInterval()).hasSize(1);
      assertState(find(scheme().lastInterval(), labels("i-1", "main", "compute")), 1.0);
      at(T0 + 4 * INTERVAL); // closes W0+2: the future data never went into it
      assertThat(scheme().lastInterval()).isEmpty();
    }

    @Test
    void clockSteppingBackClosesNothing() {
      apply(checkout("i-1").seq(1).entry(1, 1.0));
      at(T0 + INTERVAL);
      long end = scheme().lastIntervalEndUnixNanos();
      at(T0 - 5 * INTERVAL);
      assertThat(scheme().lastIntervalEndUnixNanos()).isEqualTo(end);
      at(T0 + 2 * INTERVAL);
      assertState(find(scheme().lastInterval(), labels("i-1", "main", "compute")), 1.0);
    }

    @Test
    void closeAllPublishesTheCurrentWindow() {
      apply(inWindow(checkout("i-1").seq(1).entry(1, 1.0), W0 - 1));
      apply(checkout("i-1").seq(2).entry(1, 2.0).entry(2, 0.5));
      long version = engine.version();

      engine.closeAll();

      assertThat(engine.version()).isGreaterThan(version);
      SchemeSnapshot s = scheme();
      assertThat(s.lastIntervalEndUnixNanos()).isEqualTo(T0 + INTERVAL);
      assertThat(s.lastInterval()).hasSize(2);
      assertState(find(s.lastInterval(), labels("i-1", "main", "compute")), 2.0);
      assertState(find(s.lastInterval(), labels("i-1", "main/db.query", "io")), 0.5);
      assertState(find(s.cumulative(), labels("i-1", "main", "compute")), 1.0, 2.0);
    }

    @Test
    void closeAllWithoutOpenDataKeepsTheLastInterval() {
      apply(checkout("i-1").seq(1).entry(1, 1.0));
      at(T0 + 2 * INTERVAL);
      long version = engine.version();
      engine.closeAll();
      assertThat(engine.version()).isEqualTo(version);
      assertThat(scheme().lastIntervalEndUnixNanos()).isEqualTo(T0 + INTERVAL);
      assertState(find(scheme().lastInterval(), labels("i-1", "main", "compute")), 1.0);
    }
  }

  @Nested
  @DisplayName("incarnations")
  class Incarnations {
    @Test
    void newIncarnationResetsCumulativeAndSequence() {
      apply(
          checkout("i-1")
              .seq(1)
              .overhead(100, 1, 10)
              .export(4, 2, 100, 1000)
              .entry(1, 1.0)
              .entry(2, 0.25));
      apply(checkout("i-1").seq(2).entry(1, 2.0));
      apply(checkout("i-1").seq(4).entry(1, 2.0)); // a gap of 1

      FoldResult r = apply(restartedCheckout().entry(1, 0.5));

      assertThat(r.outcome()).isEqualTo(FoldResult.Outcome.APPLIED);
      SchemeSnapshot s = scheme();
      assertState(find(s.cumulative(), labels("i-1", "main", "compute")), 0.5);
      assertThat(has(s.cumulative(), labels("i-1", "main/db.query", "io")))
          .as("group without data since the restart")
          .isFalse();
      SourceSnapshot src = source("i-1");
      assertThat(src.lastSequence()).isEqualTo(1);
      assertThat(src.missingDeltas()).isZero();
      assertThat(src.processStartUnixNanos()).isEqualTo(Deltas.DEFAULT_PROCESS_START + SECOND);
      assertThat(src.clientCpuNanos()).isZero();
      assertThat(src.clientExport()).isEqualTo(ClientExport.NONE);
      assertThat(counter("profold.source.restarts")).isEqualTo(1);
      assertThat(engine.activeSources()).isEqualTo(1);

      // Sequence numbering started again: 2 is new, 1 is a duplicate.
      assertThat(apply(checkout("i-1").incarnation(8).seq(2).entry(1, 0.25)).outcome())
          .isEqualTo(FoldResult.Outcome.APPLIED);
      assertThat(apply(checkout("i-1").incarnation(8).seq(1).entry(1, 0.5)).outcome())
          .isEqualTo(FoldResult.Outcome.DUPLICATE);
      assertState(find(scheme().cumulative(), labels("i-1", "main", "compute")), 0.5, 0.25);
    }

    @Test
    void restartKeepsTheWindowData() {
      apply(checkout("i-1").seq(1).entry(1, 1.0));
      apply(
          checkout("i-1")
              .incarnation(8)
              .processStart(Deltas.DEFAULT_PROCESS_START + 1)
              .seq(1)
              .entry(1, 2.0));
      at(T0 + 2 * INTERVAL);
      assertState(find(scheme().lastInterval(), labels("i-1", "main", "compute")), 1.0, 2.0);
      assertState(find(scheme().cumulative(), labels("i-1", "main", "compute")), 2.0);
    }

    @Test
    void newIncarnationWithEqualProcessStartReplacesTheCurrentOne() {
      apply(checkout("i-1").seq(3).entry(1, 1.0));
      FoldResult r = apply(checkout("i-1").incarnation(8).seq(1).entry(1, 2.0));
      assertThat(r.outcome()).isEqualTo(FoldResult.Outcome.APPLIED);
      assertState(find(scheme().cumulative(), labels("i-1", "main", "compute")), 2.0);
      assertThat(source("i-1").lastSequence()).isEqualTo(1);
    }

    @Test
    void olderIncarnationIsRejected() {
      apply(checkout("i-1").seq(1).entry(1, 1.0));
      apply(restartedCheckout().entry(1, 2.0));
      long version = engine.version();

      FoldResult r = apply(checkout("i-1").seq(2).entry(1, 64.0));

      assertThat(r.outcome()).isEqualTo(FoldResult.Outcome.REJECTED);
      assertThat(r.reason()).isEqualTo(FoldResult.Reason.SUPERSEDED_INCARNATION);
      assertThat(r.message())
          .startsWith("source: ")
          .contains("incarnation 7 of checkout/i-1 started before the current one (8)")
          .contains("give each its own instance name");
      assertThat(engine.version()).isEqualTo(version);
      assertState(find(scheme().cumulative(), labels("i-1", "main", "compute")), 2.0);
      assertThat(source("i-1").lastSequence()).isEqualTo(1);
      assertThat(source("i-1").processStartUnixNanos())
          .isEqualTo(Deltas.DEFAULT_PROCESS_START + SECOND);
      assertThat(counter("profold.deltas.rejected", "reason", "superseded_incarnation"))
          .isEqualTo(1);
      assertThat(counter("profold.source.restarts")).isEqualTo(1);
    }

    @Test
    void incarnationIdsAreReportedUnsigned() {
      long big = 0x8c3e51f07a2b9d14L; // negative as a Java long
      apply(checkout("i-1").incarnation(big).seq(1).entry(1, 1.0));
      FoldResult r =
          apply(
              checkout("i-1")
                  .incarnation(big)
                  .processStart(Deltas.DEFAULT_PROCESS_START - 1)
                  .seq(1)
                  .entry(1, 1.0));
      assertThat(r.outcome()).isEqualTo(FoldResult.Outcome.DUPLICATE);
      FoldResult older = apply(checkout("i-1").incarnation(5).processStart(1).seq(1).entry(1, 1.0));
      assertThat(older.message()).contains("(" + Long.toUnsignedString(big) + ")");
    }
  }

  @Nested
  @DisplayName("expiry")
  class Expiry {
    @Test
    void silentInstanceExpiresAfterTheTtlWhileActiveOneStays() {
      apply(checkout("silent").seq(1).entry(1, 1.0));
      apply(checkout("active").seq(1).entry(1, 2.0));
      for (int k = 1; k <= 4; k++) {
        clock.setNanos(T0 + k * INTERVAL + SECOND);
        apply(inWindow(checkout("active").seq(k + 1).entry(1, 2.0), W0 + k - 1));
      }
      // Silent for 40 s < 50 s.
      assertThat(engine.activeSources()).isEqualTo(2);
      assertThat(has(scheme().cumulative(), labels("silent", "main", "compute"))).isTrue();
      assertThat(counter("profold.sources.expired")).isZero();

      clock.setNanos(T0 + 5 * INTERVAL + SECOND); // enters W0+5, silent for 50 s
      apply(inWindow(checkout("active").seq(6).entry(1, 2.0), W0 + 4));

      assertThat(engine.activeSources()).isEqualTo(1);
      assertThat(engine.snapshot().sources())
          .extracting(SourceSnapshot::instance)
          .containsExactly("active");
      SchemeSnapshot s = scheme();
      assertThat(has(s.cumulative(), labels("silent", "main", "compute"))).isFalse();
      assertState(find(s.cumulative(), labels("active", "main", "compute")), 2, 2, 2, 2, 2, 2);
      assertThat(s.groups()).isEqualTo(1);
      assertThat(counter("profold.sources.expired")).isEqualTo(1);
      assertThat(registry.get("profold.sources.active").gauge().value()).isEqualTo(1);
    }

    @Test
    void afterTheClockSteppedBackSilentSourcesStillExpireAndTheStepIsSaidOnce() {
      // A clock that ran fast, corrected: the expiry check waited for the clock to be back where
      // it was, and a source seen before the step counted as seen in the future.
      apply(checkout("gone").seq(1).entry(1, 1.0));
      List<String> said;
      try (LogLines lines = LogLines.capture(FoldEngine.class)) {
        long back = T0 - 100 * INTERVAL;
        at(back);
        at(back + SECOND);
        at(back + 2 * INTERVAL); // further on, still behind: not said again
        assertThat(engine.activeSources()).isEqualTo(1);
        at(back + 7 * INTERVAL); // silent for over the TTL on the clock as it is now
        assertThat(engine.activeSources()).isZero();
        said = lines.messages();
      }
      assertThat(said)
          .filteredOn(m -> m.contains("stepped back"))
          .singleElement()
          .satisfies(
              m ->
                  assertThat(m)
                      .contains("stepped back 1001 s") // the clock stood at T0 + 1 s
                      .contains("no interval closes until it reaches"));
    }

    @Test
    void aSourceBackAfterExpiringWithADuplicateIsANewVersionToShow() {
      // Snapshots are rebuilt when the version moves: the source came back, was tracked again,
      // and stayed missing from profold_source_info until something else changed.
      apply(checkout("back").seq(1).entry(1, 1.0));
      clock.setNanos(T0 + 6 * INTERVAL);
      engine.advance();
      assertThat(engine.activeSources()).isZero();
      long before = engine.version();
      FoldResult r = engine.apply(checkout("back").seq(1).entry(1, 1.0).decode(dictionary));
      assertThat(r.outcome()).isEqualTo(FoldResult.Outcome.DUPLICATE);
      assertThat(engine.activeSources()).isEqualTo(1);
      assertThat(engine.version()).isGreaterThan(before);
    }

    @Test
    void aNewSourceBeyondMaxSourcesIsRefusedUntilASilentOneExpires() {
      engine = engineWithMaxSources(2);
      apply(checkout("silent").seq(1).entry(1, 1.0));
      apply(checkout("active").seq(1).entry(1, 2.0));

      FoldResult r = apply(checkout("third").seq(1).entry(1, 4.0));

      assertThat(r.outcome()).isEqualTo(FoldResult.Outcome.REJECTED);
      assertThat(r.reason()).isEqualTo(FoldResult.Reason.TOO_MANY_SOURCES);
      assertThat(r.message())
          .startsWith(
              "source: the collector tracks as many sources as limits.max_sources (2) allows,"
                  + " and checkout/third is new. Resend later");
      assertThat(counter("profold.deltas.rejected", "reason", "too_many_sources")).isEqualTo(1);
      assertThat(engine.activeSources()).isEqualTo(2);
      assertThat(has(scheme().cumulative(), labels("third", "main", "compute"))).isFalse();
      // Known sources go on.
      assertThat(apply(checkout("active").seq(2).entry(1, 2.0)).outcome())
          .isEqualTo(FoldResult.Outcome.APPLIED);

      for (int k = 1; k <= 5; k++) { // "silent" stays silent for 50 s and expires
        clock.setNanos(T0 + k * INTERVAL + SECOND);
        apply(inWindow(checkout("active").seq(k + 2).entry(1, 2.0), W0 + k - 1));
      }
      FoldResult resent = apply(inWindow(checkout("third").seq(1).entry(1, 4.0), W0 + 4));

      assertThat(resent.outcome()).isEqualTo(FoldResult.Outcome.APPLIED);
      assertThat(engine.snapshot().sources())
          .extracting(SourceSnapshot::instance)
          .containsExactlyInAnyOrder("active", "third");
    }

    @Test
    void deltasBehindARefusedOneWaitForItSoItIsNotTakenForADuplicate() {
      engine = engineWithMaxSources(1);
      apply(checkout("silent").seq(1).entry(1, 1.0));
      clock.setNanos(T0 + 5 * INTERVAL); // "silent" has been quiet for 49 s: not expired yet
      assertThat(apply(inWindow(checkout("new").seq(1).entry(1, 4.0), W0 + 4)).reason())
          .isEqualTo(FoldResult.Reason.TOO_MANY_SOURCES);
      // "silent" expires; delta 2 of "new", sent behind delta 1 on the same stream, comes now.
      clock.setNanos(T0 + 5 * INTERVAL + 2 * SECOND);

      FoldResult second = apply(inWindow(checkout("new").seq(2).entry(1, 2.0), W0 + 4));

      assertThat(second.reason())
          .as("before the fix: applied, and delta 1 resent became a duplicate, lost uncounted")
          .isEqualTo(FoldResult.Reason.TOO_MANY_SOURCES);
      assertThat(second.message())
          .isEqualTo(
              "source: sequence 1 of checkout/new was refused (limits.max_sources) and must be"
                  + " applied before 2; resend from 1");
      // The client resends from 1, in order: both applied, nothing missing.
      assertThat(apply(inWindow(checkout("new").seq(1).entry(1, 4.0), W0 + 4)).outcome())
          .isEqualTo(FoldResult.Outcome.APPLIED);
      assertThat(apply(inWindow(checkout("new").seq(2).entry(1, 2.0), W0 + 4)).outcome())
          .isEqualTo(FoldResult.Outcome.APPLIED);
      SourceSnapshot source =
          engine.snapshot().sources().stream()
              .filter(x -> x.instance().equals("new"))
              .findFirst()
              .orElseThrow();
      assertThat(source.missingDeltas()).isZero();
      assertState(find(scheme().cumulative(), labels("new", "main", "compute")), 4.0, 2.0);
    }

    @Test
    void aRefusalIsForgottenOneSourceTtlLaterSoAClientThatGaveItUpIsTaken() {
      engine = engineWithMaxSources(1);
      apply(checkout("silent").seq(1).entry(1, 1.0));
      apply(checkout("new").seq(1).entry(1, 4.0)); // refused
      clock.setNanos(T0 + 6 * INTERVAL + 2 * SECOND); // silent expired; the refusal is 60 s old

      assertThat(apply(inWindow(checkout("new").seq(3).entry(1, 2.0), W0 + 5)).outcome())
          .isEqualTo(FoldResult.Outcome.APPLIED);
    }

    @Test
    void aClientThatGaveUpTheRefusedDeltaButKeepsRetryingIsTakenOneTtlLater() {
      engine = engineWithMaxSources(1);
      apply(checkout("silent").seq(1).entry(1, 1.0));
      apply(checkout("new").seq(1).entry(1, 4.0)); // refused; the client's buffer later drops it
      FoldResult last = null;
      for (int k = 1; k <= 20; k++) { // "silent" expires; the client retries from 3 every 10 s
        clock.setNanos(T0 + k * INTERVAL);
        last = apply(inWindow(checkout("new").seq(3).entry(1, 2.0), W0 + 5));
        if (last.outcome() == FoldResult.Outcome.APPLIED) {
          break;
        }
      }
      assertThat(last.outcome())
          .as(
              "before the fix: each waiting refusal renewed the memory, refused for ever: %s",
              last.message())
          .isEqualTo(FoldResult.Outcome.APPLIED);
      assertThat(clock.instant().getEpochSecond() * SECOND)
          .as("one source TTL after the last refusal for want of room, not before")
          .isGreaterThanOrEqualTo(T0 + 10 * INTERVAL);
    }

    @Test
    void expiryHappensOnAdvanceWithoutTraffic() {
      apply(checkout("i-1").seq(1).entry(1, 1.0));
      at(T0 + 5 * INTERVAL + SECOND - 1);
      assertThat(engine.activeSources()).isEqualTo(1);
      at(T0 + 6 * INTERVAL);
      assertThat(engine.activeSources()).isZero();
      assertThat(engine.snapshot().sources()).isEmpty();
      assertThat(scheme().cumulative()).isEmpty();
      assertThat(scheme().groups()).isZero();
    }

    @Test
    void duplicatesKeepAnInstanceAlive() {
      apply(checkout("i-1").seq(1).entry(1, 1.0));
      clock.setNanos(T0 + 4 * INTERVAL);
      apply(checkout("i-1").seq(1).entry(1, 1.0));
      at(T0 + 6 * INTERVAL);
      assertThat(engine.activeSources()).isEqualTo(1);
    }

    @Test
    void aDeltaResentAfterExpiryIsStillADuplicate() {
      // Applied, but its ack lost; the client is cut off for longer than the ttl, then resends.
      apply(checkout("i-1").seq(1).entry(1, 1.0));
      at(T0 + 7 * INTERVAL);
      assertThat(engine.activeSources()).isZero();
      FoldResult resent = apply(inWindow(checkout("i-1").seq(1).entry(1, 1.0), W0 + 7));
      assertThat(resent.outcome()).isEqualTo(FoldResult.Outcome.DUPLICATE);
      FoldResult next = apply(inWindow(checkout("i-1").seq(2).entry(1, 4.0), W0 + 7));
      assertThat(next.outcome()).isEqualTo(FoldResult.Outcome.APPLIED);
      assertState(find(scheme().cumulative(), labels("i-1", "main", "compute")), 4.0);
      assertThat(counter("profold.sequence.gaps")).as("no gap").isZero();

      // A new incarnation after expiry starts its own sequence.
      at(T0 + 14 * INTERVAL);
      FoldResult restarted = apply(inWindow(restartedCheckout().seq(1).entry(1, 8.0), W0 + 14));
      assertThat(restarted.outcome()).isEqualTo(FoldResult.Outcome.APPLIED);
    }

    @Test
    void returningAfterExpiryStartsAfresh() {
      apply(checkout("i-1").seq(1).entry(1, 1.0));
      at(T0 + 7 * INTERVAL);
      assertThat(engine.activeSources()).isZero();
      FoldResult r = apply(inWindow(checkout("i-1").seq(2).entry(1, 4.0), W0 + 7));
      assertThat(r.outcome()).isEqualTo(FoldResult.Outcome.APPLIED);
      assertState(find(scheme().cumulative(), labels("i-1", "main", "compute")), 4.0);
      assertThat(source("i-1").lastSequence()).isEqualTo(2);
    }
  }

  @Nested
  @DisplayName("cardinality limit")
  class Cardinality {
    /** checkout/{instance} with top-level regions r1..r5 (nodes 1..5). */
    Deltas.Builder fiveRegions(String instance) {
      Deltas.Builder b =
          Deltas.source("checkout", instance).incarnation(7).interval(T0, T0 + INTERVAL);
      for (int i = 1; i <= 5; i++) {
        b.region(i, "r" + i, REGION_KIND_WAIT);
      }
      return b;
    }

    @Test
    void groupsBeyondTheLimitFoldIntoTheOverflowGroup() {
      engine = engine(3);
      FoldResult r =
          apply(
              fiveRegions("i-1")
                  .seq(1)
                  .entry(1, 1.0)
                  .entry(2, 2.0)
                  .entry(3, 4.0)
                  .entry(4, 0.25, 0.5)
                  .entry(5, 8.0));

      assertThat(r.outcome()).isEqualTo(FoldResult.Outcome.APPLIED);
      assertThat(r.overflowed()).isEqualTo(2);
      SchemeSnapshot s = scheme();
      assertThat(s.groups()).isEqualTo(4);
      assertThat(s.cumulative()).hasSize(4);
      assertState(find(s.cumulative(), labels("i-1", "r1", "wait")), 1.0);
      assertState(find(s.cumulative(), labels("i-1", "r2", "wait")), 2.0);
      assertState(find(s.cumulative(), labels("i-1", "r3", "wait")), 4.0);
      assertState(find(s.cumulative(), OVERFLOW), 0.25, 0.5, 8.0);
      assertThat(counter("profold.scheme.overflow.measurements", "scheme", "region")).isEqualTo(2);

      // Known groups keep their own series; new ones keep overflowing.
      FoldResult again = apply(fiveRegions("i-1").seq(2).entry(1, 1.0).entry(5, 16.0));
      assertThat(again.overflowed()).isEqualTo(1);
      assertState(find(scheme().cumulative(), labels("i-1", "r1", "wait")), 1.0, 1.0);
      assertState(find(scheme().cumulative(), OVERFLOW), 0.25, 0.5, 8.0, 16.0);
      assertThat(counter("profold.scheme.overflow.measurements", "scheme", "region")).isEqualTo(3);

      // The overflow group has its window series too.
      at(T0 + 2 * INTERVAL);
      assertState(find(scheme().lastInterval(), OVERFLOW), 0.25, 0.5, 8.0, 16.0);
      assertState(find(scheme().lastInterval(), labels("i-1", "r1", "wait")), 1.0, 1.0);
    }

    @Test
    void limitIsSharedByAllInstances() {
      engine = engine(3);
      apply(fiveRegions("i-1").seq(1).entry(1, 1.0).entry(2, 1.0));
      FoldResult r = apply(fiveRegions("i-2").seq(1).entry(1, 2.0).entry(2, 4.0));
      assertThat(r.overflowed()).isEqualTo(1);
      assertState(find(scheme().cumulative(), labels("i-2", "r1", "wait")), 2.0);
      assertState(find(scheme().cumulative(), OVERFLOW), 4.0);
    }

    @Test
    void overflowGroupIsPerMeasurement() {
      engine = engine(1);
      FoldResult r =
          apply(
              fiveRegions("i-1")
                  .attribute(3, "allocated", VALUE_TYPE_INT, ATTRIBUTE_KIND_MEASUREMENT, "bytes")
                  .entry(1, 1.0)
                  .entry(
                      Entry.newBuilder()
                          .addKey(Deltas.regionKey(2))
                          .addMeasurements(Deltas.time(2.0))
                          .addMeasurements(Deltas.measurement(3, 64))));
      assertThat(r.overflowed()).isEqualTo(2);
      assertState(find(scheme().cumulative(), OVERFLOW, TIME), 2.0);
      assertState(find(scheme().cumulative(), OVERFLOW, new Measure("allocated", "bytes")), 64);
      assertThat(scheme().groups()).isEqualTo(3);
    }

    @Test
    void groupsOfAnExpiredInstanceAreFreed() {
      engine = engine(3);
      apply(fiveRegions("old").seq(1).entry(1, 1.0).entry(2, 1.0).entry(3, 1.0));
      FoldResult full = apply(fiveRegions("keeper").seq(1).entry(4, 2.0));
      assertThat(full.overflowed()).isEqualTo(1);

      for (int k = 1; k <= 4; k++) {
        clock.setNanos(T0 + k * INTERVAL + SECOND);
        apply(inWindow(fiveRegions("keeper").seq(k + 1).entry(4, 2.0), W0 + k - 1));
      }
      assertThat(counter("profold.scheme.overflow.measurements", "scheme", "region")).isEqualTo(5);

      // "old" expires before this delta is folded: its three groups are free again.
      clock.setNanos(T0 + 5 * INTERVAL + SECOND);
      FoldResult fits = apply(inWindow(fiveRegions("keeper").seq(6).entry(4, 4.0), W0 + 4));
      assertThat(fits.overflowed()).isZero();
      FoldResult newcomer =
          apply(inWindow(fiveRegions("new").seq(1).entry(1, 0.5).entry(2, 0.25), W0 + 4));
      assertThat(newcomer.overflowed()).isZero();

      SchemeSnapshot s = scheme();
      assertThat(has(s.cumulative(), labels("old", "r1", "wait"))).isFalse();
      assertState(find(s.cumulative(), labels("keeper", "r4", "wait")), 4.0);
      assertState(find(s.cumulative(), labels("new", "r1", "wait")), 0.5);
      assertState(find(s.cumulative(), labels("new", "r2", "wait")), 0.25);
      assertState(find(s.cumulative(), OVERFLOW), 2, 2, 2, 2, 2);
      assertThat(s.groups()).isEqualTo(4);
      assertThat(counter("profold.scheme.overflow.measurements", "scheme", "region")).isEqualTo(5);

      // And now the limit is reached again.
      assertThat(apply(inWindow(fiveRegions("new").seq(2).entry(3, 1.0), W0 + 4)).overflowed())
          .isEqualTo(1);
    }
  }

  @Nested
  @DisplayName("region path")
  class RegionPath {
    @Test
    void entryWithoutRegionGroupsUnderEmptyPath() {
      FoldResult r =
          apply(
              checkout("i-1")
                  .attribute(3, "tenant", VALUE_TYPE_STRING, ATTRIBUTE_KIND_DIMENSION, "")
                  .string(Deltas.FREE_STRING_IDS, "acme")
                  .entryWithoutKey(1.0)
                  .entry(
                      Entry.newBuilder()
                          .addKey(
                              AttributeValue.newBuilder()
                                  .setAttributeId(3)
                                  .setStringId(Deltas.FREE_STRING_IDS))
                          .addMeasurements(Deltas.time(2.0))));
      assertThat(r.outcome()).isEqualTo(FoldResult.Outcome.APPLIED);
      SchemeSnapshot s = scheme();
      assertThat(s.cumulative()).hasSize(1);
      assertState(find(s.cumulative(), labels("i-1", "", "")), 1.0, 2.0);
    }

    @Test
    void pathAttributeNotNamedRegionIsNotARegion() {
      apply(
          checkout("i-1")
              .attribute(3, "frame", VALUE_TYPE_PATH, ATTRIBUTE_KIND_DIMENSION, "")
              .string(Deltas.FREE_STRING_IDS, "run")
              .pathNode(Deltas.pathNode(10, 0, 3, Deltas.FREE_STRING_IDS, REGION_KIND_COMPUTE))
              .entry(
                  Entry.newBuilder()
                      .addKey(AttributeValue.newBuilder().setAttributeId(3).setPathNodeId(10))
                      .addMeasurements(Deltas.time(0.5))));
      assertState(find(scheme().cumulative(), labels("i-1", "", "")), 0.5);
    }

    @Test
    void regionIsFoundAnywhereInTheKey() {
      apply(
          checkout("i-1")
              .attribute(3, "tenant", VALUE_TYPE_STRING, ATTRIBUTE_KIND_DIMENSION, "")
              .string(Deltas.FREE_STRING_IDS, "acme")
              .entry(
                  Entry.newBuilder()
                      .addKey(
                          AttributeValue.newBuilder()
                              .setAttributeId(3)
                              .setStringId(Deltas.FREE_STRING_IDS))
                      .addKey(Deltas.regionKey(2))
                      .addMeasurements(Deltas.time(0.5)))
              .entry(2, 0.25));
      // Both entries have region main/db.query: the scheme groups them together.
      assertState(find(scheme().cumulative(), labels("i-1", "main/db.query", "io")), 0.5, 0.25);
    }

    @Test
    void regionWithoutKindHasEmptyKindLabel() {
      apply(
          Deltas.source("checkout", "i-1")
              .interval(T0, T0 + INTERVAL)
              .region(1, "main", dev.profold.proto.v1.RegionKind.REGION_KIND_UNSPECIFIED)
              .entry(1, 1.0));
      assertState(find(scheme().cumulative(), labels("i-1", "main", "")), 1.0);
    }
  }

  @Nested
  class ThreadActivity {
    private final long[] busy = {4 * SECOND, 2 * SECOND, 0, SECOND, 0, 0};

    private dev.profold.sinks.snapshot.ThreadActivitySnapshot group(String instance, String g) {
      return source(instance).threadActivity().stream()
          .filter(a -> a.group().equals(g))
          .findFirst()
          .orElseThrow();
    }

    @Test
    void totalsHoldAtTheLargestLongRatherThanWrapNegative() {
      int threads = 800_000_000; // 8e18 ns of wall time in a 10 s interval, just below 2^63
      long[] allCompute = {threads * INTERVAL, 0, 0, 0, 0, 0};
      for (int seq = 1; seq <= 2; seq++) {
        apply(
            checkout("i-1").seq(seq).entry(1, 1.0).threads("pool-*", threads, allCompute, 0, 0, 0));
      }
      assertThat(group("i-1", "pool-*").total(OverheadClass.COMPUTE)).isEqualTo(Long.MAX_VALUE);
    }

    @Test
    void totalsAddUpAndTheLastIntervalIsKeptPerGroup() {
      apply(
          checkout("i-1")
              .seq(1)
              .entry(1, 1.0)
              .threads("pool-*", 2, busy, SECOND, 4 * SECOND, 3 * SECOND)
              .threads("main", 1, new long[] {SECOND, 0, 0, 0, 0, 0}, SECOND, SECOND, SECOND));
      apply(
          checkout("i-1")
              .seq(2)
              .entry(1, 1.0)
              .threads("pool-*", 2, new long[] {0, 6 * SECOND, 0, 0, 0, 0}, 0, 0, 0));
      apply(checkout("i-1").seq(3).entry(1, 1.0)); // no activity: nothing changes

      var pool = group("i-1", "pool-*");
      assertThat(pool.current()).isTrue();
      assertThat(pool.total(OverheadClass.COMPUTE)).isEqualTo(4 * SECOND);
      assertThat(pool.total(OverheadClass.SYNC)).isEqualTo(8 * SECOND);
      assertThat(pool.total(OverheadClass.IDLE)).isEqualTo(13 * SECOND + 14 * SECOND);
      assertThat(pool.share(OverheadClass.SYNC)).isEqualTo(0.3);
      assertThat(pool.threads()).isEqualTo(2);
      assertThat(pool.intervalNanos()).isEqualTo(INTERVAL);
      var main = group("i-1", "main");
      assertThat(main.current()).as("not in the latest delta with activity").isFalse();
      assertThat(main.total(OverheadClass.COMPUTE)).isEqualTo(SECOND);
      assertThat(source("i-1").threadActivity().get(0).group())
          .as("current groups first")
          .isEqualTo("pool-*");
    }

    @Test
    void duplicatesAddNothingAndARestartStartsAfresh() {
      Deltas.Builder first =
          checkout("i-1").seq(1).entry(1, 1.0).threads("pool-*", 2, busy, 0, 0, 0);
      apply(first);
      apply(first.copy());
      assertThat(group("i-1", "pool-*").total(OverheadClass.SYNC)).isEqualTo(2 * SECOND);

      apply(restartedCheckout().entry(1, 1.0));
      assertThat(source("i-1").threadActivity()).isEmpty();
    }

    @Test
    void theTimeIoWentUnobservedAddsUpCountsOnceAndStartsAfreshWithAnIncarnation() {
      Deltas.Builder first =
          checkout("i-1").seq(1).entry(1, 1.0).threads("pool-*", 2, busy, 0, 0, 0);
      apply(first.copy());
      assertThat(source("i-1").ioUnobservedNanos()).as("not said").isEqualTo(-1);
      apply(checkout("i-1").seq(2).entry(1, 1.0).ioUnobserved(0)); // observed throughout
      assertThat(source("i-1").ioUnobservedNanos()).isZero();
      Deltas.Builder third = checkout("i-1").seq(3).entry(1, 1.0).ioUnobserved(4 * SECOND);
      apply(third);
      apply(third.copy()); // a duplicate
      apply(checkout("i-1").seq(4).entry(1, 1.0).ioUnobserved(10 * SECOND));
      apply(checkout("i-1").seq(5).entry(1, 1.0)); // not said this time
      assertThat(source("i-1").ioUnobservedNanos()).isEqualTo(14 * SECOND);

      apply(restartedCheckout().entry(1, 1.0));
      assertThat(source("i-1").ioUnobservedNanos()).isEqualTo(-1);
    }

    @Test
    void aSourcesOwnLabelsReachItsSnapshot() {
      apply(checkout("i-1").seq(1).entry(1, 1.0).label("zone", "b").label("version", "1.2"));
      assertThat(source("i-1").labels()).containsOnly(entry("zone", "b"), entry("version", "1.2"));
    }

    @Test
    void aGroupKeepsTheTimeIoWentUnobservedInTheDeltaThatLastReportedIt() {
      apply(checkout("i-1").seq(1).entry(1, 1.0).threads("pool-*", 2, busy, 0, 0, 0));
      assertThat(group("i-1", "pool-*").lastIoUnobservedNanos()).as("not said").isEqualTo(-1);
      assertThat(group("i-1", "pool-*").ioObservationReported()).isFalse();
      assertThat(group("i-1", "pool-*").ioUnobservedShare()).isZero();

      apply(
          checkout("i-1")
              .seq(2)
              .entry(1, 1.0)
              .threads("pool-*", 2, busy, 0, 0, 0)
              .ioUnobserved(4 * SECOND));
      assertThat(group("i-1", "pool-*").lastIoUnobservedNanos()).isEqualTo(4 * SECOND);
      assertThat(group("i-1", "pool-*").ioUnobservedShare()).isEqualTo(0.4);

      apply(checkout("i-1").seq(3).entry(1, 1.0).ioUnobserved(10 * SECOND)); // no activity
      assertThat(group("i-1", "pool-*").lastIoUnobservedNanos())
          .as("the group's interval is still the second delta's")
          .isEqualTo(4 * SECOND);
      assertThat(source("i-1").ioUnobservedNanos()).isEqualTo(14 * SECOND);
    }

    @Test
    void beyond512GroupsTheLeastRecentlyReportedAreForgottenAndCounted() {
      for (int d = 0; d < 3; d++) {
        Deltas.Builder b = checkout("i-1").seq(d + 1).entry(1, 1.0);
        for (int g = 0; g < 256; g++) {
          b.threads("g" + d + "-" + g, 1, new long[6], 0, 0, 0);
        }
        apply(b);
      }
      List<String> kept =
          source("i-1").threadActivity().stream()
              .map(dev.profold.sinks.snapshot.ThreadActivitySnapshot::group)
              .toList();
      assertThat(kept).hasSize(512).contains("g2-0", "g1-255").doesNotContain("g0-0");
      assertThat(counter("profold.thread.groups.evicted")).isEqualTo(256);
    }
  }
}
