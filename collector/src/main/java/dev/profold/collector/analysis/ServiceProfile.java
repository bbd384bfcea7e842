package dev.profold.collector.analysis;

import dev.profold.collector.fold.FoldEngine;
import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.sinks.snapshot.SchemeSnapshot;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * One service's region times over one interval, as a matrix: a row per region node (a path and a
 * kind, as the built-in {@code region} scheme groups them), a column per instance that was live in
 * the interval. A live instance is one with at least one {@code time} series in the interval; where
 * it has no time at a node, its cell is 0.
 *
 * <p>The cell is the {@code time} sum the scheme holds for exactly that path and kind: the region's
 * inclusive time for regions timed with the client library (a region's time includes the regions
 * nested in it), the frame's self time for the agent's stacks (values land at the innermost frame).
 *
 * <p>Immutable; instances sorted by name, nodes by path then kind.
 */
public final class ServiceProfile {
  /**
   * A node of the region tree: a path ({@code a/b/c}, empty for entries without a region) and the
   * kind recorded with it ({@code compute}, {@code sync}, {@code wait}, {@code io}, {@code
   * runtime}, {@code thread_mgmt} or empty).
   */
  public record Node(String path, String kind) implements Comparable<Node> {
    private static final Comparator<Node> ORDER =
        Comparator.comparing(Node::path).thenComparing(Node::kind);

    /** Number of path elements (0 for the empty path). */
    public int depth() {
      return path.isEmpty() ? 0 : (int) path.chars().filter(c -> c == '/').count() + 1;
    }

    @Override
    public int compareTo(Node o) {
      return ORDER.compare(this, o);
    }

    @Override
    public String toString() {
      return kind.isEmpty() ? path : path + " (" + kind + ")";
    }
  }

  private final String service;
  private final List<String> instances;
  private final List<Node> nodes;
  private final double[][] seconds; // [node][instance]

  /**
   * A profile of the given times.
   *
   * @param seconds time per node (row, in {@code nodes} order) and instance (column); copied
   * @throws IllegalArgumentException when the shape does not match, or a time is negative or not
   *     finite
   */
  public ServiceProfile(
      String service, List<String> instances, List<Node> nodes, double[][] seconds) {
    this.service = service;
    this.instances = List.copyOf(instances);
    this.nodes = List.copyOf(nodes);
    if (seconds.length != this.nodes.size()) {
      throw new IllegalArgumentException(
          seconds.length + " rows for " + this.nodes.size() + " nodes");
    }
    this.seconds = new double[seconds.length][];
    for (int n = 0; n < seconds.length; n++) {
      if (seconds[n].length != this.instances.size()) {
        throw new IllegalArgumentException(
            "row " + n + " has " + seconds[n].length + " cells for " + instances.size());
      }
      for (double v : seconds[n]) {
        if (!(v >= 0) || Double.isInfinite(v)) {
          throw new IllegalArgumentException("time must be finite and >= 0, was " + v);
        }
      }
      this.seconds[n] = seconds[n].clone();
    }
  }

  /**
   * The profiles of every service in the built-in scheme's last closed interval, by service name.
   * Overflow groups are left out, and services of more than {@link #MAX_CELLS} instances x nodes.
   * Empty when {@code scheme} lacks the labels service, instance, path and kind.
   */
  public static Map<String, ServiceProfile> fromRegionScheme(SchemeSnapshot scheme) {
    return fromRegionScheme(scheme, MAX_CELLS);
  }

  /** As {@link #fromRegionScheme(SchemeSnapshot)}, with the bound given (tests). */
  static Map<String, ServiceProfile> fromRegionScheme(SchemeSnapshot scheme, long maxCells) {
    List<String> labels = scheme.labelNames();
    int service = labels.indexOf(SchemeDefinition.SERVICE);
    int instance = labels.indexOf(SchemeDefinition.INSTANCE);
    int path = labels.indexOf(SchemeDefinition.PATH);
    int kind = labels.indexOf(SchemeDefinition.KIND);
    if (service < 0 || instance < 0 || path < 0 || kind < 0) {
      return Map.of();
    }
    // service -> node -> instance -> seconds
    Map<String, Map<Node, Map<String, Double>>> byService = new TreeMap<>();
    Map<String, TreeSet<String>> live = new HashMap<>();
    for (SeriesSnapshot s : scheme.lastInterval()) {
      List<String> v = s.labelValues();
      double sum = s.state().sum();
      if (!s.measure().name().equals("time")
          || v.get(service).equals(FoldEngine.OVERFLOW)
          || v.get(instance).equals(FoldEngine.OVERFLOW)
          || !(sum >= 0)) {
        continue; // NaN and negative sums: no time
      }
      double t = seconds(sum); // +Inf: the largest double
      live.computeIfAbsent(v.get(service), k -> new TreeSet<>()).add(v.get(instance));
      byService
          .computeIfAbsent(v.get(service), k -> new TreeMap<>())
          .computeIfAbsent(new Node(v.get(path), v.get(kind)), k -> new HashMap<>())
          .merge(v.get(instance), t, ServiceProfile::saturatingSum);
    }
    Map<String, ServiceProfile> out = new TreeMap<>();
    for (Map.Entry<String, Map<Node, Map<String, Double>>> e : byService.entrySet()) {
      List<String> names = new ArrayList<>(live.get(e.getKey()));
      List<Node> nodes = new ArrayList<>(e.getValue().keySet());
      if ((long) names.size() * nodes.size() > maxCells) {
        Guarded.skipped(
            "service " + e.getKey(),
            names.size()
                + " instances x "
                + nodes.size()
                + " region nodes is over "
                + maxCells
                + " cells");
        continue;
      }
      double[][] m = new double[nodes.size()][names.size()];
      for (int n = 0; n < nodes.size(); n++) {
        Map<String, Double> row = e.getValue().get(nodes.get(n));
        for (int i = 0; i < names.size(); i++) {
          m[n][i] = row.getOrDefault(names.get(i), 0.0);
        }
      }
      out.put(e.getKey(), new ServiceProfile(e.getKey(), names, nodes, m));
    }
    return out;
  }

  /**
   * The most instances x nodes a profile holds (32 MiB of times, copied once more by the
   * clustering, whose time grows with it too): a service beyond it is left out of the analysis.
   */
  public static final long MAX_CELLS = 1 << 22;

  /**
   * {@code a + b}, at most {@link Double#MAX_VALUE}: two finite times whose sum is beyond a double
   * stay finite, as the profile requires (the largest time there is, not an exact one).
   */
  static double saturatingSum(double a, double b) {
    return Math.min(Double.MAX_VALUE, a + b);
  }

  /**
   * A state's sum as seconds the analysis can take: NaN and negative sums as 0, a sum beyond the
   * double range (+Inf, which the protocol allows) as {@link Double#MAX_VALUE}.
   */
  static double seconds(double sum) {
    return sum > 0 ? Math.min(Double.MAX_VALUE, sum) : 0;
  }

  public String service() {
    return service;
  }

  /** The live instances, sorted by name. */
  public List<String> instances() {
    return instances;
  }

  /** The nodes, sorted by path then kind. */
  public List<Node> nodes() {
    return nodes;
  }

  /** Seconds of instance {@code i} at node {@code n}. */
  public double seconds(int n, int i) {
    return seconds[n][i];
  }

  /** Node {@code n}'s times over the instances (a copy). */
  public double[] row(int n) {
    return seconds[n].clone();
  }

  /** Instance {@code i}'s times over the nodes: its profile vector (a copy). */
  public double[] vector(int i) {
    double[] v = new double[nodes.size()];
    for (int n = 0; n < v.length; n++) {
      v[n] = seconds[n][i];
    }
    return v;
  }
}
