package dev.profold.collector.analysis;

import dev.profold.collector.analysis.ServiceProfile.Node;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * Clusters of a service's instances by their region-time profiles, and the outliers among them.
 *
 * <p>Method: the K-farthest divide-and-conquer clustering of Bahmani and Mueller as HPCToolkit's
 * automated time-series analysis uses it (Section 4.2, Algorithm 3), with its difference measure
 * (Section 4.1). Each instance is a vector of its times over the service's region nodes ({@link
 * ServiceProfile#vector}). For two vectors (or cluster representatives) a and b:
 *
 * <ul>
 *   <li>{@code diff(a, b) = sum over nodes of |a_n - b_n|}: the time to add or remove to turn one
 *       into the other (the paper's additions and deletions, without its sampling-period slack: the
 *       times here are sums, not sample positions);
 *   <li>{@code duration(a) = sum over nodes of a_n};
 *   <li>{@code diffRatio(a, b) = diff / (duration(a) + duration(b))}, in [0, 1]; 0 when both are
 *       empty.
 * </ul>
 *
 * With self times (agent) the nodes partition the time and this is the paper's measure exactly;
 * with inclusive times (client library) a difference deep in the tree is counted once per level in
 * both diff and duration, which weights deep differences more but keeps the ratio in [0, 1].
 *
 * <p>Instances are taken in name order. A range of at most K instances starts as singletons; a
 * longer range is split in halves, each clustered, and the two sets merged: while there are two or
 * more clusters and (the lowest pairwise diffRatio is below {@value #RATIO_MIN}, or lowest /
 * highest is below {@value #RATIO_REL}, or there are more than K clusters), the closest pair is
 * merged into one whose representative is the size-weighted mean. The same merge runs once over the
 * final set, so that a service with at most K instances is merged too. {@code K = max(2, ceil(log2
 * M))} for M instances. Deterministic: ties go to the first pair in order.
 *
 * <p>Outliers: with two or more clusters, a cluster smaller than the largest, of at most {@code
 * max(1, floor(M / 10))} instances, and whose mean profile is at least {@value #OUTLIER_MIN_RATIO}
 * (diffRatio) from the largest cluster's. The last condition is this collector's: the merge
 * criteria keep apart instances whose times differ by a few percent (two profiles 5% apart have a
 * diffRatio of 0.024, above Ratio_min), so ordinary jitter between healthy instances made small
 * clusters, each flagged; 0.1 is about 22% more time spread alike over the nodes, or a tenth of the
 * time spent elsewhere. The nodes that separate an outlier cluster are those whose mean time in it
 * differs most from the mean over the other instances (ties: deeper path first).
 *
 * <p>Cost: O(M · K² · nodes) time. Immutable.
 */
public final class InstanceClusters {
  /** Pairs closer than this are always merged (the paper's Ratio_min). */
  public static final double RATIO_MIN = 0.02;

  /** Pairs closer than this fraction of the farthest pair are merged (the paper's Ratio_rel). */
  public static final double RATIO_REL = 0.25;

  /** The least diffRatio between an outlier cluster's mean profile and the largest cluster's. */
  public static final double OUTLIER_MIN_RATIO = 0.1;

  /** Separating nodes named per outlier cluster. */
  static final int SEPARATING = 3;

  /**
   * One cluster.
   *
   * @param instances its instances, by name
   * @param outlier whether it is an outlier cluster
   * @param separating for an outlier cluster, the nodes that separate it most, with its mean time
   *     there and the other instances' mean; empty otherwise
   */
  public record Cluster(List<String> instances, boolean outlier, List<Separation> separating) {
    public Cluster {
      instances = List.copyOf(instances);
      separating = List.copyOf(separating);
    }

    public int size() {
      return instances.size();
    }
  }

  /**
   * How one node separates an outlier cluster from the rest.
   *
   * @param node the node
   * @param clusterMean mean seconds of the cluster's instances at the node
   * @param restMean mean seconds of the other instances
   */
  public record Separation(Node node, double clusterMean, double restMean) {
    @Override
    public String toString() {
      return String.format(
          Locale.ROOT,
          "%s: %.3f s vs %.3f s",
          node.path().isEmpty()
              ? "(no region)" + (node.kind().isEmpty() ? "" : " " + node.kind())
              : node.toString(),
          clusterMean,
          restMean);
    }
  }

  private final List<Cluster> clusters;

  private InstanceClusters(List<Cluster> clusters) {
    this.clusters = List.copyOf(clusters);
  }

  /** The clusters, largest first (ties: by first instance name). */
  public List<Cluster> clusters() {
    return clusters;
  }

  /** The outlier clusters, in {@link #clusters()} order. */
  public List<Cluster> outliers() {
    return clusters.stream().filter(Cluster::outlier).toList();
  }

  /** Clusters the instances of {@code p}. */
  public static InstanceClusters of(ServiceProfile p) {
    int m = p.instances().size();
    double[][] vectors = new double[m][];
    for (int i = 0; i < m; i++) {
      vectors[i] = p.vector(i);
    }
    List<Group> groups = groups(vectors);
    int largest = groups.isEmpty() ? 0 : groups.get(0).members.length;
    int small = Math.max(1, m / 10);
    List<Cluster> out = new ArrayList<>();
    for (Group group : groups) {
      int[] g = group.members;
      boolean outlier =
          groups.size() >= 2
              && g.length < largest
              && g.length <= small
              && diffRatio(group.mean, groups.get(0).mean) >= OUTLIER_MIN_RATIO;
      List<String> names = new ArrayList<>();
      for (int i : g) {
        names.add(p.instances().get(i));
      }
      out.add(new Cluster(names, outlier, outlier ? separating(p, g) : List.of()));
    }
    return new InstanceClusters(out);
  }

  /** The nodes where the members of {@code group} differ most from the other instances. */
  private static List<Separation> separating(ServiceProfile p, int[] group) {
    int m = p.instances().size();
    boolean[] in = new boolean[m];
    for (int i : group) {
      in[i] = true;
    }
    List<Separation> all = new ArrayList<>();
    double largest = 0;
    for (int n = 0; n < p.nodes().size(); n++) {
      double inside = 0;
      double outside = 0;
      for (int i = 0; i < m; i++) {
        if (in[i]) {
          inside += p.seconds(n, i);
        } else {
          outside += p.seconds(n, i);
        }
      }
      Separation s =
          new Separation(p.nodes().get(n), inside / group.length, outside / (m - group.length));
      largest = Math.max(largest, gap(s));
      all.add(s);
    }
    if (largest == 0) {
      return List.of();
    }
    // Differences equal up to rounding rank the same; then the deeper node, which explains the
    // difference its ancestors' inclusive times inherit.
    double grain = largest * 1e-6;
    all.sort(
        Comparator.comparingLong((Separation s) -> -Math.round(gap(s) / grain))
            .thenComparing(s -> -s.node().depth())
            .thenComparing(Separation::node));
    List<Separation> out = new ArrayList<>();
    for (Separation s : all.subList(0, Math.min(SEPARATING, all.size()))) {
      if (gap(s) > 0) {
        out.add(s);
      }
    }
    return out;
  }

  private static double gap(Separation s) {
    return Math.abs(s.clusterMean() - s.restMean());
  }

  /**
   * The clusters of {@code vectors} (all of one length), as arrays of indices in ascending order,
   * largest cluster first (ties: by smallest index).
   */
  static List<int[]> cluster(double[][] vectors) {
    return groups(vectors).stream().map(g -> g.members).toList();
  }

  /** The clusters as {@link #cluster} orders them, with their representatives. */
  private static List<Group> groups(double[][] vectors) {
    int m = vectors.length;
    if (m == 0) {
      return List.of();
    }
    int k = maxClusters(m);
    List<Group> out = new ArrayList<>(merge(clusterSet(vectors, 0, m, k), k));
    out.sort(
        Comparator.comparingInt((Group g) -> -g.members.length)
            .thenComparingInt(g -> g.members[0]));
    return out;
  }

  /** K for {@code m} instances: {@code max(2, ceil(log2 m))}. */
  static int maxClusters(int m) {
    int ceilLog2 = m <= 1 ? 0 : 32 - Integer.numberOfLeadingZeros(m - 1);
    return Math.max(2, ceilLog2);
  }

  /** diffRatio of two vectors of the same length. */
  static double diffRatio(double[] a, double[] b) {
    // Scaled by the largest time, so that sums of times near Double.MAX_VALUE cannot overflow to
    // infinity (infinity over infinity would make the ratio NaN); the ratio is the same.
    double scale = 0;
    for (int n = 0; n < a.length; n++) {
      scale = Math.max(scale, Math.max(a[n], b[n]));
    }
    if (!(scale > 0)) {
      return 0;
    }
    double diff = 0;
    double duration = 0;
    for (int n = 0; n < a.length; n++) {
      double x = a[n] / scale;
      double y = b[n] / scale;
      diff += Math.abs(x - y);
      duration += x + y;
    }
    return duration > 0 ? diff / duration : 0;
  }

  /** Algorithm 3's getClusterSet over instances [h, e). */
  private static List<Group> clusterSet(double[][] vectors, int h, int e, int k) {
    if (e - h <= k) {
      List<Group> out = new ArrayList<>();
      for (int i = h; i < e; i++) {
        out.add(new Group(new int[] {i}, vectors[i].clone()));
      }
      return out;
    }
    int mid = (h + e) >>> 1;
    List<Group> both = new ArrayList<>(clusterSet(vectors, h, mid, k));
    both.addAll(clusterSet(vectors, mid, e, k));
    return merge(both, k);
  }

  /** Algorithm 3's mergeClusterSet: merges the closest pair while the criteria ask for it. */
  private static List<Group> merge(List<Group> set, int k) {
    List<Group> s = new ArrayList<>(set);
    while (s.size() >= 2) {
      double min = Double.POSITIVE_INFINITY;
      double max = 0;
      int a = -1;
      int b = -1;
      for (int i = 0; i < s.size(); i++) {
        for (int j = i + 1; j < s.size(); j++) {
          double r = diffRatio(s.get(i).mean, s.get(j).mean);
          if (r < min) {
            min = r;
            a = i;
            b = j;
          }
          max = Math.max(max, r);
        }
      }
      boolean closeEnough = min < RATIO_MIN || min < RATIO_REL * max;
      if (a < 0 || (!closeEnough && s.size() <= k)) {
        break; // a < 0: no pair compared (never with finite times), nothing to merge
      }
      Group merged = s.get(a).with(s.get(b));
      s.set(a, merged);
      s.remove(b);
    }
    return s;
  }

  /** A cluster under construction: its members and representative (their mean vector). */
  private static final class Group {
    final int[] members;
    final double[] mean;

    Group(int[] members, double[] mean) {
      this.members = members;
      this.mean = mean;
    }

    Group with(Group o) {
      int[] all = new int[members.length + o.members.length];
      System.arraycopy(members, 0, all, 0, members.length);
      System.arraycopy(o.members, 0, all, members.length, o.members.length);
      Arrays.sort(all);
      double[] avg = new double[mean.length];
      double wa = members.length;
      double wb = o.members.length;
      for (int n = 0; n < avg.length; n++) {
        // The weighted mean as a step from one mean toward the other: no product or sum of the
        // times, which could overflow for times near Double.MAX_VALUE.
        avg[n] = mean[n] + (o.mean[n] - mean[n]) * (wb / (wa + wb));
      }
      return new Group(all, avg);
    }
  }
}
