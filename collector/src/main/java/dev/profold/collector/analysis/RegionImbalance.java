package dev.profold.collector.analysis;

import dev.profold.collector.analysis.ServiceProfile.Node;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

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

  /**
   * One node's time across the members (instances or threads) it is compared over, before the
   * losses are derived from it.
   *
   * @param node the node
   * @param min smallest member time (seconds)
   * @param avg the mean over all members (seconds)
   * @param max the largest (seconds)
   * @param slowest the member with the most time at the node (empty when the data cannot tell)
   * @param fastest the member with the least time (empty when the data cannot tell)
   */
  public record Spread(
      Node node, double min, double avg, double max, String slowest, String fastest) {}

  /** Analyses {@code p} with the given significance thresholds. */
  public static Result analyse(ServiceProfile p, double runtimeShare, double leafShare) {
    return assess(spreads(p, 0, ""), runtime(p), runtimeShare, leafShare);
  }

  /**
   * Each node's spread over {@code p}'s members and {@code silent} more members that have no time
   * anywhere (all of them named {@code silentName} where one is the fastest). Ties go to the first
   * member by name.
   */
  static List<Spread> spreads(ServiceProfile p, int silent, String silentName) {
    List<Node> nodes = p.nodes();
    int m = p.instances().size();
    int all = m + silent;
    List<Spread> out = new ArrayList<>(nodes.size());
    for (int n = 0; n < nodes.size(); n++) {
      int lo = 0;
      int hi = 0;
      double sum = 0;
      for (int i = 0; i < m; i++) {
        double t = p.seconds(n, i);
        sum += t;
        lo = t < p.seconds(n, lo) ? i : lo;
        hi = t > p.seconds(n, hi) ? i : hi;
      }
      boolean silentLowest = silent > 0 && (m == 0 || p.seconds(n, lo) > 0);
      out.add(
          new Spread(
              nodes.get(n),
              silentLowest || m == 0 ? 0 : p.seconds(n, lo),
              all == 0 ? 0 : sum / all,
              m == 0 ? 0 : p.seconds(n, hi),
              m == 0 ? "" : p.instances().get(hi),
              silentLowest ? silentName : m == 0 ? "" : p.instances().get(lo)));
    }
    return out;
  }

  /**
   * The losses and significance of each node from its spread (Table 1 and the two criteria), the
   * shares taken of {@code runtime}.
   *
   * @param spreads one per node; their paths form the tree sumImb is taken over
   */
  public static Result assess(
      List<Spread> spreads, double runtime, double runtimeShare, double leafShare) {
    List<Node> nodes = new ArrayList<>(spreads.size());
    double[] imb = new double[spreads.size()];
    double[] avg = new double[spreads.size()];
    for (int n = 0; n < spreads.size(); n++) {
      Spread s = spreads.get(n);
      nodes.add(s.node());
      // Rounding can put the mean of equal values a hair outside them.
      avg[n] = Math.min(s.max(), Math.max(s.min(), s.avg()));
      imb[n] = Category.of(s.node().kind()).imbalance(s.min(), avg[n], s.max());
    }
    double[] sumImb = sumImbalance(nodes, imb);
    List<NodeImbalance> out = new ArrayList<>(nodes.size());
    for (int n = 0; n < nodes.size(); n++) {
      Spread s = spreads.get(n);
      Category c = Category.of(s.node().kind());
      double share = runtime > 0 ? imb[n] / runtime : 0;
      boolean originates = sumImb[n] > 0 ? imb[n] / sumImb[n] > leafShare : imb[n] > 0;
      out.add(
          new NodeImbalance(
              s.node(),
              c,
              s.min(),
              avg[n],
              s.max(),
              imb[n],
              c.waiting(s.min(), avg[n], s.max()),
              sumImb[n],
              share,
              share > runtimeShare && originates,
              s.slowest(),
              s.fastest()));
    }
    return new Result(runtime, out);
  }

  /** sumImb of every node, from the nodes' imb (same order). */
  static double[] sumImbalance(List<Node> nodes, double[] imb) {
    PathTree tree = new PathTree(nodes);
    boolean[] interior = new boolean[tree.size()]; // a proper prefix of some node's path
    for (int p = 0; p < tree.size(); p++) {
      if (tree.parent[p] >= 0) {
        interior[tree.parent[p]] = true;
      }
    }
    double[] below = new double[tree.size()];
    for (int n = 0; n < nodes.size(); n++) {
      int p = tree.pathOf(n);
      if (!interior[p]) {
        for (int a = tree.parent[p]; a >= 0; a = tree.parent[a]) {
          below[a] += imb[n];
        }
      }
    }
    double[] out = new double[nodes.size()];
    for (int n = 0; n < nodes.size(); n++) {
      int p = tree.pathOf(n);
      out[n] = interior[p] ? below[p] : imb[n];
    }
    return out;
  }

  /**
   * The runtime of {@code p}: the largest instance total (see the class comment); 0 without
   * instances.
   */
  public static double runtime(ServiceProfile p) {
    List<Node> nodes = p.nodes();
    PathTree tree = new PathTree(nodes);
    double best = 0;
    for (int i = 0; i < p.instances().size(); i++) {
      double[] self = new double[tree.size()];
      for (int n = 0; n < nodes.size(); n++) {
        self[tree.pathOf(n)] += p.seconds(n, i);
      }
      best = Math.max(best, tree.total(self));
    }
    return best;
  }

  /**
   * An upper bound of the largest member total when only each node's spread is known: the total (as
   * in {@link #runtime}) of a member that had every node's max. Exact when one member is the
   * slowest everywhere.
   */
  public static double runtimeBound(List<Spread> spreads) {
    List<Node> nodes = new ArrayList<>(spreads.size());
    for (Spread s : spreads) {
      nodes.add(s.node());
    }
    PathTree tree = new PathTree(nodes);
    double[] self = new double[tree.size()];
    for (int n = 0; n < spreads.size(); n++) {
      self[tree.pathOf(n)] += spreads.get(n).max();
    }
    return tree.total(self);
  }

  /**
   * The paths of some nodes and all their ancestors, indexed once, so that {@link #total} of each
   * instance is one pass over arrays (with agent call stacks, rebuilding the tree of substrings for
   * every instance took seconds per interval). Not thread-safe; immutable once built.
   */
  private static final class PathTree {
    private final int[] nodePath; // node index -> path index

    /** A path's last name under its parent's path index (-1 at the top). */
    private record Segment(int parent, String name) {}

    private final int[] parent; // path index -> its parent's path index, or -1 at the top
    private final int[] deepestFirst; // path indices, deepest path first

    PathTree(List<Node> nodes) {
      // Paths are indexed segment by segment under their parent's index, so that a path costs its
      // length, not its length times its depth (a substring per prefix: seconds for deep call
      // stacks).
      Map<Segment, Integer> index = new HashMap<>();
      Map<String, Integer> byPath = new HashMap<>();
      List<Integer> parents = new ArrayList<>();
      List<Integer> depths = new ArrayList<>();
      nodePath = new int[nodes.size()];
      for (int n = 0; n < nodes.size(); n++) {
        String path = nodes.get(n).path();
        Integer known = byPath.get(path);
        if (known == null) {
          // Each prefix ("a", "a/b", ...) then the path itself, each under the one before.
          int up = -1;
          int depth = 0;
          int start = 0;
          while (true) {
            int i = path.indexOf('/', start);
            Segment key = new Segment(up, i < 0 ? path.substring(start) : path.substring(start, i));
            Integer at = index.get(key);
            if (at == null) {
              at = parents.size();
              index.put(key, at);
              parents.add(up);
              depths.add(depth);
            }
            up = at;
            depth++;
            if (i < 0) {
              break;
            }
            start = i + 1;
          }
          known = up;
          byPath.put(path, known);
        }
        nodePath[n] = known;
      }
      parent = parents.stream().mapToInt(Integer::intValue).toArray();
      deepestFirst =
          java.util.stream.IntStream.range(0, parent.length)
              .boxed()
              .sorted(Comparator.comparingInt(depths::get).reversed())
              .mapToInt(Integer::intValue)
              .toArray();
    }

    int size() {
      return parent.length;
    }

    /** The path index of node {@code n}. */
    int pathOf(int n) {
      return nodePath[n];
    }

    /**
     * Sum over top-level paths of {@code T(p) = max(t(p), sum of T(c) over p's child paths)}, given
     * {@code t} by path index (paths missing in between hold 0).
     */
    double total(double[] self) {
      double[] children = new double[parent.length];
      double total = 0;
      for (int p : deepestFirst) {
        double t = Math.max(self[p], children[p]);
        if (parent[p] < 0) {
          total += t;
        } else {
          children[parent[p]] += t;
        }
      }
      return total;
    }
  }
}
