package dev.profold.collector.analysis;

import dev.profold.collector.analysis.InstanceClusters.Cluster;
import dev.profold.collector.analysis.RegionImbalance.NodeImbalance;
import dev.profold.collector.analysis.ServiceProfile.Node;
import dev.profold.collector.fold.FoldEngine;
import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.sinks.prometheus.MetricNames;
import dev.profold.sinks.prometheus.PrometheusExposition;
import dev.profold.sinks.snapshot.CollectorSnapshot;
import dev.profold.sinks.snapshot.Measure;
import dev.profold.sinks.snapshot.SchemeSnapshot;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import dev.profold.sinks.snapshot.SnapshotSource;
import java.math.BigDecimal;
import java.math.MathContext;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.ToDoubleFunction;

/**
 * Derived values from the built-in {@code region} scheme's last closed interval, per service with
 * at least two live instances (docs/imbalance.md):
 *
 * <ul>
 *   <li>{@code region_imbalance_seconds{service, path, kind}}: imb(N) across the instances, for the
 *       {@code top_nodes} nodes with the most imbalance;
 *   <li>{@code region_imbalance_ratio{service, path, kind}}: imb(N) / runtime, same nodes;
 *   <li>{@code region_significant_imbalance_ratio{service, path, kind}}: the same ratio for the
 *       {@code top_nodes} significant nodes with the most imbalance only (so that a rule can say
 *       "any significant node above 10% of runtime");
 *   <li>{@code region_wait_seconds{service, path, kind}}: wait(N), for the {@code top_nodes} wait
 *       and sync nodes with the most;
 *   <li>{@code service_instance_clusters{service}}: the number of instance clusters;
 *   <li>{@code instance_outlier{service, instance}}: 1 for each instance in an outlier cluster.
 * </ul>
 *
 * Node values carry context {@code min}, {@code avg}, {@code max} (seconds), {@code
 * slowest_instance}, {@code fastest_instance}, {@code significant} ({@code true}/{@code false}),
 * {@code sum_imbalance} and {@code category}; clusters carry {@code cluster_sizes}; outliers {@code
 * cluster_size} and {@code separating_paths}. See {@link RegionImbalance} and {@link
 * InstanceClusters} for the definitions.
 *
 * <p>Computed from one snapshot once per closed interval of the scheme. Thread-safe.
 */
public final class RegionAnalysisValues implements DerivedValues {
  public static final String IMBALANCE = "region_imbalance_seconds";
  public static final String IMBALANCE_RATIO = "region_imbalance_ratio";
  public static final String SIGNIFICANT_IMBALANCE_RATIO = "region_significant_imbalance_ratio";
  public static final String WAIT = "region_wait_seconds";
  public static final String CLUSTERS = "service_instance_clusters";
  public static final String OUTLIER = "instance_outlier";

  private final SnapshotSource source;
  private final AnalysisSpec spec;
  private final Object lock = new Object();
  private volatile Computed last = new Computed(-1, 0, "", List.of(), List.of());

  /**
   * What one computation produced.
   *
   * @param endNanos end of the scheme's last closed interval it was computed from (-1: none)
   * @param series how many series that interval had
   * @param query the scheme's query then
   * @param values the derived values
   * @param schemeFamilies base names of the schemes' measurement families ({@code
   *     profold_<scheme>_<measurement>[_<unit>]}), which the exposition must not repeat
   */
  record Computed(
      long endNanos,
      int series,
      String query,
      List<DerivedValue> values,
      List<String> schemeFamilies) {}

  public RegionAnalysisValues(SnapshotSource source, AnalysisSpec spec) {
    this.source = source;
    this.spec = spec;
  }

  @Override
  public List<DerivedValue> current() {
    return computed().values();
  }

  /** The values of the last closed interval, recomputed when it changed. */
  Computed computed() {
    CollectorSnapshot snapshot = source.snapshot();
    SchemeSnapshot region = null;
    for (SchemeSnapshot s : snapshot.schemes()) {
      if (s.scheme().equals(SchemeDefinition.BUILT_IN)) {
        region = s;
      }
    }
    if (region == null) {
      return new Computed(-1, 0, "", List.of(), families(snapshot));
    }
    // One computation at a time: a scrape and an alert evaluation at an interval's end (or a
    // scrape retried after a timeout) wait for the one under way and take its values.
    synchronized (lock) {
      return computed(snapshot, region);
    }
  }

  private Computed computed(CollectorSnapshot snapshot, SchemeSnapshot region) {
    Computed c = last;
    // A closed interval does not change (late data goes to cumulative state only): same end,
    // size and query, same values. A snapshot older than the last computed keeps the newer.
    if (c.query().equals(region.query())
        && ((c.endNanos() == region.lastIntervalEndUnixNanos()
                && c.series() == region.lastInterval().size())
            || region.lastIntervalEndUnixNanos() < c.endNanos())) {
      // Scheme families can change with every delta (a new measurement): always current.
      return new Computed(c.endNanos(), c.series(), c.query(), c.values(), families(snapshot));
    }
    List<DerivedValue> out = new ArrayList<>();
    boolean incomplete = overflowed(region);
    for (ServiceProfile p : ServiceProfile.fromRegionScheme(region).values()) {
      if (p.instances().size() >= 2) {
        Guarded.add("service " + p.service(), own -> analyse(p, own, incomplete), out);
      }
    }
    if (incomplete) {
      out.replaceAll(RegionAnalysisValues::markedIncomplete);
    }
    c =
        new Computed(
            region.lastIntervalEndUnixNanos(),
            region.lastInterval().size(),
            region.query(),
            List.copyOf(out),
            families(snapshot));
    last = c;
    return c;
  }

  /**
   * Whether the interval holds the scheme's overflow group: series beyond its cardinality limit,
   * whose service, instance and path are lost, so any service's profile may lack some of its times.
   */
  private static boolean overflowed(SchemeSnapshot region) {
    int service = region.labelNames().indexOf(SchemeDefinition.SERVICE);
    for (SeriesSnapshot s : region.lastInterval()) {
      if (service >= 0 && s.labelValues().get(service).equals(FoldEngine.OVERFLOW)) {
        return true;
      }
    }
    return false;
  }

  /** {@code v} with context {@code incomplete=true} (see {@link #overflowed}). */
  private static DerivedValue markedIncomplete(DerivedValue v) {
    Map<String, String> context = new java.util.HashMap<>(v.context());
    context.put("incomplete", "true");
    return new DerivedValue(v.name(), v.labels(), v.value(), context);
  }

  /**
   * The values of service {@code p}; without outliers when {@code incomplete}: an instance whose
   * series went to the overflow group would look unlike the others for want of them.
   */
  private void analyse(ServiceProfile p, List<DerivedValue> out, boolean incomplete) {
    String service = p.service();
    RegionImbalance.Result r =
        RegionImbalance.analyse(p, spec.imbalanceRuntimeShare(), spec.imbalanceLeafShare());
    for (NodeImbalance n : top(r.nodes(), NodeImbalance::imbalance, false, spec.topNodes())) {
      Map<String, String> labels = nodeLabels(service, n.node());
      Map<String, String> context = context(n);
      out.add(new DerivedValue(IMBALANCE, labels, n.imbalance(), context));
      out.add(new DerivedValue(IMBALANCE_RATIO, labels, n.runtimeShare(), context));
    }
    for (NodeImbalance n :
        top(significant(r.nodes()), NodeImbalance::imbalance, false, spec.topNodes())) {
      out.add(
          new DerivedValue(
              SIGNIFICANT_IMBALANCE_RATIO,
              nodeLabels(service, n.node()),
              n.runtimeShare(),
              context(n)));
    }
    for (NodeImbalance n : top(r.nodes(), NodeImbalance::waiting, true, spec.topNodes())) {
      out.add(new DerivedValue(WAIT, nodeLabels(service, n.node()), n.waiting(), context(n)));
    }
    InstanceClusters clusters = InstanceClusters.of(p);
    List<String> sizes = new ArrayList<>();
    for (Cluster c : clusters.clusters()) {
      sizes.add(Integer.toString(c.size()));
    }
    out.add(
        new DerivedValue(
            CLUSTERS,
            Map.of("service", service),
            clusters.clusters().size(),
            Map.of("cluster_sizes", String.join(", ", sizes))));
    for (Cluster c : incomplete ? List.<Cluster>of() : clusters.outliers()) {
      List<String> parts = new ArrayList<>();
      for (InstanceClusters.Separation s : c.separating()) {
        parts.add(s.toString());
      }
      for (String instance : c.instances()) {
        out.add(
            new DerivedValue(
                OUTLIER,
                Map.of("service", service, "instance", instance),
                1,
                Map.of(
                    "cluster_size",
                    Integer.toString(c.size()),
                    "separating_paths",
                    String.join("; ", parts))));
      }
    }
  }

  /** The nodes that pass both significance criteria. */
  static List<NodeImbalance> significant(List<NodeImbalance> nodes) {
    List<NodeImbalance> out = new ArrayList<>();
    for (NodeImbalance n : nodes) {
      if (n.significant()) {
        out.add(n);
      }
    }
    return out;
  }

  /**
   * The {@code topNodes} nodes with the largest {@code value} (equal up to rounding: deeper first,
   * then by node); only those with a positive value when {@code positiveOnly}.
   */
  static List<NodeImbalance> top(
      List<NodeImbalance> nodes,
      ToDoubleFunction<NodeImbalance> value,
      boolean positiveOnly,
      int topNodes) {
    double largest = 0;
    for (NodeImbalance n : nodes) {
      largest = Math.max(largest, value.applyAsDouble(n));
    }
    double grain = largest > 0 ? largest * 1e-9 : 1;
    List<NodeImbalance> sorted = new ArrayList<>();
    for (NodeImbalance n : nodes) {
      if (!positiveOnly || value.applyAsDouble(n) > 0) {
        sorted.add(n);
      }
    }
    sorted.sort(
        Comparator.comparingLong((NodeImbalance n) -> -Math.round(value.applyAsDouble(n) / grain))
            .thenComparing(n -> -n.node().depth())
            .thenComparing(NodeImbalance::node));
    return sorted.subList(0, Math.min(topNodes, sorted.size()));
  }

  private static Map<String, String> nodeLabels(String service, Node node) {
    return Map.of("service", service, "path", node.path(), "kind", node.kind());
  }

  private static Map<String, String> context(NodeImbalance n) {
    Map<String, String> c = nodeContext(n);
    c.put("slowest_instance", n.slowest());
    c.put("fastest_instance", n.fastest());
    return c;
  }

  /**
   * The context every node value carries, whatever it compares: min, avg, max, significant,
   * sum_imbalance and category (a mutable map, for the caller's own keys).
   */
  static Map<String, String> nodeContext(NodeImbalance n) {
    Map<String, String> c = new HashMap<>();
    c.put("min", number(n.min()));
    c.put("avg", number(n.avg()));
    c.put("max", number(n.max()));
    c.put("significant", Boolean.toString(n.significant()));
    c.put("sum_imbalance", number(n.sumImbalance()));
    c.put("category", n.category().name().toLowerCase(Locale.ROOT));
    return c;
  }

  /**
   * Six significant digits, no exponent, no trailing zeros; {@code NaN}, {@code +Inf} and {@code
   * -Inf} (as Prometheus writes them) for the non-finite values, which sums of finite client times
   * can reach.
   */
  static String number(double v) {
    if (!Double.isFinite(v)) {
      return nonFinite(v);
    }
    return new BigDecimal(v).round(new MathContext(6)).stripTrailingZeros().toPlainString();
  }

  /**
   * {@code NaN}, {@code +Inf} or {@code -Inf}: a value that is not finite, as Prometheus spells it.
   */
  public static String nonFinite(double v) {
    return Double.isNaN(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf";
  }

  /**
   * Names of the schemes' measurement families and their histograms' lines, which an exposition
   * must not repeat.
   */
  static List<String> families(CollectorSnapshot snapshot) {
    Set<String> out = new LinkedHashSet<>();
    for (SchemeSnapshot s : snapshot.schemes()) {
      Set<Measure> measures = new HashSet<>();
      for (SeriesSnapshot x : s.cumulative()) {
        if (!measures.add(x.measure())) {
          continue;
        }
        String name =
            "profold_"
                + MetricNames.sanitize(s.scheme())
                + "_"
                + MetricNames.sanitize(x.measure().name())
                + (x.measure().unit().isEmpty()
                    ? ""
                    : "_" + MetricNames.sanitize(x.measure().unit()));
        out.add(name);
        for (String line : PrometheusExposition.HISTOGRAM_LINES) {
          out.add(name + line); // the histogram's lines, which a gauge must not repeat either
        }
      }
    }
    return List.copyOf(out);
  }
}
