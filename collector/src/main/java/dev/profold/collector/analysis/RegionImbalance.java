package dev.profold.collector.analysis;

import dev.profold.collector.analysis.ServiceProfile.Node;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Imbalance and waiting of each region node across a service's instances: pure functions of a
 * {@link ServiceProfile}.
 *
 * <p>Method: HPCToolkit's automated analysis of time-series profile data (Section 4.3: Table 1 for
 * imb and wait, the two criteria for significant call paths), applied across instances instead of
 * threads or processes. For node N with min, avg and max of its time over the live instances:
 *
 * <pre>
 *   category          imb(N)       wait(N)
 *   computation       max - avg    0
 *   wait              max - avg    avg
 *   synchronization   avg - min    min
 * </pre>
 *
 * Kinds map to categories: {@code wait} is wait, {@code sync} is synchronization, everything else
 * ({@code compute}, {@code io}, {@code runtime}, {@code thread_mgmt}, empty) is computation.
 *
 * <p>{@code sumImb(N)} is imb(N) when N's path has no path below it, else the sum of imb over the
 * leaf nodes below N's path (a leaf: a node whose path has no path below it; every kind at that
 * path counts). {@code runtime} is the largest instance total: per instance, the sum over top-level
 * paths of {@code T(p) = max(t(p), sum of T(c) over p's child paths)}, where {@code t(p)} is the
 * time at exactly {@code p} over all kinds. That is the exact total when region times are inclusive
 * (client library) and a lower bound that misses interior frames' self time when they are self
 * times (agent). A node is significant when {@code imb/runtime > runtimeShare} and {@code
 * imb/sumImb > leafShare} (a node with imbalance whose leaves have none passes the second).
 */
public final class RegionImbalance {
  /** Default of {@code imbalance_runtime_share} (the paper's significanceRatio). */
  public static final double DEFAULT_RUNTIME_SHARE = 0.001;

  /** Default of {@code imbalance_leaf_share} (the paper's originDepthRatio). */
  public static final double DEFAULT_LEAF_SHARE = 0.7;

  private RegionImbalance() {}

  /** Semantic category of a node (Table 1). */
  public enum Category {
    COMPUTATION,
    WAIT,
    SYNCHRONIZATION;

    /** The category of a region kind label. */
    public static Category of(String kind) {
      return switch (kind) {
        case "wait" -> WAIT;
        case "sync" -> SYNCHRONIZATION;
        default -> COMPUTATION;
      };
    }

    /** imb(N) from N's min, avg and max. */
    public double imbalance(double min, double avg, double max) {
      return Math.max(0, this == SYNCHRONIZATION ? avg - min : max - avg);
    }

    /** wait(N) from N's min, avg and max. */
    public double waiting(double min, double avg, double max) {
      return switch (this) {
        case COMPUTATION -> 0;
        case WAIT -> avg;
        case SYNCHRONIZATION -> min;
      };
    }
  }

  /**
   * What one node's time looks like across the instances, and the losses it stands for.
   *
   * @param node the node
   * @param category its category
   * @param min smallest time over the live instances (seconds)
   * @param avg their mean (seconds)
   * @param max the largest (seconds)
   * @param imbalance imb(N), seconds
   * @param waiting wait(N), seconds
   * @param sumImbalance sumImb(N), seconds
   * @param runtimeShare imb(N) / runtime (0 when runtime is 0)
   * @param significant both significance criteria hold
   * @param slowest the instance with the most time at N (first by name on ties)
   * @param fastest the instance with the least time at N (first by name on ties)
   */
  public record NodeImbalance(
      Node node,
      Category category,
      double min,
      double avg,
      double max,
      double imbalance,
      double waiting,
      double sumImbalance,
      double runtimeShare,
      boolean significant,
      String slowest,
      String fastest) {}

  /**
   * The analysis of one service.
   *
   * @param runtime the runtime the shares are taken of, seconds
   * @param nodes one entry per node of the profile, in its order
   */
  public record Result(double runtime, List<NodeImbalance> nodes) {
    public Result {
      nodes = List.copyOf(nodes);
    }
  }

  /** Analyses {@code p} with the given significance thresholds. */
  public static Result analyse(ServiceProfile p, double runtimeShare, double leafShare) {
    List<Node> nodes = p.nodes();
    int m = p.instances().size();
    double runtime = runtime(p);
    double[] imb = new double[nodes.size()];
    List<NodeImbalance> partial = new ArrayList<>();
    for (int n = 0; n < nodes.size(); n++) {
      Node node = nodes.get(n);
      Category c = Category.of(node.kind());
      int lo = 0;
      int hi = 0;
      double sum = 0;
      for (int i = 0; i < m; i++) {
        double t = p.seconds(n, i);
        sum += t;
        lo = t < p.seconds(n, lo) ? i : lo;
        hi = t > p.seconds(n, hi) ? i : hi;
      }
      double min = m == 0 ? 0 : p.seconds(n, lo);
      double max = m == 0 ? 0 : p.seconds(n, hi);
      // Rounding can put the mean of equal values a hair outside them.
      double avg = m == 0 ? 0 : Math.min(max, Math.max(min, sum / m));
      imb[n] = c.imbalance(min, avg, max);
      partial.add(
          new NodeImbalance(
              node,
              c,
              min,
              avg,
              max,
              imb[n],
              c.waiting(min, avg, max),
              0,
              0,
              false,
              m == 0 ? "" : p.instances().get(hi),
              m == 0 ? "" : p.instances().get(lo)));
    }
    double[] sumImb = sumImbalance(nodes, imb);
    List<NodeImbalance> out = new ArrayList<>(nodes.size());
    for (int n = 0; n < nodes.size(); n++) {
      NodeImbalance x = partial.get(n);
      double share = runtime > 0 ? imb[n] / runtime : 0;
      boolean originates = sumImb[n] > 0 ? imb[n] / sumImb[n] > leafShare : imb[n] > 0;
      out.add(
          new NodeImbalance(
              x.node(),
              x.category(),
              x.min(),
              x.avg(),
              x.max(),
              x.imbalance(),
              x.waiting(),
              sumImb[n],
              share,
              share > runtimeShare && originates,
              x.slowest(),
              x.fastest()));
    }
    return new Result(runtime, out);
  }

  /** sumImb of every node, from the nodes' imb (same order). */
  static double[] sumImbalance(List<Node> nodes, double[] imb) {
    Set<String> interior = new HashSet<>();
    for (Node n : nodes) {
      forEachAncestor(n.path(), interior::add);
    }
    Map<String, Double> below = new HashMap<>();
    for (int n = 0; n < nodes.size(); n++) {
      String path = nodes.get(n).path();
      if (!interior.contains(path)) {
        double v = imb[n];
        forEachAncestor(path, a -> below.merge(a, v, Double::sum));
      }
    }
    double[] out = new double[nodes.size()];
    for (int n = 0; n < nodes.size(); n++) {
      String path = nodes.get(n).path();
      out[n] = interior.contains(path) ? below.getOrDefault(path, 0.0) : imb[n];
    }
    return out;
  }

  /**
   * The runtime of {@code p}: the largest instance total (see the class comment); 0 without
   * instances.
   */
  public static double runtime(ServiceProfile p) {
    List<Node> nodes = p.nodes();
    double best = 0;
    for (int i = 0; i < p.instances().size(); i++) {
      Map<String, Double> self = new HashMap<>();
      for (int n = 0; n < nodes.size(); n++) {
        String path = nodes.get(n).path();
        self.merge(path, p.seconds(n, i), Double::sum);
        forEachAncestor(path, a -> self.merge(a, 0.0, Double::sum));
      }
      List<String> deepestFirst = new ArrayList<>(self.keySet());
      deepestFirst.sort(Comparator.comparingInt(RegionImbalance::slashes).reversed());
      Map<String, Double> children = new HashMap<>();
      double total = 0;
      for (String path : deepestFirst) {
        double t = Math.max(self.get(path), children.getOrDefault(path, 0.0));
        int slash = path.lastIndexOf('/');
        if (slash < 0) {
          total += t;
        } else {
          children.merge(path.substring(0, slash), t, Double::sum);
        }
      }
      best = Math.max(best, total);
    }
    return best;
  }

  private static int slashes(String path) {
    int n = 0;
    for (int i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) {
      n++;
    }
    return n;
  }

  /**
   * Calls {@code f} with every proper prefix path of {@code path} ({@code a}, {@code a/b}, ...).
   */
  private static void forEachAncestor(String path, Consumer<String> f) {
    for (int i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) {
      f.accept(path.substring(0, i));
    }
  }
}
