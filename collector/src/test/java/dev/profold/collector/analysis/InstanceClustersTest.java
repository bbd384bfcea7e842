package dev.profold.collector.analysis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.profold.collector.analysis.InstanceClusters.Cluster;
import dev.profold.collector.analysis.ServiceProfile.Node;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class InstanceClustersTest {
  static final List<Node> NODES =
      List.of(
          new Node("handle", "compute"),
          new Node("handle/db.io", "io"),
          new Node("handle/lock", "sync"));

  /** A profile whose instance i has the times {@code vectors[i]} over {@link #NODES}. */
  static ServiceProfile profile(List<String> names, List<double[]> vectors) {
    double[][] rows = new double[NODES.size()][names.size()];
    for (int i = 0; i < names.size(); i++) {
      for (int n = 0; n < NODES.size(); n++) {
        rows[n][i] = vectors.get(i)[n];
      }
    }
    return new ServiceProfile("checkout", names, NODES, rows);
  }

  static String name(int i) {
    return String.format("checkout-%02d", i);
  }

  @Test
  void diffRatioIsThePapersMeasure() {
    // two profiles of 7 s each, 1 s moved from one node to another: diff 2 s of 14 s
    assertThat(InstanceClusters.diffRatio(new double[] {3, 4}, new double[] {4, 3}))
        .isCloseTo(2.0 / 14, within(1e-15));
    assertThat(InstanceClusters.diffRatio(new double[] {1, 2}, new double[] {1, 2})).isZero();
    assertThat(InstanceClusters.diffRatio(new double[] {1, 0}, new double[] {0, 1})).isEqualTo(1);
    assertThat(InstanceClusters.diffRatio(new double[] {0, 0}, new double[] {0, 0})).isZero();
  }

  @Test
  void kGrowsWithLog2OfTheInstances() {
    assertThat(InstanceClusters.maxClusters(1)).isEqualTo(2);
    assertThat(InstanceClusters.maxClusters(2)).isEqualTo(2);
    assertThat(InstanceClusters.maxClusters(4)).isEqualTo(2);
    assertThat(InstanceClusters.maxClusters(5)).isEqualTo(3);
    assertThat(InstanceClusters.maxClusters(21)).isEqualTo(5);
    assertThat(InstanceClusters.maxClusters(1024)).isEqualTo(10);
  }

  @Test
  void oneSlowInstanceAmongTwentyIsAnOutlierSeparatedByItsIo() {
    List<String> names = new ArrayList<>();
    List<double[]> vectors = new ArrayList<>();
    for (int i = 0; i < 21; i++) {
      names.add(name(i));
      // handle is inclusive: 0.5 s of its own plus db.io
      vectors.add(i == 13 ? new double[] {1.5, 1.0, 0.125} : new double[] {0.75, 0.25, 0.125});
    }
    InstanceClusters c = InstanceClusters.of(profile(names, vectors));

    assertThat(c.clusters()).hasSize(2);
    assertThat(c.clusters().get(0).size()).isEqualTo(20);
    assertThat(c.clusters().get(0).outlier()).isFalse();
    assertThat(c.outliers()).hasSize(1);
    Cluster out = c.outliers().get(0);
    assertThat(out.instances()).containsExactly(name(13));
    // db.io and handle differ by the same 0.75 s; the deeper node, where it arises, comes first;
    // lock does not differ and is not named
    assertThat(out.separating())
        .extracting(InstanceClusters.Separation::node)
        .containsExactly(new Node("handle/db.io", "io"), new Node("handle", "compute"));
    assertThat(out.separating().get(0).clusterMean()).isEqualTo(1.0);
    assertThat(out.separating().get(0).restMean()).isEqualTo(0.25);
    assertThat(out.separating().get(0).toString())
        .isEqualTo("handle/db.io (io): 1.000 s vs 0.250 s");
  }

  @Test
  void identicalInstancesFormOneCluster() {
    List<String> names = new ArrayList<>();
    List<double[]> vectors = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      names.add(name(i));
      vectors.add(new double[] {1, 0.5, 0.25});
    }
    InstanceClusters c = InstanceClusters.of(profile(names, vectors));
    assertThat(c.clusters()).hasSize(1);
    assertThat(c.clusters().get(0).instances()).isEqualTo(names);
    assertThat(c.outliers()).isEmpty();
  }

  /** The instances' cluster members, by instance names. */
  private static List<List<String>> members(InstanceClusters c) {
    return c.clusters().stream().map(Cluster::instances).toList();
  }

  @Property
  void clustersDoNotChangeWhenEveryTimeIsScaledUpToTheTopOfTheDoubleRange(
      @ForAll @IntRange(min = 2, max = 40) int m, @ForAll long seed) {
    // Times near Double.MAX_VALUE: before, sums over nodes and cluster means overflowed to
    // infinity, ratios became NaN, and the clustering failed with an index out of bounds (every
    // scrape and alert evaluation with it). Scaling by a power of two is exact, so the clusters
    // must be the same.
    Random rnd = new Random(seed);
    List<String> names = new ArrayList<>();
    List<double[]> small = new ArrayList<>();
    List<double[]> huge = new ArrayList<>();
    for (int i = 0; i < m; i++) {
      names.add(name(i));
      double[] v = {rnd.nextInt(4) + 1, rnd.nextInt(3), rnd.nextInt(2)};
      small.add(v);
      huge.add(Arrays.stream(v).map(x -> Math.scalb(x, 1020)).toArray());
    }
    InstanceClusters expected = InstanceClusters.of(profile(names, small));
    InstanceClusters scaled = InstanceClusters.of(profile(names, huge));

    assertThat(members(scaled)).isEqualTo(members(expected));
    assertThat(scaled.outliers().size()).isEqualTo(expected.outliers().size());
  }

  @Test
  void nineIdenticalInstancesOfHugeTimesAreOneCluster() {
    List<String> names = new ArrayList<>();
    List<double[]> vectors = new ArrayList<>();
    for (int i = 0; i < 9; i++) {
      names.add(name(i));
      vectors.add(new double[] {1e308, 0, 0});
    }
    InstanceClusters c = InstanceClusters.of(profile(names, vectors));
    assertThat(c.clusters()).hasSize(1);
    assertThat(c.outliers()).isEmpty();
  }

  @Test
  void fivePercentJitterBetweenHealthyInstancesFlagsNoOutlier() {
    // Before: clusters {0,1,2}, {3}, {4}, and instances 3 and 4 both flagged as outliers.
    double[] scale = {1.00, 1.02, 0.98, 1.05, 0.95};
    List<String> names = new ArrayList<>();
    List<double[]> vectors = new ArrayList<>();
    for (int i = 0; i < scale.length; i++) {
      names.add(name(i));
      vectors.add(new double[] {scale[i], 0.25 * scale[i], 0});
    }
    assertThat(InstanceClusters.of(profile(names, vectors)).outliers()).isEmpty();
  }

  @Property
  void jitterOfTenPercentNeverMakesAnOutlier(
      @ForAll @IntRange(min = 5, max = 50) int m, @ForAll long seed) {
    Random rnd = new Random(seed);
    List<String> names = new ArrayList<>();
    List<double[]> vectors = new ArrayList<>();
    for (int i = 0; i < m; i++) {
      names.add(name(i));
      double a = 1 + (rnd.nextDouble() - 0.5) * 0.2; // each node +-10%, independently
      double b = 1 + (rnd.nextDouble() - 0.5) * 0.2;
      double c = 1 + (rnd.nextDouble() - 0.5) * 0.2;
      vectors.add(new double[] {0.75 * a, 0.25 * b, 0.125 * c});
    }
    assertThat(InstanceClusters.of(profile(names, vectors)).outliers()).isEmpty();
  }

  @Test
  void smallNoiseStaysOneCluster() {
    Random rnd = new Random(42);
    List<String> names = new ArrayList<>();
    List<double[]> vectors = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      names.add(name(i));
      double e = 1 + (rnd.nextDouble() - 0.5) * 0.02; // +-1%
      vectors.add(new double[] {e, 0.5 * e, 0.25});
    }
    assertThat(InstanceClusters.of(profile(names, vectors)).clusters()).hasSize(1);
  }

  @Test
  void twoGenuineHalvesAreTwoClustersWithoutOutliers() {
    List<String> names = new ArrayList<>();
    List<double[]> vectors = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      names.add(name(i));
      // interleaved by name, so that both halves of the divide step see both behaviours
      vectors.add(i % 2 == 0 ? new double[] {1, 0.25, 0.125} : new double[] {1.5, 0.75, 0.125});
    }
    InstanceClusters c = InstanceClusters.of(profile(names, vectors));
    assertThat(c.clusters()).extracting(Cluster::size).containsExactly(10, 10);
    assertThat(c.clusters().get(0).instances()).contains(name(0), name(2), name(18));
    assertThat(c.clusters().get(1).instances()).contains(name(1), name(3), name(19));
    assertThat(c.outliers()).isEmpty();
  }

  @Test
  void twoDifferentInstancesStayApartButNeitherIsAnOutlier() {
    InstanceClusters c =
        InstanceClusters.of(
            profile(List.of("a", "b"), List.of(new double[] {1, 0, 0}, new double[] {1, 1, 0})));
    assertThat(c.clusters()).hasSize(2);
    assertThat(c.outliers()).isEmpty();
  }

  @Property
  void everyInstanceIsInExactlyOneOfAtMostKClusters(
      @ForAll @IntRange(min = 1, max = 200) int m, @ForAll long seed) {
    Random rnd = new Random(seed);
    double[][] vectors = new double[m][4];
    int behaviours = 1 + rnd.nextInt(6);
    for (double[] v : vectors) {
      int b = rnd.nextInt(behaviours);
      for (int n = 0; n < v.length; n++) {
        v[n] = (b + 1) * (n + 1) * (1 + rnd.nextDouble() * 0.5);
      }
    }
    List<int[]> clusters = InstanceClusters.cluster(vectors);
    assertThat(clusters.size()).isBetween(1, InstanceClusters.maxClusters(m));
    int[] all = clusters.stream().flatMapToInt(Arrays::stream).sorted().toArray();
    int[] want = new int[m];
    Arrays.setAll(want, i -> i);
    assertThat(all).containsExactly(want);
    for (int i = 1; i < clusters.size(); i++) {
      assertThat(clusters.get(i).length).isLessThanOrEqualTo(clusters.get(i - 1).length);
    }
    // deterministic
    assertThat(InstanceClusters.cluster(vectors)).usingRecursiveComparison().isEqualTo(clusters);
  }
}
