package dev.profold.sinks.prometheus;

import dev.profold.sinks.snapshot.ClientExport;
import dev.profold.sinks.snapshot.CollectorSnapshot;
import dev.profold.sinks.snapshot.Measure;
import dev.profold.sinks.snapshot.OverheadClass;
import dev.profold.sinks.snapshot.SchemeSnapshot;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import dev.profold.sinks.snapshot.SnapshotSource;
import dev.profold.sinks.snapshot.SourceSnapshot;
import dev.profold.sinks.snapshot.StateSnapshot;
import dev.profold.sinks.snapshot.ThreadActivitySnapshot;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.NativeHistogramBuckets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * Exposes scheme snapshots as Prometheus metric families, built at scrape time from one {@link
 * SnapshotSource} call (no Micrometer meter per data series). For a scheme {@code s} and a
 * measurement {@code m} with unit {@code u}:
 *
 * <ul>
 *   <li>{@code profold_s_m_u}: histogram of the cumulative state (count, sum, classic buckets at
 *       powers of two, and native buckets for protobuf scrapes);
 *   <li>{@code profold_s_m_interval_{values,sum_u,min_u,max_u,stddev_u}}: gauges of the last closed
 *       interval;
 * </ul>
 *
 * and per scheme {@code profold_s_groups} and {@code profold_s_interval_end_timestamp_seconds}.
 * docs/metrics.md lists them all.
 *
 * <p>Clients name measurements freely, so two of them can map to one metric name ({@code db.bytes}
 * and {@code db_bytes}; {@code time} in seconds and without a unit, whose interval gauges share
 * their names; a measurement {@code groups}), and a scheme's names can meet the fixed families
 * ({@code profold_thread_seconds} of a scheme {@code thread}). One duplicate name or label set
 * would fail the whole scrape, so names are claimed first come, first served: the fixed families
 * and every scheme's own gauges first, then each measurement with all its family names at once (and
 * its histogram's line names: {@code _bucket}, {@code _count}, {@code _sum}), in the order of their
 * names and units ({@link #MEASURE_ORDER}); a measurement any of whose names is taken is left out
 * whole, and of series with equal labels in one family the first is kept (a scheme folds one
 * measurement's values into one group per label set, integers and floats of the same name and unit
 * together, so this is a guard, not a case that occurs).
 *
 * <p>Histograms: native buckets go out only at schemas Prometheus accepts (-4..8); a histogram
 * below scale -4 keeps its classic buckets only, since its buckets cannot be split exactly into a
 * finer schema. A saturated state (count {@link Long#MAX_VALUE}: its counts stopped there) has only
 * the +Inf bucket. A series the model refuses all the same is left out of the scrape and reported
 * to a {@link SeriesLeftOut}, so that one series cannot fail the scrape.
 *
 * <p>Thread-safe: it keeps no state between scrapes.
 */
public final class PrometheusExposition implements MultiCollector {
  /**
   * Which of two measurements claims a metric name first: by name, then one with a unit before one
   * without ({@code time} in seconds before a unitless {@code time}), then by unit.
   */
  static final Comparator<Measure> MEASURE_ORDER =
      Comparator.comparing(Measure::name)
          .thenComparing(m -> m.unit() == null || m.unit().isEmpty())
          .thenComparing(m -> m.unit() == null ? "" : m.unit());

  /** Prometheus accepts native schemas -4..8. */
  private static final int MIN_NATIVE_SCHEMA = -4;

  private static final int MAX_NATIVE_SCHEMA = 8;

  /** Suffixes of every scheme's own gauges. */
  private static final String GROUPS = "_groups";

  private static final String INTERVAL_END = "_interval_end_timestamp_seconds";

  /** The families of sources and thread activity, whatever the schemes are called. */
  private static final Set<String> FIXED_NAMES =
      Set.of(
          "profold_thread_seconds",
          "profold_thread_class_ratio",
          "profold_threads",
          "profold_thread_cpu_seconds",
          "profold_thread_cpu_imbalance_ratio",
          "profold_thread_io_unobserved_seconds",
          "profold_source_info",
          "profold_source_start_time_seconds",
          "profold_source_missing_deltas",
          "profold_client_cpu_seconds",
          "profold_client_events_dropped",
          "profold_client_misuse",
          "profold_client_memory_bytes",
          "profold_client_contexts",
          "profold_client_contexts_limit",
          "profold_client_dictionary_bytes",
          "profold_client_dictionary_bytes_limit",
          "profold_client_export_reconnects",
          "profold_client_export_deltas_merged",
          "profold_client_export_buffered_bytes",
          "profold_client_export_buffer_limit_bytes");

  private final SnapshotSource source;
  private final SeriesLeftOut leftOut;

  /** An exposition of {@code source} that ignores series the model refuses (leaving them out). */
  public PrometheusExposition(SnapshotSource source) {
    this(source, SeriesLeftOut.IGNORE);
  }

  /** An exposition of {@code source} that tells {@code leftOut} of series the model refuses. */
  public PrometheusExposition(SnapshotSource source, SeriesLeftOut leftOut) {
    this.source = source;
    this.leftOut = leftOut;
  }

  @Override
  public MetricSnapshots collect() {
    List<MetricSnapshot> out = new ArrayList<>();
    CollectorSnapshot snapshot = source.snapshot();
    Set<String> taken = new HashSet<>(FIXED_NAMES);
    for (String fixed : FIXED_NAMES) { // the lines of the counters among them
      taken.add(fixed + "_total");
    }
    for (SchemeSnapshot scheme : snapshot.schemes()) {
      taken.add(prefix(scheme) + GROUPS);
      taken.add(prefix(scheme) + INTERVAL_END);
    }
    for (SchemeSnapshot scheme : snapshot.schemes()) {
      addScheme(scheme, taken, out, leftOut);
    }
    addSources(snapshot.sources(), out);
    addExport(snapshot.sources(), out);
    addThreadActivity(snapshot.sources(), out);
    return new MetricSnapshots(out);
  }

  /**
   * Per source and thread group: {@code profold_thread_seconds_total{class}} (cumulative), and for
   * groups in the source's last delta {@code profold_thread_class_ratio{class}}, {@code
   * profold_threads}, {@code profold_thread_cpu_seconds{stat=min|avg|max}} and {@code
   * profold_thread_cpu_imbalance_ratio} of that interval; per source that reports it, {@code
   * profold_thread_io_unobserved_seconds_total}.
   */
  private static void addThreadActivity(List<SourceSnapshot> sources, List<MetricSnapshot> out) {
    CounterSnapshot.Builder seconds =
        CounterSnapshot.builder()
            .name("profold_thread_seconds")
            .help(
                "Thread time of a thread group by overhead class (compute, sync, wait, io,"
                    + " runtime, thread_mgmt, cpu_wait, idle), cumulative; the classes add up to the"
                    + " threads' wall time.");
    GaugeSnapshot.Builder ratio =
        GaugeSnapshot.builder()
            .name("profold_thread_class_ratio")
            .help("Share of a thread group's thread time in each class, last reported interval.");
    GaugeSnapshot.Builder threads =
        GaugeSnapshot.builder()
            .name("profold_threads")
            .help("Threads of the thread group alive at some time in the last reported interval.");
    GaugeSnapshot.Builder cpu =
        GaugeSnapshot.builder()
            .name("profold_thread_cpu_seconds")
            .help(
                "CPU time of the thread group's least busy (min), average (avg) and busiest"
                    + " (max) thread in the last reported interval.");
    GaugeSnapshot.Builder imbalance =
        GaugeSnapshot.builder()
            .name("profold_thread_cpu_imbalance_ratio")
            .help(
                "Computation imbalance of the thread group in the last reported interval: (max"
                    + " - avg) of per-thread CPU time over the interval's length.");
    CounterSnapshot.Builder ioUnobserved =
        CounterSnapshot.builder()
            .name("profold_thread_io_unobserved_seconds")
            .help(
                "Wall time during which the source did not observe I/O waits while it observed"
                    + " the other classes (its agent's I/O events were off), cumulative; I/O waits"
                    + " in that time count as idle.");
    boolean any = false;
    boolean anyIo = false;
    for (SourceSnapshot s : sources) {
      if (s.ioUnobservedNanos() >= 0) {
        anyIo = true;
        ioUnobserved.dataPoint(
            CounterDataPointSnapshot.builder()
                .labels(Labels.of("service", s.service(), "instance", s.instance()))
                .value(s.ioUnobservedNanos() / 1e9)
                .build());
      }
      for (ThreadActivitySnapshot a : s.threadActivity()) {
        any = true;
        Labels id =
            Labels.of("service", s.service(), "instance", s.instance(), "thread_group", a.group());
        for (OverheadClass c : OverheadClass.values()) {
          Labels l = id.add("class", c.label());
          seconds.dataPoint(
              CounterDataPointSnapshot.builder().labels(l).value(a.total(c) / 1e9).build());
          if (a.current()) {
            ratio.dataPoint(GaugeDataPointSnapshot.builder().labels(l).value(a.share(c)).build());
          }
        }
        if (a.current()) {
          threads.dataPoint(GaugeDataPointSnapshot.builder().labels(id).value(a.threads()).build());
          cpu.dataPoint(point(id.add("stat", "min"), a.cpuMinNanos() / 1e9));
          cpu.dataPoint(point(id.add("stat", "avg"), a.cpuAvgNanos() / 1e9));
          cpu.dataPoint(point(id.add("stat", "max"), a.cpuMaxNanos() / 1e9));
          imbalance.dataPoint(point(id, a.imbalance()));
        }
      }
    }
    if (any) {
      out.add(seconds.build());
      out.add(ratio.build());
      out.add(threads.build());
      out.add(cpu.build());
      out.add(imbalance.build());
    }
    if (anyIo) {
      out.add(ioUnobserved.build());
    }
  }

  /**
   * The labels a source gave itself, each name prefixed with {@code label_}, so that none can
   * collide with the labels Profold sets ({@code service}, {@code host}, ...).
   */
  static Labels sourceLabels(Map<String, String> labels) {
    Labels out = Labels.EMPTY;
    for (Map.Entry<String, String> e : new java.util.TreeMap<>(labels).entrySet()) {
      out = out.add(SOURCE_LABEL_PREFIX + e.getKey(), e.getValue());
    }
    return out;
  }

  /** What the names of a source's own labels start with on {@code profold_source_info}. */
  public static final String SOURCE_LABEL_PREFIX = "label_";

  private static GaugeDataPointSnapshot point(Labels labels, double value) {
    return GaugeDataPointSnapshot.builder().labels(labels).value(value).build();
  }

  private static void addSources(List<SourceSnapshot> sources, List<MetricSnapshot> out) {
    if (sources.isEmpty()) {
      return;
    }
    GaugeSnapshot.Builder info =
        GaugeSnapshot.builder()
            .name("profold_source_info")
            .help("Live sources (one per service instance), with their host and versions.");
    GaugeSnapshot.Builder start =
        GaugeSnapshot.builder()
            .name("profold_source_start_time_seconds")
            .help("Start time of the source's process (its current incarnation), unix seconds.");
    GaugeSnapshot.Builder missing =
        GaugeSnapshot.builder()
            .name("profold_source_missing_deltas")
            .help("Deltas of the current incarnation never received (sequence gaps).");
    CounterSnapshot.Builder cpu =
        CounterSnapshot.builder()
            .name("profold_client_cpu_seconds")
            .help("CPU time the source's profiling library reported spending on itself.");
    CounterSnapshot.Builder dropped =
        CounterSnapshot.builder()
            .name("profold_client_events_dropped")
            .help("Events the source's profiling library reported it could not record.");
    CounterSnapshot.Builder misuse =
        CounterSnapshot.builder()
            .name("profold_client_misuse")
            .help(
                "Times the source's profiling library reported its API misused or one of its"
                    + " limits biting, by kind (docs/client.md, Misuse and limits).");
    GaugeSnapshot.Builder held =
        GaugeSnapshot.builder()
            .name("profold_client_memory_bytes")
            .help("Memory the source's profiling library last reported holding.");
    GaugeSnapshot.Builder contexts =
        GaugeSnapshot.builder()
            .name("profold_client_contexts")
            .help(
                "Contexts (region paths with their scoped attributes) the source's profiling"
                    + " library last reported in use; above half the limit the least recently"
                    + " used age out, and beyond the limit new ones are recorded under"
                    + " profold.overflow.");
    GaugeSnapshot.Builder contextsLimit =
        GaugeSnapshot.builder()
            .name("profold_client_contexts_limit")
            .help("The source's limit of contexts (PROFOLD_MAX_CONTEXTS).");
    GaugeSnapshot.Builder dictionary =
        GaugeSnapshot.builder()
            .name("profold_client_dictionary_bytes")
            .help(
                "Bytes of dictionary definitions (strings and call paths) the source's profiling"
                    + " library last reported holding; above half the limit it frees what nothing"
                    + " uses, and near the limit new ones are sent as profold.overflow.");
    GaugeSnapshot.Builder dictionaryLimit =
        GaugeSnapshot.builder()
            .name("profold_client_dictionary_bytes_limit")
            .help("The source's bound of its dictionary, bytes.");
    for (SourceSnapshot s : sources) {
      Labels id = Labels.of("service", s.service(), "instance", s.instance());
      if (s.clientDictionaryBytesLimit() > 0) { // reported
        dictionary.dataPoint(
            GaugeDataPointSnapshot.builder()
                .labels(id)
                .value((double) s.clientDictionaryBytes())
                .build());
        dictionaryLimit.dataPoint(
            GaugeDataPointSnapshot.builder()
                .labels(id)
                .value((double) s.clientDictionaryBytesLimit())
                .build());
      }
      if (s.clientContextsLimit() > 0) { // reported
        contexts.dataPoint(
            GaugeDataPointSnapshot.builder().labels(id).value((double) s.clientContexts()).build());
        contextsLimit.dataPoint(
            GaugeDataPointSnapshot.builder()
                .labels(id)
                .value((double) s.clientContextsLimit())
                .build());
      }
      info.dataPoint(
          GaugeDataPointSnapshot.builder()
              .labels(
                  id.merge(
                          Labels.of(
                              "host", s.host(),
                              "runtime_version", s.runtimeVersion(),
                              "sdk_version", s.sdkVersion()))
                      .merge(sourceLabels(s.labels())))
              .value(1)
              .build());
      start.dataPoint(
          GaugeDataPointSnapshot.builder()
              .labels(id)
              .value(s.processStartUnixNanos() / 1e9)
              .build());
      missing.dataPoint(
          GaugeDataPointSnapshot.builder().labels(id).value((double) s.missingDeltas()).build());
      cpu.dataPoint(
          CounterDataPointSnapshot.builder().labels(id).value(s.clientCpuNanos() / 1e9).build());
      dropped.dataPoint(
          CounterDataPointSnapshot.builder()
              .labels(id)
              .value((double) s.clientEventsDropped())
              .build());
      held.dataPoint(
          GaugeDataPointSnapshot.builder().labels(id).value((double) s.clientBytesHeld()).build());
      s.clientMisuse()
          .forEach(
              (kind, n) ->
                  misuse.dataPoint(
                      CounterDataPointSnapshot.builder()
                          .labels(id.merge(Labels.of("kind", kind)))
                          .value((double) n)
                          .build()));
    }
    out.add(info.build());
    out.add(start.build());
    out.add(missing.build());
    out.add(cpu.build());
    out.add(dropped.build());
    out.add(misuse.build());
    out.add(held.build());
    out.add(contexts.build());
    out.add(contextsLimit.build());
    out.add(dictionary.build());
    out.add(dictionaryLimit.build());
  }

  /** How the sources' export went, for those that report it. */
  private static void addExport(List<SourceSnapshot> sources, List<MetricSnapshot> out) {
    CounterSnapshot.Builder reconnects =
        CounterSnapshot.builder()
            .name("profold_client_export_reconnects")
            .help("Push streams the source opened after an earlier one failed.");
    CounterSnapshot.Builder merged =
        CounterSnapshot.builder()
            .name("profold_client_export_deltas_merged")
            .help(
                "Deltas the source merged into older ones because its buffer of unacknowledged"
                    + " deltas was full: intervals whose resolution was lost (their totals were"
                    + " kept).");
    GaugeSnapshot.Builder buffered =
        GaugeSnapshot.builder()
            .name("profold_client_export_buffered_bytes")
            .help("Bytes of deltas the source last reported holding unacknowledged.");
    GaugeSnapshot.Builder limit =
        GaugeSnapshot.builder()
            .name("profold_client_export_buffer_limit_bytes")
            .help(
                "The source's bound of its unacknowledged deltas (PROFOLD_MAX_BUFFER_BYTES);"
                    + " beyond it the oldest are merged.");
    for (SourceSnapshot s : sources) {
      ClientExport e = s.clientExport();
      if (!e.reported()) {
        continue;
      }
      Labels id = Labels.of("service", s.service(), "instance", s.instance());
      reconnects.dataPoint(
          CounterDataPointSnapshot.builder().labels(id).value((double) e.reconnects()).build());
      merged.dataPoint(
          CounterDataPointSnapshot.builder().labels(id).value((double) e.deltasMerged()).build());
      buffered.dataPoint(
          GaugeDataPointSnapshot.builder().labels(id).value((double) e.bufferedBytes()).build());
      limit.dataPoint(
          GaugeDataPointSnapshot.builder().labels(id).value((double) e.bufferLimitBytes()).build());
    }
    out.add(reconnects.build());
    out.add(merged.build());
    out.add(buffered.build());
    out.add(limit.build());
  }

  /**
   * The suffixes of the lines a histogram of this exposition writes in the text formats, names it
   * takes besides its own (no created timestamp is set, so no {@code _created}).
   */
  public static final List<String> HISTOGRAM_LINES = List.of("_bucket", "_count", "_sum");

  private static String prefix(SchemeSnapshot s) {
    return "profold_" + MetricNames.sanitize(s.scheme());
  }

  /** The histogram's name for measurement {@code m} of the scheme with {@code prefix}. */
  private static String histogramName(String prefix, Measure m) {
    return prefix
        + "_"
        + MetricNames.sanitize(m.name())
        + (m.unit().isEmpty() ? "" : "_" + MetricNames.sanitize(m.unit()));
  }

  /** The interval gauges' names for {@code m}: values, sum, min, max, stddev. */
  private static List<String> gaugeNames(String prefix, Measure m) {
    String base = prefix + "_" + MetricNames.sanitize(m.name()) + "_interval_";
    String unit = m.unit().isEmpty() ? "" : "_" + MetricNames.sanitize(m.unit());
    return List.of(
        base + "values",
        base + "sum" + unit,
        base + "min" + unit,
        base + "max" + unit,
        base + "stddev" + unit);
  }

  /**
   * Adds scheme {@code s}'s families whose names are not in {@code taken}, and claims them (see the
   * class comment).
   */
  private static void addScheme(
      SchemeSnapshot s, Set<String> taken, List<MetricSnapshot> out, SeriesLeftOut leftOut) {
    String prefix = prefix(s);
    out.add(
        GaugeSnapshot.builder()
            .name(prefix + GROUPS)
            .help(
                "Groups held by scheme "
                    + s.scheme()
                    + ": those its cardinality limit applies to, and its overflow groups (one per"
                    + " measurement).")
            .dataPoint(GaugeDataPointSnapshot.builder().value(s.groups()).build())
            .build());
    if (s.lastIntervalEndUnixNanos() > 0) {
      out.add(
          GaugeSnapshot.builder()
              .name(prefix + INTERVAL_END)
              .help("End of the last closed interval of scheme " + s.scheme() + ", unix seconds.")
              .dataPoint(
                  GaugeDataPointSnapshot.builder()
                      .value(s.lastIntervalEndUnixNanos() / 1e9)
                      .build())
              .build());
    }
    Map<Measure, List<SeriesSnapshot>> cumulative = byMeasure(s.cumulative());
    Map<Measure, List<SeriesSnapshot>> interval = byMeasure(s.lastInterval());
    Set<Measure> exposed = new HashSet<>();
    // In the order of names and units, not of the snapshot (which follows group ids, reused as
    // groups come and go): of two colliding measurements the same one keeps the names, scrape
    // after scrape, while both have series.
    Set<Measure> all = new TreeSet<>(MEASURE_ORDER);
    all.addAll(cumulative.keySet());
    all.addAll(interval.keySet());
    for (Measure m : all) {
      List<String> names = new ArrayList<>(gaugeNames(prefix, m));
      String histogram = histogramName(prefix, m);
      names.add(histogram);
      // The histogram's lines have names of their own, which a gauge's family name can meet
      // ('retry' writes profold_s_retry_interval_sum{...}, 'retry.interval' a histogram whose
      // _sum line is that name): they are claimed with it.
      for (String line : HISTOGRAM_LINES) {
        names.add(histogram + line);
      }
      if (names.stream().noneMatch(taken::contains)) {
        taken.addAll(names);
        exposed.add(m);
      }
    }
    for (Map.Entry<Measure, List<SeriesSnapshot>> e : cumulative.entrySet()) {
      if (exposed.contains(e.getKey())) {
        out.add(histogram(prefix, s, e.getKey(), e.getValue(), leftOut));
      }
    }
    for (Map.Entry<Measure, List<SeriesSnapshot>> e : interval.entrySet()) {
      Measure m = e.getKey();
      if (!exposed.contains(m)) {
        continue;
      }
      List<String> names = gaugeNames(prefix, m);
      String what = "measurement " + m.name() + " per group of scheme " + s.scheme();
      List<SeriesSnapshot> series = e.getValue();
      out.add(
          gauge(
              names.get(0),
              "Number of values of " + what + " in the last closed interval.",
              s,
              series,
              StateSnapshot::count,
              leftOut));
      out.add(
          gauge(
              names.get(1),
              "Sum of " + what + " in the last closed interval.",
              s,
              series,
              StateSnapshot::sum,
              leftOut));
      out.add(
          gauge(
              names.get(2),
              "Smallest value of " + what + " in the last closed interval.",
              s,
              series,
              StateSnapshot::min,
              leftOut));
      out.add(
          gauge(
              names.get(3),
              "Largest value of " + what + " in the last closed interval.",
              s,
              series,
              StateSnapshot::max,
              leftOut));
      out.add(
          gauge(
              names.get(4),
              "Standard deviation of " + what + " in the last closed interval.",
              s,
              series,
              StateSnapshot::stddev,
              leftOut));
    }
  }

  /** The series by measure, the first of each label set only (see the class comment). */
  private static Map<Measure, List<SeriesSnapshot>> byMeasure(List<SeriesSnapshot> series) {
    Map<Measure, List<SeriesSnapshot>> out = new LinkedHashMap<>();
    Set<List<Object>> seen = new HashSet<>();
    Function<Measure, List<SeriesSnapshot>> fresh = k -> new ArrayList<>();
    for (SeriesSnapshot s : series) {
      if (seen.add(List.of(s.measure(), s.labelValues()))) {
        out.computeIfAbsent(s.measure(), fresh).add(s);
      }
    }
    return out;
  }

  private static Labels labels(SchemeSnapshot s, SeriesSnapshot series) {
    return Labels.of(s.labelNames(), series.labelValues());
  }

  private static GaugeSnapshot gauge(
      String name,
      String help,
      SchemeSnapshot s,
      List<SeriesSnapshot> series,
      ToDoubleFunction<StateSnapshot> value,
      SeriesLeftOut leftOut) {
    GaugeSnapshot.Builder b = GaugeSnapshot.builder().name(name).help(help);
    for (SeriesSnapshot x : series) {
      try {
        b.dataPoint(
            GaugeDataPointSnapshot.builder()
                .labels(labels(s, x))
                .value(value.applyAsDouble(x.state()))
                .build());
      } catch (IllegalArgumentException e) { // as a histogram's point: one cannot fail the scrape
        leftOut.leftOut(name, x.labelValues(), e);
      }
    }
    return b.build();
  }

  private static HistogramSnapshot histogram(
      String prefix,
      SchemeSnapshot s,
      Measure m,
      List<SeriesSnapshot> series,
      SeriesLeftOut leftOut) {
    String name = histogramName(prefix, m);
    HistogramSnapshot.Builder b =
        HistogramSnapshot.builder()
            .name(name)
            .help(
                "Distribution of measurement "
                    + m.name()
                    + " per group of scheme "
                    + s.scheme()
                    + ", cumulative since the group was made (grouped by instance: since the"
                    + " instance's process started).");
    for (SeriesSnapshot x : series) {
      try {
        b.dataPoint(histogramPoint(s, x));
      } catch (IllegalArgumentException e) {
        leftOut.leftOut(name, x.labelValues(), e);
      }
    }
    return b.build();
  }

  /**
   * The data point of series {@code x}.
   *
   * @throws IllegalArgumentException when Prometheus's model refuses it
   */
  private static HistogramDataPointSnapshot histogramPoint(SchemeSnapshot s, SeriesSnapshot x) {
    StateSnapshot st = x.state();
    HistogramDataPointSnapshot.Builder p =
        HistogramDataPointSnapshot.builder().labels(labels(s, x)).sum(st.sum());
    if (st.count() == Long.MAX_VALUE) { // saturated: how many of them are in which bucket is lost
      return p.classicHistogramBuckets(
              ClassicHistogramBuckets.of(
                  List.of(Double.POSITIVE_INFINITY), List.of(Long.MAX_VALUE)))
          .build();
    }
    p.classicHistogramBuckets(ClassicBuckets.of(st));
    if (st.hasHistogram()
        && st.histogramTotal() == st.count()
        && st.scale() >= MIN_NATIVE_SCHEMA) { // a lower scale cannot be made finer exactly
      NativeForm n = NativeForm.of(st, MAX_NATIVE_SCHEMA);
      p.nativeSchema(n.schema)
          .nativeZeroCount(st.zeroCount())
          .nativeZeroThreshold(0.0)
          .nativeBucketsForPositiveValues(n.positive)
          .nativeBucketsForNegativeValues(n.negative);
    }
    return p.build();
  }

  /** Native-histogram buckets (Prometheus indexing: bucket i has upper bound base^i). */
  static final class NativeForm {
    final int schema;
    final NativeHistogramBuckets positive;
    final NativeHistogramBuckets negative;

    private NativeForm(
        int schema, NativeHistogramBuckets positive, NativeHistogramBuckets negative) {
      this.schema = schema;
      this.positive = positive;
      this.negative = negative;
    }

    static NativeForm of(StateSnapshot st, int maxSchema) {
      int schema = Math.min(st.scale(), maxSchema);
      int shift = st.scale() - schema;
      return new NativeForm(
          schema,
          buckets(st.positiveOffset(), st.positiveCounts(), shift),
          buckets(st.negativeOffset(), st.negativeCounts(), shift));
    }

    private static NativeHistogramBuckets buckets(int offset, long[] counts, int shift) {
      Map<Integer, Long> merged = new java.util.TreeMap<>();
      for (int k = 0; k < counts.length; k++) {
        if (counts[k] != 0) {
          // OpenTelemetry index i covers (base^i, base^(i+1)]: Prometheus calls it i + 1.
          merged.merge(((offset + k) >> shift) + 1, counts[k], Long::sum);
        }
      }
      int[] idx = new int[merged.size()];
      long[] cnt = new long[merged.size()];
      int j = 0;
      for (Map.Entry<Integer, Long> e : merged.entrySet()) {
        idx[j] = e.getKey();
        cnt[j] = e.getValue();
        j++;
      }
      return NativeHistogramBuckets.of(idx, cnt);
    }
  }

  /**
   * Classic cumulative buckets at powers of two, lossless from the exponential buckets, except at
   * the ends of the doubles: a bucket whose bound is 2^1024 (no double) counts in +Inf, and a
   * negative bucket whose bound rounds to -0 counts in 0.
   */
  static final class ClassicBuckets {
    private ClassicBuckets() {}

    static ClassicHistogramBuckets of(StateSnapshot st) {
      List<Double> bounds = new ArrayList<>();
      List<Long> counts = new ArrayList<>();
      int shift = Math.max(0, st.scale()); // down to scale 0: bucket i = (2^i, 2^(i+1)]
      int coarse = st.scale() < 0 ? -st.scale() : 0;
      if (st.hasHistogram()) {
        long[] neg = scaleZero(st.negativeOffset(), st.negativeCounts(), shift);
        int negLo = (st.negativeOffset() >> shift);
        long belowZero = 0; // of buckets whose bound -2^i rounds to -0
        // Negative bucket i holds v in [-2^(i+1), -2^i): most negative first.
        for (int k = neg.length - 1; k >= 0; k--) {
          double bound = -boundary(negLo + k, coarse);
          if (bound == 0.0) {
            belowZero += neg[k];
          } else {
            bounds.add(bound);
            counts.add(neg[k]);
          }
        }
        if (st.zeroCount() > 0 || neg.length > 0) {
          bounds.add(0.0);
          counts.add(st.zeroCount() + belowZero);
        }
        long[] pos = scaleZero(st.positiveOffset(), st.positiveCounts(), shift);
        int posLo = (st.positiveOffset() >> shift);
        long beyond = 0; // of buckets whose bound 2^1024 is no double
        for (int k = 0; k < pos.length; k++) {
          double bound = boundary(posLo + k + 1, coarse);
          if (bound == Double.POSITIVE_INFINITY) {
            beyond += pos[k];
          } else {
            bounds.add(bound);
            counts.add(pos[k]);
          }
        }
        // Values merged without a histogram are only known to be somewhere: +Inf.
        bounds.add(Double.POSITIVE_INFINITY);
        counts.add(st.count() - st.histogramTotal() + beyond);
      } else {
        bounds.add(Double.POSITIVE_INFINITY);
        counts.add(st.count());
      }
      return ClassicHistogramBuckets.of(bounds, counts);
    }

    /** 2^(index * 2^coarse): the boundary at a scale of {@code -coarse} (<= 0). */
    private static double boundary(int index, int coarse) {
      long exponent = (long) index << coarse; // beyond +-2^11 the result is 0 or infinite anyway
      return Math.scalb(1.0, (int) Math.max(-4096, Math.min(4096, exponent)));
    }

    /** Dense counts at scale min(scale, 0), from index (offset >> shift) on. */
    private static long[] scaleZero(int offset, long[] counts, int shift) {
      if (counts.length == 0) {
        return counts;
      }
      int lo = offset >> shift;
      int hi = (offset + counts.length - 1) >> shift;
      long[] out = new long[hi - lo + 1];
      for (int k = 0; k < counts.length; k++) {
        out[((offset + k) >> shift) - lo] += counts[k];
      }
      return out;
    }
  }
}
