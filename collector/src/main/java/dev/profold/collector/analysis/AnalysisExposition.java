package dev.profold.collector.analysis;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Analysis values in /metrics, built at scrape time: each derived value as a gauge named {@code
 * profold_<value name>} with the value's labels (context stays out: it is text for alert
 * annotations). {@link #regions} exposes {@link RegionAnalysisValues} (series bounded by {@code
 * top_nodes} per service and metric, one per service, and one per outlier instance), {@link
 * #threads} {@link ThreadRegionImbalanceValues} ({@code top_nodes} per thread group and metric).
 *
 * <p>A family whose name a scheme's measurement already takes ({@code profold_<scheme>_<m>_<unit>},
 * say a measurement {@code wait} in seconds in scheme {@code region}) is left out rather than let
 * the scrape fail on a duplicate name. Thread-safe: it keeps no state between scrapes.
 */
public final class AnalysisExposition implements MultiCollector {
  private static final Map<String, String> REGION_HELP = new LinkedHashMap<>();
  private static final Map<String, String> THREAD_HELP = new LinkedHashMap<>();

  static {
    REGION_HELP.put(
        RegionAnalysisValues.IMBALANCE,
        "Imbalance of a region node across the service's instances in the last closed interval:"
            + " max - avg of its time (avg - min for sync), seconds; top nodes per service.");
    REGION_HELP.put(
        RegionAnalysisValues.IMBALANCE_RATIO,
        "The node's imbalance over the service's runtime (largest instance total region time).");
    REGION_HELP.put(
        RegionAnalysisValues.SIGNIFICANT_IMBALANCE_RATIO,
        "region_imbalance_ratio of the significant nodes only (both HPCToolkit criteria).");
    REGION_HELP.put(
        RegionAnalysisValues.WAIT,
        "Balanced waiting of a wait (avg) or sync (min) node across the service's instances,"
            + " seconds; top nodes per service.");
    REGION_HELP.put(
        RegionAnalysisValues.CLUSTERS,
        "Clusters of the service's instances by region-time profile (K-farthest, diffRatio).");
    REGION_HELP.put(
        RegionAnalysisValues.OUTLIER,
        "1 for each instance in an outlier cluster (a small cluster apart from the largest).");
    THREAD_HELP.put(
        ThreadRegionImbalanceValues.IMBALANCE,
        "Imbalance of a region node across the threads of a thread group in the last closed"
            + " interval: max - avg of the per-thread time (avg - min for sync), seconds; top"
            + " nodes per group.");
    THREAD_HELP.put(
        ThreadRegionImbalanceValues.IMBALANCE_RATIO,
        "The node's imbalance across threads over the group's largest thread total.");
    THREAD_HELP.put(
        ThreadRegionImbalanceValues.SIGNIFICANT_IMBALANCE_RATIO,
        "thread_region_imbalance_ratio of the significant nodes only (both HPCToolkit criteria).");
    THREAD_HELP.put(
        ThreadRegionImbalanceValues.WAIT,
        "Balanced waiting of a wait (avg) or sync (min) node across the threads of a thread"
            + " group, seconds; top nodes per group.");
  }

  /**
   * What one scrape exposes.
   *
   * @param values the derived values
   * @param schemeFamilies family names the schemes' measurements take, not to be repeated
   */
  record Exposed(List<DerivedValue> values, List<String> schemeFamilies) {}

  private final Map<String, String> help;
  private final Supplier<Exposed> values;

  private AnalysisExposition(Map<String, String> help, Supplier<Exposed> values) {
    this.help = help;
    this.values = values;
  }

  /** The analysis across a service's instances. */
  public static AnalysisExposition regions(RegionAnalysisValues values) {
    return new AnalysisExposition(
        REGION_HELP,
        () -> {
          RegionAnalysisValues.Computed c = values.computed();
          return new Exposed(c.values(), c.schemeFamilies());
        });
  }

  /** The analysis across the threads of each thread group. */
  public static AnalysisExposition threads(ThreadRegionImbalanceValues values) {
    return new AnalysisExposition(THREAD_HELP, values::exposed);
  }

  @Override
  public MetricSnapshots collect() {
    Exposed c = values.get();
    Set<String> taken = new HashSet<>(c.schemeFamilies());
    Map<String, GaugeSnapshot.Builder> families = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : help.entrySet()) {
      String name = "profold_" + e.getKey();
      if (!taken.contains(name)) {
        families.put(e.getKey(), GaugeSnapshot.builder().name(name).help(e.getValue()));
      }
    }
    Set<List<Object>> seen = new HashSet<>();
    for (DerivedValue v : c.values()) {
      GaugeSnapshot.Builder b = families.get(v.name());
      if (b == null || !seen.add(List.of(v.name(), v.labels()))) {
        continue;
      }
      List<String> names = new ArrayList<>(v.labels().keySet());
      names.sort(null);
      List<String> vals = new ArrayList<>();
      for (String n : names) {
        vals.add(v.labels().get(n));
      }
      b.dataPoint(
          GaugeDataPointSnapshot.builder().labels(Labels.of(names, vals)).value(v.value()).build());
    }
    List<MetricSnapshot> out = new ArrayList<>();
    for (GaugeSnapshot.Builder b : families.values()) {
      out.add(b.build());
    }
    return new MetricSnapshots(out);
  }
}
