package dev.profold.collector.analysis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.profold.collector.analysis.RegionImbalance.Category;
import dev.profold.collector.analysis.RegionImbalance.NodeImbalance;
import dev.profold.collector.analysis.ServiceProfile.Node;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class RegionImbalanceTest {
  static final List<String> PATHS = List.of("a", "a/x", "a/y", "a/y/z", "b", "b/w");
  static final List<String> KINDS =
      List.of("compute", "sync", "wait", "io", "runtime", "thread_mgmt", "");

  /** A profile of instances i0, i1, ... with the given rows. */
  static ServiceProfile profile(List<Node> nodes, double[][] rows) {
    List<String> instances = new ArrayList<>();
    for (int i = 0; i < rows[0].length; i++) {
      instances.add("i" + i);
    }
    return new ServiceProfile("svc", instances, nodes, rows);
  }

  static NodeImbalance node(RegionImbalance.Result r, String path, String kind) {
    return r.nodes().stream()
        .filter(n -> n.node().equals(new Node(path, kind)))
        .findFirst()
        .orElseThrow();
  }

  static RegionImbalance.Result analyse(ServiceProfile p) {
    return RegionImbalance.analyse(
        p, RegionImbalance.DEFAULT_RUNTIME_SHARE, RegionImbalance.DEFAULT_LEAF_SHARE);
  }

  @Test
  void table1PerCategory() {
    // times 1, 2, 3, 6: min 1, avg 3, max 6
    double[] t = {1, 2, 3, 6};
    ServiceProfile p =
        profile(
            List.of(new Node("c", "compute"), new Node("s", "sync"), new Node("w", "wait")),
            new double[][] {t, t, t});
    RegionImbalance.Result r = analyse(p);

    NodeImbalance c = node(r, "c", "compute");
    assertThat(c.category()).isEqualTo(Category.COMPUTATION);
    assertThat(c.min()).isEqualTo(1);
    assertThat(c.avg()).isEqualTo(3);
    assertThat(c.max()).isEqualTo(6);
    assertThat(c.imbalance()).isEqualTo(3); // max - avg
    assertThat(c.waiting()).isEqualTo(0);
    assertThat(c.slowest()).isEqualTo("i3");
    assertThat(c.fastest()).isEqualTo("i0");

    NodeImbalance w = node(r, "w", "wait");
    assertThat(w.imbalance()).isEqualTo(3); // max - avg
    assertThat(w.waiting()).isEqualTo(3); // avg

    NodeImbalance s = node(r, "s", "sync");
    assertThat(s.imbalance()).isEqualTo(2); // avg - min
    assertThat(s.waiting()).isEqualTo(1); // min
  }

  @Test
  void kindsMapToCategories() {
    assertThat(Category.of("wait")).isEqualTo(Category.WAIT);
    assertThat(Category.of("sync")).isEqualTo(Category.SYNCHRONIZATION);
    for (String k : List.of("compute", "io", "runtime", "thread_mgmt", "")) {
      assertThat(Category.of(k)).as(k).isEqualTo(Category.COMPUTATION);
    }
  }

  @Test
  void sumImbalanceIsOverTheLeavesBelow() {
    // a (inclusive) with leaves a/x (imb 2) and a/y (imb 1); b a leaf of its own.
    ServiceProfile p =
        profile(
            List.of(
                new Node("a", "compute"),
                new Node("a/x", "compute"),
                new Node("a/y", "io"),
                new Node("b", "compute")),
            new double[][] {
              {10, 10, 10.5}, // a: imb 1/3, small next to its leaves' 6
              {0, 0, 6}, // a/x: avg 2, max 6: imb 4
              {3, 0, 0}, // a/y: avg 1, max 3: imb 2
              {1, 1, 1}
            });
    RegionImbalance.Result r = analyse(p);
    assertThat(node(r, "a/x", "compute").sumImbalance()).isEqualTo(4);
    assertThat(node(r, "a/y", "io").sumImbalance()).isEqualTo(2);
    assertThat(node(r, "a", "compute").sumImbalance()).isEqualTo(6);
    assertThat(node(r, "b", "compute").sumImbalance()).isEqualTo(0);
    // a's own imbalance is small next to its leaves': the leaves explain it, a is not significant
    assertThat(node(r, "a", "compute").significant()).isFalse();
    assertThat(node(r, "a/x", "compute").significant()).isTrue();
    assertThat(node(r, "a/y", "io").significant()).isTrue();
    assertThat(node(r, "b", "compute").significant()).isFalse();
  }

  @Test
  void significanceNeedsBothShares() {
    // leaf with imbalance 0.001 s out of a 10 s runtime: 0.01% < 0.1%
    ServiceProfile p =
        profile(
            List.of(new Node("a", "compute"), new Node("a/x", "compute")),
            new double[][] {{10, 10}, {1, 1.002}});
    RegionImbalance.Result r = analyse(p);
    NodeImbalance x = node(r, "a/x", "compute");
    assertThat(x.imbalance()).isCloseTo(0.001, within(1e-12));
    assertThat(x.runtimeShare()).isCloseTo(0.0001, within(1e-12));
    assertThat(x.significant()).isFalse();
    // the same with a lower runtime threshold passes
    assertThat(node(RegionImbalance.analyse(p, 0.00005, 0.7), "a/x", "compute").significant())
        .isTrue();
    // and with a leaf share above 1 nothing can pass (a leaf's imb / sumImb is 1)
    assertThat(node(RegionImbalance.analyse(p, 0, 1), "a/x", "compute").significant()).isFalse();
  }

  @Test
  void interiorImbalanceWithBalancedLeavesIsSignificant() {
    // a's self time differs; its only leaf is balanced: sumImb(a) = 0, a explains its own
    ServiceProfile p =
        profile(
            List.of(new Node("a", "compute"), new Node("a/x", "compute")),
            new double[][] {{4, 8}, {1, 1}});
    NodeImbalance a = node(analyse(p), "a", "compute");
    assertThat(a.sumImbalance()).isZero();
    assertThat(a.imbalance()).isEqualTo(2);
    assertThat(a.significant()).isTrue();
  }

  @Test
  void runtimeIsTheLargestInstanceTotal() {
    List<Node> nodes =
        List.of(new Node("a", "compute"), new Node("a/x", "io"), new Node("a/y", "wait"));
    // inclusive: a holds its children's time (10 >= 4 + 5)
    assertThat(RegionImbalance.runtime(profile(nodes, new double[][] {{10, 7}, {4, 3}, {5, 3}})))
        .isEqualTo(10);
    // self times: a holds 1, its children 4 and 5: at least 9
    assertThat(RegionImbalance.runtime(profile(nodes, new double[][] {{1, 1}, {4, 3}, {5, 3}})))
        .isEqualTo(9);
    // roots add up; a path without its parent recorded still counts
    assertThat(
            RegionImbalance.runtime(
                profile(
                    List.of(new Node("a", "compute"), new Node("b/c/d", "io")),
                    new double[][] {{2, 1}, {3, 1}})))
        .isEqualTo(5);
  }

  @Test
  void singleInstanceHasNoImbalance() {
    RegionImbalance.Result r =
        analyse(profile(List.of(new Node("a", "sync")), new double[][] {{5}}));
    assertThat(node(r, "a", "sync").imbalance()).isZero();
    assertThat(node(r, "a", "sync").waiting()).isEqualTo(5);
  }

  // ---- laws ----

  /** Random profiles over {@link #PATHS} with random kinds, 1..12 instances. */
  @Provide
  Arbitrary<ServiceProfile> profiles() {
    return Combinators.combine(
            Arbitraries.integers().between(1, 12),
            Arbitraries.subsetOf(PATHS).ofMinSize(1),
            Arbitraries.longs())
        .as(
            (m, paths, seed) -> {
              java.util.Random rnd = new java.util.Random(seed);
              List<Node> nodes = new ArrayList<>();
              for (String path : new java.util.TreeSet<>(paths)) {
                nodes.add(new Node(path, KINDS.get(rnd.nextInt(KINDS.size()))));
              }
              double[][] rows = new double[nodes.size()][m];
              for (double[] row : rows) {
                for (int i = 0; i < m; i++) {
                  row[i] = rnd.nextInt(4) == 0 ? 0 : rnd.nextDouble() * 100;
                }
              }
              return profile(nodes, rows);
            });
  }

  @Property
  void imbalanceAndWaitAreNeverNegative(@ForAll("profiles") ServiceProfile p) {
    RegionImbalance.Result r = analyse(p);
    for (NodeImbalance n : r.nodes()) {
      assertThat(n.imbalance()).isGreaterThanOrEqualTo(0);
      assertThat(n.waiting()).isGreaterThanOrEqualTo(0);
      assertThat(n.sumImbalance()).isGreaterThanOrEqualTo(0);
      assertThat(n.min()).isLessThanOrEqualTo(n.avg());
      assertThat(n.avg()).isLessThanOrEqualTo(n.max());
      // the projected saving never exceeds the slowest instance's time at the node
      assertThat(n.imbalance() + n.waiting()).isLessThanOrEqualTo(n.max() * (1 + 1e-12));
    }
  }

  @Property
  void balancedInstancesHaveNoImbalance(
      @ForAll("profiles") ServiceProfile p, @ForAll @IntRange(min = 2, max = 30) int copies) {
    // every instance gets instance 0's times
    double[][] rows = new double[p.nodes().size()][copies];
    for (int n = 0; n < rows.length; n++) {
      java.util.Arrays.fill(rows[n], p.seconds(n, 0));
    }
    RegionImbalance.Result r = analyse(profile(p.nodes(), rows));
    for (NodeImbalance n : r.nodes()) {
      assertThat(n.imbalance()).as("%s", n.node()).isZero();
      assertThat(n.sumImbalance()).isZero();
      assertThat(n.significant()).isFalse();
    }
  }

  @Property
  void imbalanceScalesLinearly(
      @ForAll("profiles") ServiceProfile p, @ForAll @DoubleRange(min = 0.01, max = 1e4) double c) {
    double[][] scaled = new double[p.nodes().size()][];
    for (int n = 0; n < scaled.length; n++) {
      scaled[n] = p.row(n);
      for (int i = 0; i < scaled[n].length; i++) {
        scaled[n][i] *= c;
      }
    }
    RegionImbalance.Result a = analyse(p);
    RegionImbalance.Result b = analyse(profile(p.nodes(), scaled));
    assertThat(b.runtime()).isCloseTo(a.runtime() * c, within(1e-9 * c * (1 + a.runtime())));
    for (int n = 0; n < p.nodes().size(); n++) {
      NodeImbalance x = a.nodes().get(n);
      NodeImbalance y = b.nodes().get(n);
      double tol = 1e-9 * c * (1 + x.max());
      assertThat(y.imbalance()).isCloseTo(x.imbalance() * c, within(tol));
      assertThat(y.waiting()).isCloseTo(x.waiting() * c, within(tol));
      assertThat(y.sumImbalance())
          .isCloseTo(x.sumImbalance() * c, within(1e-9 * c * (1 + x.sumImbalance())));
      assertThat(y.runtimeShare()).isCloseTo(x.runtimeShare(), within(1e-9));
    }
  }

  @Property
  void plantedImbalanceIsRecovered(
      @ForAll @IntRange(min = 2, max = 64) int m,
      @ForAll @IntRange(min = 0, max = 63) int slowIndex,
      @ForAll @DoubleRange(min = 0.5, max = 100) double base,
      @ForAll @DoubleRange(min = 0.01, max = 50) double delta,
      @ForAll("kinds") String kind) {
    int slow = slowIndex % m;
    double[] row = new double[m];
    java.util.Arrays.fill(row, base);
    Category c = Category.of(kind);
    // computation and wait: one instance takes delta longer; sync: one arrives delta sooner (less
    // time in the barrier)
    row[slow] = c == Category.SYNCHRONIZATION ? base - delta / 100 : base + delta;
    double planted = c == Category.SYNCHRONIZATION ? delta / 100 : delta;
    ServiceProfile p =
        profile(
            List.of(new Node("a", "compute"), new Node("a/n", kind)),
            new double[][] {filled(m, 1000), row});
    NodeImbalance n = node(analyse(p), "a/n", kind);
    double want = planted * (m - 1) / m;
    assertThat(n.imbalance()).isCloseTo(want, within(1e-9 * (base + delta)));
    assertThat(c == Category.SYNCHRONIZATION ? n.fastest() : n.slowest()).isEqualTo("i" + slow);
    double wantWait =
        switch (c) {
          case COMPUTATION -> 0;
          case WAIT -> base + delta / m;
          case SYNCHRONIZATION -> base - delta / 100;
        };
    assertThat(n.waiting()).isCloseTo(wantWait, within(1e-9 * (base + delta)));
  }

  @Provide
  Arbitrary<String> kinds() {
    return Arbitraries.of(KINDS);
  }

  static double[] filled(int m, double v) {
    double[] a = new double[m];
    java.util.Arrays.fill(a, v);
    return a;
  }

  /** Paths of up to four names drawn from a few (the empty name included), and their imb. */
  @Provide
  Arbitrary<List<Node>> smallTrees() {
    Arbitrary<String> path =
        Arbitraries.of("a", "b", "", "c.d")
            .list()
            .ofMinSize(1)
            .ofMaxSize(4)
            .map(l -> String.join("/", l));
    return Combinators.combine(path, Arbitraries.of("compute", "io", "sync"))
        .as(Node::new)
        .list()
        .ofMaxSize(30);
  }

  @Property
  void sumImbalanceIsTheImbOfTheLeavesBelowEachPrefix(
      @ForAll("smallTrees") List<Node> nodes, @ForAll long seed) {
    java.util.SplittableRandom random = new java.util.SplittableRandom(seed);
    double[] imb = new double[nodes.size()];
    for (int n = 0; n < imb.length; n++) {
      imb[n] = random.nextInt(100);
    }
    double[] got = RegionImbalance.sumImbalance(nodes, imb);

    // The definition, by path text: a node whose path is a proper prefix of another's (interior)
    // has the sum of the imb of the non-interior nodes under it; the others their own imb.
    for (int n = 0; n < nodes.size(); n++) {
      String path = nodes.get(n).path();
      boolean interior = nodes.stream().anyMatch(o -> o.path().startsWith(path + "/"));
      double expected = 0;
      if (!interior) {
        expected = imb[n];
      } else {
        for (int o = 0; o < nodes.size(); o++) {
          String other = nodes.get(o).path();
          boolean otherInterior = false;
          for (Node x : nodes) {
            otherInterior |= x.path().startsWith(other + "/");
          }
          if (!otherInterior && other.startsWith(path + "/")) {
            expected += imb[o];
          }
        }
      }
      assertThat(got[n]).as("node %s in %s", nodes.get(n), nodes).isEqualTo(expected);
    }
  }
}
