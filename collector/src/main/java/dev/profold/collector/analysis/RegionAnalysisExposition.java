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

/**
 * The region analysis in /metrics, built at scrape time from {@link RegionAnalysisValues}: each
 * derived value as a gauge named {@code profold_<value name>} with the value's labels (context
 * stays out: it is text for alert annotations). Series per scrape are bounded by {@code top_nodes}
 * per service and metric, one per service, and one per outlier instance.
 *
 * <p>A family whose name a scheme's measurement already takes ({@code profold_<scheme>_<m>_<unit>},
 * say a measurement {@code wait} in seconds in scheme {@code region}) is left out rather than let
 * the scrape fail on a duplicate name. Thread-safe: it keeps no state between scrapes.
 */
public final class RegionAnalysisExposition implements MultiCollector {
  private static final Map<String, String> HELP = new LinkedHashMap<>();

  static {
    HELP.put(
        RegionAnalysisValues.IMBALANCE,
        "Imbalance of a region node across the service's instances in the last closed interval:"
            + " max - avg of its time (avg - min for sync), seconds; top nodes per service.");
    HELP.put(
        RegionAnalysisValues.IMBALANCE_RATIO,
        "The node's imbalance over the service's runtime (largest instance total region time).");
    HELP.put(
        RegionAnalysisValues.WAIT,
        "Balanced waiting of a wait (avg) or sync (min) node across the service's instances,"
            + " seconds; top nodes per service.");
    HELP.put(
        RegionAnalysisValues.CLUSTERS,
        "Clusters of the service's instances by region-time profile (K-farthest, diffRatio).");
    HELP.put(
        RegionAnalysisValues.OUTLIER,
        "1 for each instance in an outlier cluster (a small cluster apart from the largest).");
  }

  private final RegionAnalysisValues values;

  public RegionAnalysisExposition(RegionAnalysisValues values) {
    this.values = values;
  }

  @Override
  public MetricSnapshots collect() {
    RegionAnalysisValues.Computed c = values.computed();
    Set<String> taken = new HashSet<>(c.schemeFamilies());
    Map<String, GaugeSnapshot.Builder> families = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : HELP.entrySet()) {
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
