package dev.profold.collector.analysis;

import static dev.profold.proto.v1.AttributeKind.ATTRIBUTE_KIND_MEASUREMENT;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_COMPUTE;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_IO;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_WAIT;
import static dev.profold.proto.v1.ValueType.VALUE_TYPE_DOUBLE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.fold.FoldConfig;
import dev.profold.collector.fold.FoldEngine;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.testing.Deltas;
import dev.profold.collector.testing.MutableClock;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.MetricState;
import dev.profold.sinks.prometheus.PrometheusExposition;
import dev.profold.sinks.snapshot.SchemeSnapshot;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link RegionAnalysisValues} over the real fold: deltas of many instances into a {@link
 * FoldEngine} on a {@link MutableClock}, values read after the window closes.
 */
class RegionAnalysisValuesTest {
  static final long S = 1_000_000_000L;
  static final long INTERVAL = 10 * S;
  static final long T0 = 1_700_000_000L * S;

  final MutableClock clock = MutableClock.atNanos(T0 + S);
  final GlobalDictionary dictionary = new GlobalDictionary(100_000);
  final FoldEngine engine =
      new FoldEngine(
          new FoldConfig(INTERVAL, 5, 100_000),
          dictionary,
          clock,
          new CollectorMetrics(new SimpleMeterRegistry()));
  RegionAnalysisValues values = new RegionAnalysisValues(engine::snapshot, AnalysisSpec.defaults());

  static String name(int i) {
    return String.format("checkout-%02d", i);
  }

  /**
   * An instance of checkout in window {@code w}: handle (compute, inclusive: 0.5 s of its own plus
   * its children), handle/db.io (io: four calls of {@code ioCall} s), handle/queue (wait, 0.125 s).
   */
  void checkout(String instance, long w, double ioCall) {
    engine.apply(checkoutDelta(instance, w, ioCall).decode(dictionary));
  }

  /** The delta {@link #checkout} folds. */
  static Deltas.Builder checkoutDelta(String instance, long w, double ioCall) {
    long start = T0 + w * INTERVAL;
    double io = 4 * ioCall;
    return Deltas.source("checkout", instance)
        .incarnation(7)
        .seq(w + 1)
        .interval(start, start + INTERVAL)
        .region(1, "handle", REGION_KIND_COMPUTE)
        .region(2, 1, "db.io", REGION_KIND_IO)
        .region(3, 1, "queue", REGION_KIND_WAIT)
        .entry(1, 0.5 + io + 0.125)
        .entry(2, ioCall, ioCall, ioCall, ioCall)
        .entry(3, 0.125);
  }

  /** Closes window {@code w} (the clock passes its end plus one interval of lateness). */
  void close(long w) {
    clock.setNanos(T0 + (w + 2) * INTERVAL);
    engine.advance();
  }

  static List<DerivedValue> named(List<DerivedValue> all, String name) {
    return all.stream().filter(v -> v.name().equals(name)).toList();
  }

  static DerivedValue find(List<DerivedValue> all, String name, Map<String, String> labels) {
    return all.stream()
        .filter(v -> v.name().equals(name) && v.labels().equals(labels))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + name + labels + " in " + all));
  }

  static Map<String, String> node(String path, String kind) {
    return Map.of("service", "checkout", "path", path, "kind", kind);
  }

  @Test
  void aTimeBeyondTheDoubleRangeCountsAsTheLargestNotAsNone() {
    // checkout-03's handle time is +Inf (two values of 1e308): before, its series was skipped,
    // and checkout-03 showed as the fastest instance at handle.
    for (int i = 0; i < 4; i++) {
      engine.apply(
          Deltas.source("checkout", name(i))
              .incarnation(7)
              .seq(1)
              .interval(T0, T0 + INTERVAL)
              .region(1, "handle", REGION_KIND_COMPUTE)
              .entry(1, i == 3 ? new double[] {1e308, 1e308} : new double[] {1.0})
              .decode(dictionary));
    }
    close(0);
    DerivedValue handle =
        find(values.current(), RegionAnalysisValues.IMBALANCE, node("handle", "compute"));
    assertThat(handle.context())
        .containsEntry("slowest_instance", name(3))
        .containsEntry("fastest_instance", name(0));
    assertThat(handle.value()).isFinite().isGreaterThan(1e307);
  }

  @Test
  void aServiceOverTheCellBoundIsLeftOutOfTheProfiles() {
    for (int i = 0; i < 4; i++) {
      checkout(name(i), 0, 0.0625); // 4 instances x 3 nodes
    }
    close(0);
    SchemeSnapshot region = engine.snapshot().schemes().get(0);

    assertThat(ServiceProfile.fromRegionScheme(region, 12)).containsOnlyKeys("checkout");
    assertThat(ServiceProfile.fromRegionScheme(region, 11)).isEmpty();
  }

  @Test
  void anIntervalWithOverflowedSeriesFlagsNoOutlierAndSaysItIsIncomplete() {
    // The scheme holds 58 groups: of 20 instances x 3 nodes, the last two series go to the
    // overflow group, so checkout-19 lacks its queue and db.io times and would look unlike the
    // others for want of them.
    FoldEngine small =
        new FoldEngine(
            new FoldConfig(INTERVAL, 5, 58),
            dictionary,
            clock,
            new CollectorMetrics(new SimpleMeterRegistry()));
    for (int i = 0; i < 20; i++) {
      small.apply(checkoutDelta(name(i), 0, 0.0625).decode(dictionary));
    }
    clock.setNanos(T0 + 2 * INTERVAL);
    small.advance();
    List<DerivedValue> v =
        Catalogued.check(
            new RegionAnalysisValues(small::snapshot, AnalysisSpec.defaults()).current());

    assertThat(named(v, RegionAnalysisValues.OUTLIER)).isEmpty();
    assertThat(v)
        .isNotEmpty()
        .allSatisfy(d -> assertThat(d.context()).containsEntry("incomplete", "true"));
  }

  @Test
  void anInstanceThatSerialisesItsIoIsTheOutlierAndItsIoTheImbalance() {
    for (int i = 0; i < 20; i++) {
      // checkout-07's four I/O calls queue up behind each other: each takes 4x as long
      checkout(name(i), 0, i == 7 ? 0.25 : 0.0625);
    }
    assertThat(values.current()).as("nothing before the window closes").isEmpty();
    close(0);
    List<DerivedValue> v = Catalogued.check(values.current());

    // outlier: checkout-07 alone, separated by its db.io first
    List<DerivedValue> outliers = named(v, RegionAnalysisValues.OUTLIER);
    assertThat(outliers).hasSize(1);
    DerivedValue o = outliers.get(0);
    assertThat(o.labels()).isEqualTo(Map.of("service", "checkout", "instance", name(7)));
    assertThat(o.value()).isEqualTo(1);
    assertThat(o.context().get("cluster_size")).isEqualTo("1");
    assertThat(o.context().get("separating_paths"))
        .startsWith("handle/db.io (io): 1.000 s vs 0.250 s");
    DerivedValue clusters = find(v, RegionAnalysisValues.CLUSTERS, Map.of("service", "checkout"));
    assertThat(clusters.value()).isEqualTo(2);
    assertThat(clusters.context().get("cluster_sizes")).isEqualTo("19, 1");

    // imbalance of db.io: planted max - avg
    double max = 1.0;
    double avg = (19 * 0.25 + 1.0) / 20;
    DerivedValue imb = find(v, RegionAnalysisValues.IMBALANCE, node("handle/db.io", "io"));
    assertThat(imb.value()).isCloseTo(max - avg, within(0.01 * (max - avg)));
    assertThat(imb.context())
        .containsEntry("slowest_instance", name(7))
        .containsEntry("fastest_instance", name(0))
        .containsEntry("significant", "true")
        .containsEntry("max", "1")
        .containsEntry("min", "0.25")
        .containsEntry("avg", "0.2875")
        .containsEntry("category", "computation");
    // runtime: the slowest instance's handle, 0.5 + 1.0 + 0.125
    DerivedValue ratio = find(v, RegionAnalysisValues.IMBALANCE_RATIO, node("handle/db.io", "io"));
    assertThat(ratio.value()).isCloseTo((max - avg) / 1.625, within(1e-12));
    // the balanced queue: no imbalance, its whole time is waiting that every instance does
    assertThat(find(v, RegionAnalysisValues.IMBALANCE, node("handle/queue", "wait")).value())
        .isZero();
    assertThat(find(v, RegionAnalysisValues.WAIT, node("handle/queue", "wait")).value())
        .isEqualTo(0.125);
    assertThat(find(v, RegionAnalysisValues.IMBALANCE, node("handle/queue", "wait")).context())
        .containsEntry("significant", "false");
    // only significant nodes have the significant ratio
    assertThat(
            find(v, RegionAnalysisValues.SIGNIFICANT_IMBALANCE_RATIO, node("handle/db.io", "io"))
                .value())
        .isEqualTo(ratio.value());
    assertThat(named(v, RegionAnalysisValues.SIGNIFICANT_IMBALANCE_RATIO))
        .allMatch(x -> x.context().get("significant").equals("true"))
        .noneMatch(x -> x.labels().get("path").equals("handle/queue"));
    // computation nodes have no waiting to show
    assertThat(named(v, RegionAnalysisValues.WAIT)).hasSize(1);
    // the largest imbalance comes first, the deeper of two equal ones first
    assertThat(named(v, RegionAnalysisValues.IMBALANCE).get(0).labels())
        .isEqualTo(node("handle/db.io", "io"));
  }

  @Test
  void theOutlierGoesWhenItsNextIntervalIsBalanced() {
    for (int i = 0; i < 20; i++) {
      checkout(name(i), 0, i == 7 ? 0.25 : 0.0625);
    }
    close(0);
    assertThat(named(values.current(), RegionAnalysisValues.OUTLIER)).hasSize(1);
    for (int i = 0; i < 20; i++) {
      checkout(name(i), 1, 0.0625);
    }
    close(1);
    List<DerivedValue> v = values.current();
    assertThat(named(v, RegionAnalysisValues.OUTLIER)).isEmpty();
    assertThat(find(v, RegionAnalysisValues.CLUSTERS, Map.of("service", "checkout")).value())
        .isEqualTo(1);
    assertThat(find(v, RegionAnalysisValues.IMBALANCE, node("handle/db.io", "io")).value())
        .isZero();
  }

  @Test
  void valuesAreComputedOncePerClosedInterval() {
    for (int i = 0; i < 3; i++) {
      checkout(name(i), 0, i == 0 ? 0.25 : 0.0625);
    }
    close(0);
    List<DerivedValue> first = values.current();
    assertThat(first).isNotEmpty();
    // data of the open window changes the snapshot, not the closed interval
    checkout(name(0), 1, 0.0625);
    assertThat(values.current()).isSameAs(first);
    checkout(name(1), 1, 0.0625);
    close(1);
    assertThat(values.current()).isNotSameAs(first);
    assertThat(named(values.current(), RegionAnalysisValues.CLUSTERS)).hasSize(1);
  }

  @Test
  void anInstanceMissingANodeCountsAsZeroThere() {
    checkout(name(0), 0, 0.0625);
    checkout(name(1), 0, 0.0625);
    engine.apply(
        Deltas.source("checkout", name(2))
            .incarnation(7)
            .interval(T0, T0 + INTERVAL)
            .region(1, "handle", REGION_KIND_COMPUTE)
            .entry(1, 0.625)
            .decode(dictionary));
    close(0);
    DerivedValue io =
        find(values.current(), RegionAnalysisValues.IMBALANCE, node("handle/db.io", "io"));
    assertThat(io.context()).containsEntry("min", "0").containsEntry("fastest_instance", name(2));
    assertThat(io.value()).isCloseTo(0.25 - 0.5 / 3, within(1e-12));
  }

  @Test
  void aServiceWithOneInstanceHasNoValues() {
    checkout(name(0), 0, 0.0625);
    close(0);
    assertThat(values.current()).isEmpty();
  }

  @Test
  void onlyTheTopNodesAreExposed() {
    values = new RegionAnalysisValues(engine::snapshot, new AnalysisSpec(0.001, 0.7, 2));
    for (int i = 0; i < 3; i++) {
      Deltas.Builder b =
          Deltas.source("search", "s" + i).incarnation(1).interval(T0, T0 + INTERVAL);
      for (int n = 1; n <= 30; n++) {
        // node n: instance 0 takes n/8 s longer
        b.region(n, "leaf" + n, REGION_KIND_WAIT).entry(n, 1 + (i == 0 ? n / 8.0 : 0));
      }
      engine.apply(b.decode(dictionary));
    }
    close(0);
    List<DerivedValue> v = values.current();
    assertThat(named(v, RegionAnalysisValues.IMBALANCE))
        .extracting(x -> x.labels().get("path"))
        .containsExactly("leaf30", "leaf29");
    assertThat(named(v, RegionAnalysisValues.IMBALANCE_RATIO)).hasSize(2);
    assertThat(named(v, RegionAnalysisValues.WAIT))
        .extracting(x -> x.labels().get("path"))
        .containsExactly("leaf30", "leaf29");
  }

  @Test
  void theExpositionShowsTheValuesAsGauges() throws IOException {
    for (int i = 0; i < 20; i++) {
      checkout(name(i), 0, i == 7 ? 0.25 : 0.0625);
    }
    close(0);
    String text = text(AnalysisExposition.regions(values).collect());
    assertThat(text)
        .contains("# TYPE profold_region_imbalance_seconds gauge")
        .contains(
            "profold_region_imbalance_seconds{kind=\"io\",path=\"handle/db.io\",service=\"checkout\"} 0.7125")
        .contains(
            "profold_region_wait_seconds{kind=\"wait\",path=\"handle/queue\",service=\"checkout\"} 0.125")
        .contains("profold_service_instance_clusters{service=\"checkout\"} 2")
        .contains("profold_instance_outlier{instance=\"checkout-07\",service=\"checkout\"} 1")
        .contains("profold_region_imbalance_ratio{");
    assertThat(text.lines().filter(l -> l.startsWith("profold_instance_outlier{"))).hasSize(1);
  }

  @Test
  void aSchemeMeasurementWithTheSameNameKeepsItsFamily() throws IOException {
    // a client measures 'wait' in seconds: the region scheme exposes profold_region_wait_seconds
    for (int i = 0; i < 2; i++) {
      engine.apply(
          Deltas.source("checkout", name(i))
              .incarnation(7)
              .interval(T0, T0 + INTERVAL)
              .attribute(50, "wait", VALUE_TYPE_DOUBLE, ATTRIBUTE_KIND_MEASUREMENT, "seconds")
              .region(1, "handle", REGION_KIND_WAIT)
              .entry(
                  Entry.newBuilder()
                      .addKey(Deltas.regionKey(1))
                      .addMeasurements(Deltas.time(1 + i))
                      .addMeasurements(Deltas.measurement(50, 0.5)))
              .decode(dictionary));
    }
    close(0);
    // time 1 s and 2 s: the wait node's balanced waiting is the average
    assertThat(find(values.current(), RegionAnalysisValues.WAIT, node("handle", "wait")).value())
        .isEqualTo(1.5);
    MetricSnapshots ours = AnalysisExposition.regions(values).collect();
    assertThat(ours.stream().map(s -> s.getMetadata().getPrometheusName()))
        .doesNotContain("profold_region_wait_seconds")
        .contains("profold_region_imbalance_seconds");
    // both collectors in one registry scrape without a duplicate-name failure
    PrometheusRegistry registry = new PrometheusRegistry();
    registry.register(new PrometheusExposition(engine::snapshot));
    registry.register(AnalysisExposition.regions(values));
    List<String> names =
        registry.scrape().stream().map(s -> s.getMetadata().getPrometheusName()).toList();
    assertThat(names).contains("profold_region_wait_seconds", "profold_region_imbalance_seconds");
    assertThat(names).doesNotHaveDuplicates();
  }

  @Test
  void aSumImbalanceBeyondTheDoubleRangeShowsAsInfAndTheValuesStay() throws IOException {
    // A client may send any finite state. Here every time is finite, but the imbalances of
    // handle's two leaves add up beyond Double.MAX_VALUE: sumImb(handle) is +Inf.
    for (int i = 0; i < 10; i++) {
      double t = i == 0 ? 1.7e308 : 1;
      engine.apply(
          Deltas.source("checkout", name(i))
              .incarnation(7)
              .interval(T0, T0 + INTERVAL)
              .region(1, "handle", REGION_KIND_COMPUTE)
              .region(2, 1, "a", REGION_KIND_COMPUTE)
              .region(3, 1, "b", REGION_KIND_COMPUTE)
              .entry(state(1, t))
              .entry(state(2, t))
              .entry(state(3, t))
              .decode(dictionary));
    }
    close(0);
    List<DerivedValue> v = values.current();
    DerivedValue handle = find(v, RegionAnalysisValues.IMBALANCE, node("handle", "compute"));
    assertThat(handle.value()).isEqualTo(1.7e308 - (1.7e308 + 9) / 10);
    assertThat(handle.context())
        .containsEntry("sum_imbalance", "+Inf")
        .containsEntry("max", "17" + "0".repeat(307))
        .containsEntry("slowest_instance", name(0));
    assertThat(find(v, RegionAnalysisValues.IMBALANCE, node("handle/a", "compute")).context())
        .containsEntry("sum_imbalance", "153" + "0".repeat(306));
    assertThat(find(v, RegionAnalysisValues.CLUSTERS, Map.of("service", "checkout")).value())
        .isPositive();
    // /metrics still scrapes, the analysis families with it
    PrometheusRegistry registry = new PrometheusRegistry();
    registry.register(new PrometheusExposition(engine::snapshot));
    registry.register(AnalysisExposition.regions(values));
    assertThat(text(registry.scrape()))
        .contains("profold_region_time_seconds_count{")
        .contains(
            "profold_region_imbalance_seconds{kind=\"compute\",path=\"handle\",service=\"checkout\"}");
  }

  /** An entry of region node {@code regionId} with one time value {@code t} as a bare state. */
  static Entry.Builder state(int regionId, double t) {
    MetricState s = MetricState.newBuilder().setCount(1).setSum(t).setMin(t).setMax(t).build();
    return Entry.newBuilder()
        .addKey(Deltas.regionKey(regionId))
        .addMeasurements(Measurement.newBuilder().setAttributeId(Deltas.TIME).setState(s));
  }

  @Test
  void nonFiniteContextNumbersUsePrometheusSpelling() {
    assertThat(RegionAnalysisValues.number(Double.NaN)).isEqualTo("NaN");
    assertThat(RegionAnalysisValues.number(Double.POSITIVE_INFINITY)).isEqualTo("+Inf");
    assertThat(RegionAnalysisValues.number(Double.NEGATIVE_INFINITY)).isEqualTo("-Inf");
    assertThat(RegionAnalysisValues.number(0.28750000001)).isEqualTo("0.2875");
  }

  static String text(MetricSnapshots snapshots) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrometheusTextFormatWriter.create().write(out, snapshots);
    return out.toString(StandardCharsets.UTF_8);
  }
}
