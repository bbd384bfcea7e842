package dev.profold.sinks.prometheus;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.reduce.Aggregate;
import dev.profold.reduce.ExpHistogram;
import dev.profold.sinks.snapshot.ClassTimes;
import dev.profold.sinks.snapshot.ClientExport;
import dev.profold.sinks.snapshot.CollectorSnapshot;
import dev.profold.sinks.snapshot.IntervalSnapshot;
import dev.profold.sinks.snapshot.Measure;
import dev.profold.sinks.snapshot.SchemeSnapshot;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import dev.profold.sinks.snapshot.SourceSnapshot;
import dev.profold.sinks.snapshot.StateSnapshot;
import dev.profold.sinks.snapshot.ThreadActivitySnapshot;
import io.prometheus.metrics.expositionformats.PrometheusTextFormatWriter;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.NativeHistogramBuckets;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

class PrometheusExpositionTest {
  private static final Measure TIME = new Measure("time", "seconds");

  private static StateSnapshot state(double... values) {
    Aggregate a = new Aggregate();
    for (double v : values) {
      a.record(v);
    }
    return StateSnapshot.of(a);
  }

  private static String render(CollectorSnapshot snapshot) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrometheusTextFormatWriter.create()
        .write(out, new PrometheusExposition(() -> snapshot).collect());
    return out.toString(StandardCharsets.UTF_8);
  }

  /** The text a scrape of a registry holding only the exposition gives, as /metrics does. */
  private static String scrape(CollectorSnapshot snapshot) throws Exception {
    PrometheusRegistry registry = new PrometheusRegistry();
    registry.register(new PrometheusExposition(() -> snapshot));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrometheusTextFormatWriter.create().write(out, registry.scrape());
    return out.toString(StandardCharsets.UTF_8);
  }

  private static SchemeSnapshot scheme(List<SeriesSnapshot> cumulative, List<SeriesSnapshot> last) {
    return scheme("region", cumulative, last);
  }

  private static SchemeSnapshot scheme(
      String name, List<SeriesSnapshot> cumulative, List<SeriesSnapshot> last) {
    return new SchemeSnapshot(
        name,
        List.of("service", "path"),
        cumulative,
        last,
        20_000_000_000L,
        3,
        "SELECT sum(time) GROUP BY service, path",
        10_000_000_000L,
        List.of(new IntervalSnapshot(10_000_000_000L, 20_000_000_000L, last)),
        List.of("path"));
  }

  @Test
  void cumulativeHistogramHasExactClassicBucketsAtPowersOfTwo() throws Exception {
    SeriesSnapshot s = new SeriesSnapshot(List.of("svc", "a/b"), TIME, state(0.25, 0.5, 0.5, 3.0));
    String text = render(new CollectorSnapshot(List.of(scheme(List.of(s), List.of())), List.of()));
    String l = "path=\"a/b\",service=\"svc\"";
    assertThat(text)
        .contains("# TYPE profold_region_time_seconds histogram\n")
        .contains("profold_region_time_seconds_bucket{" + l + ",le=\"0.25\"} 1\n")
        .contains("profold_region_time_seconds_bucket{" + l + ",le=\"0.5\"} 3\n")
        .contains("profold_region_time_seconds_bucket{" + l + ",le=\"1.0\"} 3\n")
        .contains("profold_region_time_seconds_bucket{" + l + ",le=\"2.0\"} 3\n")
        .contains("profold_region_time_seconds_bucket{" + l + ",le=\"4.0\"} 4\n")
        .contains("profold_region_time_seconds_bucket{" + l + ",le=\"+Inf\"} 4\n")
        .contains("profold_region_time_seconds_count{" + l + "} 4\n")
        .contains("profold_region_time_seconds_sum{" + l + "} 4.25\n")
        .contains("profold_region_groups 3.0\n")
        .contains("profold_region_interval_end_timestamp_seconds 20.0\n");
  }

  @Test
  void aSumBeyondADoubleIsExposedAsInfinityWithoutFailingTheScrape() throws Exception {
    // Values of 1e308 add up beyond a double; the collector accepts such sums (protocol.md §5).
    SeriesSnapshot s = new SeriesSnapshot(List.of("svc", "a"), TIME, state(1e308, 1e308));
    String text = render(new CollectorSnapshot(List.of(scheme(List.of(s), List.of(s))), List.of()));
    String l = "path=\"a\",service=\"svc\"";
    assertThat(text)
        .contains("profold_region_time_seconds_sum{" + l + "} +Inf\n")
        .contains("profold_region_time_seconds_count{" + l + "} 2\n");
    SeriesSnapshot down =
        new SeriesSnapshot(List.of("svc", "b"), new Measure("delta", ""), state(-1e308, -1e308));
    assertThat(render(new CollectorSnapshot(List.of(scheme(List.of(down), List.of())), List.of())))
        .contains("profold_region_delta_sum{path=\"b\",service=\"svc\"} -Inf\n");
  }

  @Test
  void negativeAndZeroValuesGetBucketsBelowZero() throws Exception {
    SeriesSnapshot s =
        new SeriesSnapshot(
            List.of("svc", ""), new Measure("delta", ""), state(-3.0, -0.5, 0.0, 0.0, 1.0));
    String text = render(new CollectorSnapshot(List.of(scheme(List.of(s), List.of())), List.of()));
    String l = "path=\"\",service=\"svc\"";
    assertThat(text)
        // -3 lies in [-4, -2); -0.5 in [-0.5, -0.25) (magnitude buckets are closed at the top).
        .contains("profold_region_delta_bucket{" + l + ",le=\"-2.0\"} 1\n")
        .contains("profold_region_delta_bucket{" + l + ",le=\"-1.0\"} 1\n")
        .contains("profold_region_delta_bucket{" + l + ",le=\"-0.5\"} 1\n")
        .contains("profold_region_delta_bucket{" + l + ",le=\"-0.25\"} 2\n")
        .contains("profold_region_delta_bucket{" + l + ",le=\"0.0\"} 4\n")
        .contains("profold_region_delta_bucket{" + l + ",le=\"1.0\"} 5\n")
        .contains("profold_region_delta_count{" + l + "} 5\n");
  }

  @Test
  void lastIntervalBecomesGauges() throws Exception {
    SeriesSnapshot s = new SeriesSnapshot(List.of("svc", "a"), TIME, state(1.0, 3.0));
    String text = render(new CollectorSnapshot(List.of(scheme(List.of(), List.of(s))), List.of()));
    String l = "{path=\"a\",service=\"svc\"}";
    assertThat(text)
        .contains("profold_region_time_interval_values" + l + " 2.0\n")
        .contains("profold_region_time_interval_sum_seconds" + l + " 4.0\n")
        .contains("profold_region_time_interval_min_seconds" + l + " 1.0\n")
        .contains("profold_region_time_interval_max_seconds" + l + " 3.0\n")
        .contains("profold_region_time_interval_stddev_seconds" + l + " 1.0\n");
  }

  @Test
  void sourcesAreExposedWithTheirOverhead() throws Exception {
    SourceSnapshot src =
        new SourceSnapshot(
            "svc",
            "i-1",
            "h",
            "Java 17",
            "sdk/1",
            5_000_000_000L,
            9,
            2,
            1_500_000_000L,
            4,
            1024,
            900,
            16384,
            300_000,
            4_194_304,
            java.util.Map.of("contexts_full", 7L, "closed_twice", 1L),
            new ClientExport(3, 12, 65_536, 16_777_216),
            List.of(),
            -1,
            java.util.Map.of("zone", "b", "service", "evil"));
    String text = render(new CollectorSnapshot(List.of(), List.of(src)));
    String l = "{instance=\"i-1\",service=\"svc\"}";
    assertThat(text)
        .contains("profold_source_start_time_seconds" + l + " 5.0\n")
        .contains("profold_source_missing_deltas" + l + " 2.0\n")
        .contains("profold_client_cpu_seconds_total" + l + " 1.5\n")
        .contains("profold_client_events_dropped_total" + l + " 4.0\n")
        .contains("profold_client_memory_bytes" + l + " 1024.0\n")
        .contains("profold_client_contexts" + l + " 900.0\n")
        .contains("profold_client_contexts_limit" + l + " 16384.0\n")
        .contains("profold_client_dictionary_bytes" + l + " 300000.0\n")
        .contains("profold_client_dictionary_bytes_limit" + l + " 4194304.0\n")
        .contains("profold_client_export_reconnects_total" + l + " 3.0\n")
        .contains("profold_client_export_deltas_merged_total" + l + " 12.0\n")
        .contains("profold_client_export_buffered_bytes" + l + " 65536.0\n")
        .contains("profold_client_export_buffer_limit_bytes" + l + " 1.6777216E7\n")
        .contains(
            "profold_client_misuse_total{instance=\"i-1\",kind=\"contexts_full\",service=\"svc\"}"
                + " 7.0\n")
        .contains(
            "profold_client_misuse_total{instance=\"i-1\",kind=\"closed_twice\",service=\"svc\"}"
                + " 1.0\n")
        .contains(
            "profold_source_info{host=\"h\",instance=\"i-1\",label_service=\"evil\","
                + "label_zone=\"b\",runtime_version=\"Java 17\",sdk_version=\"sdk/1\","
                + "service=\"svc\"} 1.0\n")
        .doesNotContain("profold_thread_io_unobserved_seconds"); // not reported by this source
  }

  @Test
  void threadActivityIsExposedAsClassCountersAndLastIntervalRatiosAndSpread() throws Exception {
    long s = 1_000_000_000L;
    ThreadActivitySnapshot pool =
        new ThreadActivitySnapshot(
            "pool-*",
            ClassTimes.of(30 * s, 6 * s, 2 * s, 0, s, 0, s, 0),
            true,
            4,
            10 * s,
            ClassTimes.of(17 * s, 4 * s, 2 * s, 0, s, 0, 3 * s, 13 * s),
            40 * s,
            2 * s,
            20 * s,
            8 * s,
            -1);
    ThreadActivitySnapshot gone =
        new ThreadActivitySnapshot(
            "old-*",
            ClassTimes.of(s, 0, 0, 0, 0, 0, 0, 0),
            false,
            1,
            0,
            ClassTimes.zero(),
            0,
            0,
            0,
            0,
            -1);
    SourceSnapshot src =
        new SourceSnapshot(
            "svc",
            "i-1",
            "",
            "",
            "",
            1,
            1,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            java.util.Map.of(),
            ClientExport.NONE,
            List.of(pool, gone),
            2_500_000_000L,
            java.util.Map.of());
    String text = render(new CollectorSnapshot(List.of(), List.of(src)));
    String id = "instance=\"i-1\",service=\"svc\",thread_group=\"pool-*\"";
    assertThat(text)
        .doesNotContain("profold_client_contexts{") // not reported by this source
        .doesNotContain("profold_client_dictionary_bytes{")
        .doesNotContain("profold_client_export_reconnects_total{")
        .doesNotContain("profold_client_export_buffer_limit_bytes{");
    assertThat(text)
        .contains("profold_thread_seconds_total{class=\"compute\"," + id + "} 30.0\n")
        .contains("profold_thread_seconds_total{class=\"sync\"," + id + "} 6.0\n")
        .contains("profold_thread_class_ratio{class=\"sync\"," + id + "} 0.1\n")
        .contains("profold_thread_class_ratio{class=\"idle\"," + id + "} 0.325\n")
        .contains("profold_thread_seconds_total{class=\"cpu_wait\"," + id + "} 1.0\n")
        .contains("profold_thread_class_ratio{class=\"cpu_wait\"," + id + "} 0.075\n")
        .contains("profold_threads{" + id + "} 4.0\n")
        .contains(
            "profold_thread_cpu_seconds{instance=\"i-1\",service=\"svc\",stat=\"max\",thread_group=\"pool-*\"} 8.0\n")
        .contains(
            "profold_thread_cpu_seconds{instance=\"i-1\",service=\"svc\",stat=\"avg\",thread_group=\"pool-*\"} 5.0\n")
        .contains(
            "profold_thread_cpu_seconds{instance=\"i-1\",service=\"svc\",stat=\"min\",thread_group=\"pool-*\"} 2.0\n")
        .contains("profold_thread_cpu_imbalance_ratio{" + id + "} 0.3\n")
        .contains(
            "profold_thread_io_unobserved_seconds_total{instance=\"i-1\",service=\"svc\"} 2.5\n")
        .contains(
            "profold_thread_seconds_total{class=\"compute\",instance=\"i-1\",service=\"svc\",thread_group=\"old-*\"} 1.0\n")
        .doesNotContain(
            "thread_class_ratio{class=\"compute\",instance=\"i-1\",service=\"svc\",thread_group=\"old-*\"}");
  }

  @Test
  void aHistogramsLineNamesAreClaimedAgainstGaugesOfTheSameName() throws Exception {
    List<String> svc = List.of("svc", "a");
    // 'retry' writes the gauge profold_region_retry_interval_sum; 'retry.interval' is a histogram
    // whose _sum line has that very name.
    SeriesSnapshot retry = new SeriesSnapshot(svc, new Measure("retry", ""), state(1.0));
    SeriesSnapshot retryInterval =
        new SeriesSnapshot(svc, new Measure("retry.interval", ""), state(2.0));
    List<SeriesSnapshot> all = List.of(retryInterval, retry);

    String text = scrape(new CollectorSnapshot(List.of(scheme(all, all)), List.of()));

    String l = "{path=\"a\",service=\"svc\"}";
    // Before, both were written: two series of one name and label set, of different meaning.
    assertThat(text).contains("profold_region_retry_interval_sum" + l + " 1.0\n");
    assertThat(text.lines().filter(x -> x.startsWith("profold_region_retry_interval_sum{")))
        .hasSize(1);
    assertThat(text).doesNotContain("profold_region_retry_interval_bucket");
  }

  @Test
  void aLastIntervalSeriesTheModelRefusesIsLeftOutAndReportedNotTheScrape() throws Exception {
    // A series with fewer label values than its scheme has names: a collector bug, which
    // Prometheus's model refuses. Before, only histogram points were guarded: an interval gauge's
    // refusal failed the whole scrape.
    SeriesSnapshot good = new SeriesSnapshot(List.of("svc", "a"), TIME, state(1.0));
    SeriesSnapshot bad = new SeriesSnapshot(List.of("svc"), TIME, state(2.0));
    List<String> families = new java.util.ArrayList<>();
    PrometheusRegistry registry = new PrometheusRegistry();
    registry.register(
        new PrometheusExposition(
            () ->
                new CollectorSnapshot(
                    List.of(scheme(List.of(good), List.of(good, bad))), List.of()),
            (family, labelValues, cause) -> families.add(family)));
    ByteArrayOutputStream out = new ByteArrayOutputStream();

    PrometheusTextFormatWriter.create().write(out, registry.scrape());

    assertThat(out.toString(StandardCharsets.UTF_8))
        .contains("profold_region_time_interval_values{path=\"a\",service=\"svc\"} 1.0\n");
    assertThat(families)
        .containsExactly(
            "profold_region_time_interval_values",
            "profold_region_time_interval_sum_seconds",
            "profold_region_time_interval_min_seconds",
            "profold_region_time_interval_max_seconds",
            "profold_region_time_interval_stddev_seconds");
  }

  @Test
  void measurementsWhoseMetricNamesCollideDoNotFailTheScrape() throws Exception {
    List<String> svc = List.of("svc", "a");
    // Clients define measurements freely: these all map to a metric name already taken.
    SeriesSnapshot seconds = new SeriesSnapshot(svc, TIME, state(1.0));
    SeriesSnapshot unitless = new SeriesSnapshot(svc, new Measure("time", ""), state(2.0));
    SeriesSnapshot dotted = new SeriesSnapshot(svc, new Measure("db.bytes", ""), state(3.0));
    SeriesSnapshot underscored = new SeriesSnapshot(svc, new Measure("db_bytes", ""), state(4.0));
    SeriesSnapshot groups = new SeriesSnapshot(svc, new Measure("groups", ""), state(5.0));
    // The same name and unit sent as an integer by one client and a float by another.
    SeriesSnapshot again = new SeriesSnapshot(svc, TIME, state(6.0));
    List<SeriesSnapshot> all = List.of(seconds, unitless, dotted, underscored, groups, again);
    // A scheme named thread exposing a measurement seconds meets profold_thread_seconds_total.
    SeriesSnapshot threadSeconds = new SeriesSnapshot(svc, new Measure("seconds", ""), state(7.0));
    SourceSnapshot src =
        new SourceSnapshot(
            "svc",
            "i-1",
            "",
            "",
            "",
            1,
            1,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            0,
            java.util.Map.of(),
            ClientExport.NONE,
            List.of(
                new ThreadActivitySnapshot(
                    "pool", ClassTimes.zero(), true, 1, 1, ClassTimes.zero(), 0, 0, 0, 0, -1)),
            0,
            java.util.Map.of());
    String text =
        scrape(
            new CollectorSnapshot(
                List.of(scheme(all, all), scheme("thread", List.of(threadSeconds), List.of())),
                List.of(src)));
    // The snapshot's order follows group ids, which are reused as groups come and go: the same
    // measurement must keep the names whatever it is (a flip changed a family's HELP and series
    // from one scrape to the next).
    // (Reversed but for the two series of one measurement and label set, of which the first is
    // kept: a guard, as a scheme never makes two.)
    List<SeriesSnapshot> reversed = List.of(groups, underscored, dotted, unitless, seconds, again);
    assertThat(
            scrape(
                new CollectorSnapshot(
                    List.of(
                        scheme(reversed, reversed),
                        scheme("thread", List.of(threadSeconds), List.of())),
                    List.of(src))))
        .isEqualTo(text);
    String l = "{path=\"a\",service=\"svc\"}";
    // The first measurement, by name and unit, to claim a name keeps it; the others are left out
    // whole.
    assertThat(text)
        .contains("profold_region_time_seconds_sum" + l + " 1.0\n")
        .contains("profold_region_time_interval_values" + l + " 1.0\n")
        .doesNotContain("profold_region_time_sum")
        .contains("profold_region_db_bytes_sum" + l + " 3.0\n")
        .doesNotContain("profold_region_db_bytes_sum" + l + " 4.0")
        .contains("profold_region_groups 3.0\n")
        .doesNotContain("profold_region_groups_sum")
        .contains("profold_thread_seconds_total{class=\"compute\"")
        .doesNotContain("profold_thread_seconds_sum")
        .contains(
            "profold_thread_io_unobserved_seconds_total{instance=\"i-1\",service=\"svc\"} 0.0\n");
  }

  @Test
  void nativeBucketsUsePrometheusIndexingAndAtMostSchema8() {
    StateSnapshot st = state(1.0, 1.1, 1.2); // a narrow range: recorded at scale 9
    assertThat(st.scale()).isEqualTo(9);
    PrometheusExposition.NativeForm n = PrometheusExposition.NativeForm.of(st, 8);
    assertThat(n.schema).isEqualTo(8);
    // Prometheus bucket i at schema 8 has upper bound 2^(i/256): 1.0 is the top of bucket 0,
    // 1.1 lies in bucket ceil(log2(1.1) * 256) = 36, 1.2 in ceil(log2(1.2) * 256) = 68.
    NativeHistogramBuckets b = n.positive;
    assertThat(b.size()).isEqualTo(3);
    assertThat(b.getBucketIndex(0)).isEqualTo(0);
    assertThat(b.getBucketIndex(1)).isEqualTo(36);
    assertThat(b.getBucketIndex(2)).isEqualTo(68);
  }

  private static StateSnapshot stateAtScale(int scale, double... values) {
    Aggregate a = new Aggregate(new ExpHistogram(ExpHistogram.DEFAULT_MAX_BUCKETS, scale));
    for (double v : values) {
      a.record(v);
    }
    return StateSnapshot.of(a);
  }

  private static HistogramSnapshot.HistogramDataPointSnapshot onlyPoint(
      CollectorSnapshot snapshot, SeriesLeftOut leftOut) {
    return new PrometheusExposition(() -> snapshot, leftOut)
        .collect().stream()
            .filter(m -> m instanceof HistogramSnapshot)
            .map(m -> ((HistogramSnapshot) m).getDataPoints())
            .flatMap(List::stream)
            .findFirst()
            .orElseThrow();
  }

  private static CollectorSnapshot oneSeries(StateSnapshot st) {
    SeriesSnapshot s = new SeriesSnapshot(List.of("svc", "a"), TIME, st);
    return new CollectorSnapshot(List.of(scheme(List.of(s), List.of())), List.of());
  }

  /**
   * A client may send scales -10..20, Prometheus takes native schemas -4..8 only, and a bucket at
   * scale -5 cannot be split exactly into two of schema -4: the series keeps its classic buckets.
   */
  @Test
  void aHistogramBelowSchemaMinus4HasClassicBucketsOnly() throws Exception {
    StateSnapshot st = stateAtScale(-5, 1.0, 3.0);
    assertThat(st.scale()).isEqualTo(-5);
    String text = render(oneSeries(st));
    String l = "path=\"a\",service=\"svc\"";
    assertThat(text)
        .contains("profold_region_time_seconds_bucket{" + l + ",le=\"1.0\"} 1\n")
        .contains("profold_region_time_seconds_bucket{" + l + ",le=\"4.294967296E9\"} 2\n")
        .contains("profold_region_time_seconds_count{" + l + "} 2\n");
    assertThat(onlyPoint(oneSeries(st), SeriesLeftOut.IGNORE).hasNativeHistogramData()).isFalse();

    HistogramSnapshot.HistogramDataPointSnapshot atMinus4 =
        onlyPoint(oneSeries(stateAtScale(-4, 1.0, 3.0)), SeriesLeftOut.IGNORE);
    assertThat(atMinus4.hasNativeHistogramData()).isTrue();
    assertThat(atMinus4.getNativeSchema()).isEqualTo(-4);
  }

  /**
   * The largest values' bucket ends at 2^1024, beyond the doubles (at scale -10: every value above
   * 1), and the bound of the smallest negative values' bucket rounds to -0: neither may make a
   * classic bound that repeats +Inf or 0, which failed the whole scrape.
   */
  @Test
  void bucketsAtTheEndsOfTheDoublesCountInInfAndInZero() throws Exception {
    String l = "path=\"a\",service=\"svc\"";
    String coarse = render(oneSeries(stateAtScale(-10, 0.5, 2.0, -Double.MIN_VALUE, 0.0)));
    assertThat(coarse)
        .contains("profold_region_time_seconds_bucket{" + l + ",le=\"0.0\"} 2\n")
        .contains("profold_region_time_seconds_bucket{" + l + ",le=\"1.0\"} 3\n")
        .contains("profold_region_time_seconds_bucket{" + l + ",le=\"+Inf\"} 4\n");
    String fine = render(oneSeries(state(1.0, Double.MAX_VALUE)));
    assertThat(fine)
        .contains("profold_region_time_seconds_bucket{" + l + ",le=\"1.0\"} 1\n")
        .contains("profold_region_time_seconds_bucket{" + l + ",le=\"+Inf\"} 2\n");
  }

  /** Counts that stopped at 2^63 - 1 say how many values there were at least, not where. */
  @Test
  void aSaturatedStateHasOnlyTheInfBucket() throws Exception {
    Aggregate a = new Aggregate();
    a.mergeMoments(Long.MAX_VALUE, 1.0, 1.0, 1.0, 1.0);
    a.histogram().record(1.0, Long.MAX_VALUE);
    String text = render(oneSeries(StateSnapshot.of(a)));
    String l = "path=\"a\",service=\"svc\"";
    assertThat(text)
        .contains("profold_region_time_seconds_bucket{" + l + ",le=\"+Inf\"} 9223372036854775807\n")
        .doesNotContain("le=\"1.0\"");
  }

  /**
   * A state the model refuses (here a histogram holding more values than the count) is left out.
   */
  @Test
  void aSeriesTheModelRefusesIsLeftOutAndReportedAndTheScrapeGoesOn() throws Exception {
    Aggregate broken = new Aggregate();
    broken.mergeMoments(1, 1.0, 1.0, 1.0, 1.0);
    broken.histogram().record(1.0);
    broken.histogram().record(2.0);
    SeriesSnapshot bad = new SeriesSnapshot(List.of("svc", "bad"), TIME, StateSnapshot.of(broken));
    SeriesSnapshot good = new SeriesSnapshot(List.of("svc", "good"), TIME, state(0.5));
    CollectorSnapshot snapshot =
        new CollectorSnapshot(List.of(scheme(List.of(bad, good), List.of())), List.of());
    List<String> reported = new java.util.concurrent.CopyOnWriteArrayList<>();
    PrometheusRegistry registry = new PrometheusRegistry();
    registry.register(
        new PrometheusExposition(
            () -> snapshot,
            (family, labels, cause) ->
                reported.add(family + " " + labels + " " + cause.getMessage())));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrometheusTextFormatWriter.create().write(out, registry.scrape());
    String text = out.toString(StandardCharsets.UTF_8);

    assertThat(text)
        .contains("profold_region_time_seconds_count{path=\"good\",service=\"svc\"} 1\n")
        .doesNotContain("path=\"bad\"");
    assertThat(reported).hasSize(1);
    assertThat(reported.get(0))
        .startsWith("profold_region_time_seconds [svc, bad] ")
        .contains("cannot be negative");
  }

  @Test
  void metricNamesAreSanitized() {
    assertThat(MetricNames.sanitize("db.bytes")).isEqualTo("db_bytes");
    assertThat(MetricNames.sanitize("9lives")).isEqualTo("_9lives");
    assertThat(MetricNames.sanitize("")).isEqualTo("_");
  }
}
