package dev.profold.client.internal.threads;

import static dev.profold.client.internal.threads.Fixtures.copies;
import static dev.profold.client.internal.threads.Fixtures.states;
import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.Kind;
import dev.profold.client.ThreadAggregation;
import dev.profold.reduce.Aggregate;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Laws of the thread aggregators on generated intervals, each checked against a naive reference.
 *
 * <p>Values are multiples of 1/8 below 512, so every sum and sum of squares is exact and merged
 * aggregates can be compared exactly whatever the merge order. Contexts 1 and 2 are COMPUTE, 3
 * WAIT, 4 IO; metric 1 is the time metric. Few contexts, groups and names make equal visited sets,
 * shared names and ties frequent.
 */
class ThreadAggregatorPropertiesTest {
  static final int TIME = 1;
  static final Map<Integer, Kind> CONTEXTS_KINDS =
      Map.of(1, Kind.COMPUTE, 2, Kind.COMPUTE, 3, Kind.WAIT, 4, Kind.IO);
  static final ContextView CONTEXTS = new Fixtures.FakeContexts(CONTEXTS_KINDS, 1);

  record CellSpec(int context, int metric, List<Integer> eighths) {}

  record ThreadSpec(int group, int name, boolean initial, List<CellSpec> cells) {}

  @Provide
  Arbitrary<List<ThreadSnapshot>> threads() {
    Arbitrary<CellSpec> cell =
        Combinators.combine(
                Arbitraries.integers().between(1, 4),
                Arbitraries.integers().between(1, 3),
                Arbitraries.integers().between(0, 4095).list().ofMinSize(1).ofMaxSize(4))
            .as(CellSpec::new);
    Arbitrary<ThreadSpec> thread =
        Combinators.combine(
                Arbitraries.integers().between(0, 2),
                Arbitraries.integers().between(0, 3),
                Arbitraries.integers().between(0, 5).map(i -> i == 0),
                cell.list().ofMaxSize(8))
            .as(ThreadSpec::new);
    return thread.list().ofMaxSize(14).map(ThreadAggregatorPropertiesTest::build);
  }

  static List<ThreadSnapshot> build(List<ThreadSpec> specs) {
    List<ThreadSnapshot> out = new ArrayList<>();
    for (int i = 0; i < specs.size(); i++) {
      ThreadSpec s = specs.get(i);
      Map<List<Integer>, Cell> cells = new LinkedHashMap<>(); // at most one per (context, metric)
      for (CellSpec c : s.cells()) {
        Aggregate a = new Aggregate();
        c.eighths().forEach(k -> a.record(k / 8.0));
        cells.putIfAbsent(List.of(c.context(), c.metric()), new Cell(c.context(), c.metric(), a));
      }
      long id = 1 + (i * 37L) % 101; // distinct, not in input order
      out.add(
          new ThreadSnapshot(
              id, "t" + s.name(), "g" + s.group(), s.initial(), new ArrayList<>(cells.values())));
    }
    return out;
  }

  static List<AggregatedEntry> run(ThreadAggregation mode, List<ThreadSnapshot> threads) {
    return ThreadAggregators.forMode(mode).aggregate(threads, CONTEXTS, TIME);
  }

  /** Key (group, context, metric) of a merge reference. */
  record Gcm(String group, int context, int metric) {}

  static Map<Gcm, Aggregate> reference(List<ThreadSnapshot> threads) {
    Map<Gcm, Aggregate> m = new HashMap<>();
    for (ThreadSnapshot t : threads) {
      for (Cell c : t.cells()) {
        m.computeIfAbsent(new Gcm(t.group(), c.context(), c.metric()), k -> new Aggregate())
            .merge(c.state());
      }
    }
    return m;
  }

  /** Per (context, metric), the merge of the given threads' cells. */
  static Map<List<Integer>, Aggregate> mergeOf(List<ThreadSnapshot> threads) {
    Map<List<Integer>, Aggregate> m = new HashMap<>();
    for (ThreadSnapshot t : threads) {
      for (Cell c : t.cells()) {
        m.computeIfAbsent(List.of(c.context(), c.metric()), k -> new Aggregate()).merge(c.state());
      }
    }
    return m;
  }

  /** Per (context, metric), the entries of one group and one label value. */
  static Map<List<Integer>, Aggregate> partition(
      List<AggregatedEntry> out, String group, String label, String value) {
    Map<List<Integer>, Aggregate> m = new HashMap<>();
    for (AggregatedEntry e : out) {
      if (e.labels().get(ThreadAggregators.GROUP).equals(group)
          && value.equals(e.labels().get(label))) {
        assertThat(m.put(List.of(e.context(), e.metric()), e.state())).isNull();
      }
    }
    return m;
  }

  static Map<String, List<ThreadSnapshot>> byGroup(List<ThreadSnapshot> threads) {
    Map<String, List<ThreadSnapshot>> m = new TreeMap<>();
    for (ThreadSnapshot t : threads) {
      m.computeIfAbsent(t.group(), g -> new ArrayList<>()).add(t);
    }
    m.values().forEach(l -> l.sort(Comparator.comparingLong(ThreadSnapshot::threadId)));
    return m;
  }

  @Property
  void totalsArePreserved(
      @ForAll("threads") List<ThreadSnapshot> threads, @ForAll ThreadAggregation mode) {
    Map<Gcm, Aggregate> actual = new HashMap<>();
    for (AggregatedEntry e : run(mode, threads)) {
      if (!e.perThread()) {
        actual
            .computeIfAbsent(
                new Gcm(e.labels().get(ThreadAggregators.GROUP), e.context(), e.metric()),
                k -> new Aggregate())
            .merge(e.state());
      }
    }
    assertThat(actual).isEqualTo(reference(threads));
  }

  @Property
  void inputsAreUntouchedAndOutputsAreFresh(
      @ForAll("threads") List<ThreadSnapshot> threads, @ForAll ThreadAggregation mode) {
    List<Aggregate> before = copies(threads);
    List<AggregatedEntry> out = run(mode, threads);
    assertThat(states(threads)).isEqualTo(before);
    Set<Aggregate> inputs = Collections.newSetFromMap(new IdentityHashMap<>());
    inputs.addAll(states(threads));
    for (AggregatedEntry e : out) {
      assertThat(inputs.contains(e.state())).as("output shares an input aggregate").isFalse();
    }
  }

  @Property
  void outputIsWellFormedAndIndependentOfInputOrder(
      @ForAll("threads") List<ThreadSnapshot> threads,
      @ForAll ThreadAggregation mode,
      @ForAll Random random) {
    List<AggregatedEntry> out = run(mode, threads);
    String extra =
        switch (mode) {
          case NONE -> ThreadAggregators.THREAD;
          case SUM, SET -> null;
          case KEY -> ThreadAggregators.ROLE;
          case CALLTREE -> ThreadAggregators.CLUSTER;
        };
    List<String> expectedNames =
        extra == null ? List.of(ThreadAggregators.GROUP) : List.of(ThreadAggregators.GROUP, extra);
    Set<List<Object>> keys = new HashSet<>();
    for (AggregatedEntry e : out) {
      assertThat(List.copyOf(e.labels().keySet())).isEqualTo(expectedNames);
      assertThat(e.state().count()).isPositive();
      assertThat(e.perThread()).isEqualTo(mode == ThreadAggregation.SET && e.perThread());
      assertThat(keys.add(List.of(e.labels(), e.context(), e.metric(), e.perThread()))).isTrue();
    }
    List<ThreadSnapshot> shuffled = new ArrayList<>(threads);
    Collections.shuffle(shuffled, random);
    assertThat(run(mode, shuffled)).isEqualTo(out);
  }

  @Property
  void noneKeepsEachThreadUnderADistinctLabel(@ForAll("threads") List<ThreadSnapshot> threads) {
    List<AggregatedEntry> out = run(ThreadAggregation.NONE, threads);
    byGroup(threads)
        .forEach(
            (group, members) -> {
              Set<String> expected = new HashSet<>();
              for (ThreadSnapshot t : members) {
                boolean shared =
                    members.stream().filter(o -> o.name().equals(t.name())).count() > 1;
                String label = shared ? t.name() + "#" + t.threadId() : t.name();
                assertThat(partition(out, group, ThreadAggregators.THREAD, label))
                    .isEqualTo(mergeOf(List.of(t)));
                if (!t.cells().isEmpty()) {
                  expected.add(label);
                }
              }
              assertThat(
                      out.stream()
                          .filter(e -> e.labels().get(ThreadAggregators.GROUP).equals(group))
                          .map(e -> e.labels().get(ThreadAggregators.THREAD))
                          .collect(Collectors.toSet()))
                  .isEqualTo(expected);
            });
  }

  @Property
  void setPerThreadCountsEqualVisitingThreads(@ForAll("threads") List<ThreadSnapshot> threads) {
    Map<Gcm, Aggregate> spread = new HashMap<>();
    for (ThreadSnapshot t : threads) {
      for (Cell c : t.cells()) {
        spread
            .computeIfAbsent(new Gcm(t.group(), c.context(), c.metric()), k -> new Aggregate())
            .record(c.state().sum());
      }
    }
    Map<Gcm, Aggregate> actual = new HashMap<>();
    Map<Gcm, Aggregate> sums = new HashMap<>();
    for (AggregatedEntry e : run(ThreadAggregation.SET, threads)) {
      Gcm k = new Gcm(e.labels().get(ThreadAggregators.GROUP), e.context(), e.metric());
      assertThat((e.perThread() ? actual : sums).put(k, e.state())).isNull();
    }
    assertThat(actual).isEqualTo(spread);
    assertThat(actual.keySet()).isEqualTo(sums.keySet());
    actual.forEach(
        (k, perThread) -> {
          long visiting =
              threads.stream()
                  .filter(
                      t ->
                          t.group().equals(k.group())
                              && t.cells().stream()
                                  .anyMatch(
                                      c -> c.context() == k.context() && c.metric() == k.metric()))
                  .count();
          assertThat(perThread.count()).isEqualTo(visiting);
          assertThat(perThread.sum()).isEqualTo(sums.get(k).sum());
        });
  }

  static double computeTime(ThreadSnapshot t) {
    return t.cells().stream()
        .filter(c -> c.metric() == TIME && CONTEXTS.kind(c.context()) == Kind.COMPUTE)
        .mapToDouble(c -> c.state().sum())
        .sum();
  }

  /** The reference choice of KEY roles among one group's threads: role -> thread ids. */
  static Map<String, List<Long>> referenceRoles(List<ThreadSnapshot> members) {
    Comparator<ThreadSnapshot> byComputeTime =
        Comparator.comparingDouble(ThreadAggregatorPropertiesTest::computeTime);
    List<ThreadSnapshot> ranked =
        members.stream()
            .filter(t -> !t.initial())
            .sorted(byComputeTime.reversed().thenComparingLong(ThreadSnapshot::threadId))
            .toList();
    List<ThreadSnapshot> slowest = ranked.isEmpty() ? List.of() : List.of(ranked.get(0));
    List<ThreadSnapshot> others = ranked.subList(slowest.size(), ranked.size());
    List<ThreadSnapshot> fastest =
        others.stream()
            .min(byComputeTime.thenComparingLong(ThreadSnapshot::threadId))
            .map(List::of)
            .orElse(List.of());
    return Map.of(
        ThreadAggregators.ROLE_INITIAL,
        ids(members.stream().filter(ThreadSnapshot::initial).toList()),
        ThreadAggregators.ROLE_SLOWEST,
        ids(slowest),
        ThreadAggregators.ROLE_FASTEST,
        ids(fastest),
        ThreadAggregators.ROLE_REST,
        ids(others.stream().filter(t -> !fastest.contains(t)).toList()));
  }

  static List<Long> ids(List<ThreadSnapshot> threads) {
    return threads.stream().map(ThreadSnapshot::threadId).toList();
  }

  /**
   * Checks that each KEY role's entries of {@code threads} merge the threads {@code roles} names.
   */
  static void assertRoles(
      List<ThreadSnapshot> threads, Map<String, Map<String, List<Long>>> rolesByGroup) {
    List<AggregatedEntry> out = run(ThreadAggregation.KEY, threads);
    byGroup(threads)
        .forEach(
            (group, members) ->
                rolesByGroup
                    .get(group)
                    .forEach(
                        (role, ids) ->
                            assertThat(partition(out, group, ThreadAggregators.ROLE, role))
                                .as("%s of %s", role, group)
                                .isEqualTo(
                                    mergeOf(
                                        members.stream()
                                            .filter(t -> ids.contains(t.threadId()))
                                            .toList()))));
    Set<String> roles = new HashSet<>();
    out.forEach(e -> roles.add(e.labels().get(ThreadAggregators.ROLE)));
    assertThat(roles)
        .isSubsetOf(
            ThreadAggregators.ROLE_INITIAL,
            ThreadAggregators.ROLE_SLOWEST,
            ThreadAggregators.ROLE_FASTEST,
            ThreadAggregators.ROLE_REST);
  }

  static Map<String, Map<String, List<Long>>> referenceRolesByGroup(List<ThreadSnapshot> threads) {
    Map<String, Map<String, List<Long>>> m = new HashMap<>();
    byGroup(threads).forEach((group, members) -> m.put(group, referenceRoles(members)));
    return m;
  }

  @Property
  void keyPicksByComputeTimeExcludingTheInitialThread(
      @ForAll("threads") List<ThreadSnapshot> threads) {
    assertRoles(threads, referenceRolesByGroup(threads));
  }

  @Property
  void keyIgnoresTimeOutsideComputeRegions(
      @ForAll("threads") List<ThreadSnapshot> threads, @ForAll Random random) {
    // Adding values to every cell outside (COMPUTE, time) moves no thread to another role.
    List<ThreadSnapshot> padded = new ArrayList<>();
    for (ThreadSnapshot t : threads) {
      List<Cell> cells = new ArrayList<>();
      for (Cell c : t.cells()) {
        Aggregate a = Fixtures.copy(c.state());
        if (c.metric() != TIME || CONTEXTS.kind(c.context()) != Kind.COMPUTE) {
          a.record(random.nextInt(1 << 16) / 8.0);
        }
        cells.add(new Cell(c.context(), c.metric(), a));
      }
      padded.add(new ThreadSnapshot(t.threadId(), t.name(), t.group(), t.initial(), cells));
    }
    assertRoles(padded, referenceRolesByGroup(threads));
  }

  static Set<Integer> visited(ThreadSnapshot t) {
    return t.cells().stream().map(Cell::context).collect(Collectors.toCollection(TreeSet::new));
  }

  @Property
  void calltreeClustersExactlyTheThreadsWithEqualContextSets(
      @ForAll("threads") List<ThreadSnapshot> threads) {
    List<AggregatedEntry> out = run(ThreadAggregation.CALLTREE, threads);
    Map<String, List<List<Long>>> clusters = ThreadAggregators.clusters(threads);
    assertThat(clusters.keySet()).isEqualTo(byGroup(threads).keySet());
    byGroup(threads)
        .forEach(
            (group, members) -> {
              List<List<Long>> ids = clusters.get(group);
              assertThat(ids.stream().mapToInt(List::size).sum()).isEqualTo(members.size());
              assertThat(ids)
                  .hasSize(
                      (int)
                          members.stream()
                              .map(ThreadAggregatorPropertiesTest::visited)
                              .distinct()
                              .count());
              Map<Long, ThreadSnapshot> byId = new HashMap<>();
              members.forEach(t -> byId.put(t.threadId(), t));
              long previousSmallest = Long.MIN_VALUE;
              for (int n = 0; n < ids.size(); n++) {
                List<ThreadSnapshot> cluster = ids.get(n).stream().map(byId::get).toList();
                Set<Integer> set = visited(cluster.get(0));
                // exactly the threads whose visited set is this one
                assertThat(ids.get(n))
                    .isSorted()
                    .containsExactlyElementsOf(
                        members.stream()
                            .filter(t -> visited(t).equals(set))
                            .map(ThreadSnapshot::threadId)
                            .toList());
                assertThat(ids.get(n).get(0)).isGreaterThan(previousSmallest);
                previousSmallest = ids.get(n).get(0);
                assertThat(partition(out, group, ThreadAggregators.CLUSTER, Integer.toString(n)))
                    .isEqualTo(mergeOf(cluster));
              }
            });
  }
}
