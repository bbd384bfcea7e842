package dev.profold.collector.analysis;

import static dev.profold.proto.v1.AttributeKind.ATTRIBUTE_KIND_DIMENSION;
import static dev.profold.proto.v1.AttributeKind.ATTRIBUTE_KIND_MEASUREMENT;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_COMPUTE;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_SYNC;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_WAIT;
import static dev.profold.proto.v1.ValueType.VALUE_TYPE_DOUBLE;
import static dev.profold.proto.v1.ValueType.VALUE_TYPE_STRING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.fold.FoldConfig;
import dev.profold.collector.fold.FoldEngine;
import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.testing.Deltas;
import dev.profold.collector.testing.MutableClock;
import dev.profold.collector.testing.ThreadsScheme;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Entry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Thread detail through a real fold (one scheme that keeps what NONE, SET and KEY send) and the
 * imbalance across a group's threads derived from it. The planted pool: thread 0 does 4 s of {@code
 * work}, three others 1 s each and wait for it at {@code barrier}.
 */
class ThreadRegionImbalanceValuesTest {
  private static final long S = 1_000_000_000L;
  private static final long INTERVAL = 10 * S;
  private static final long T0 = 1_700_000_000L * S;
  private static final int GROUP_ATTR = 3;
  private static final int PER_THREAD = 4;
  private static final int THREAD_ATTR = 5;
  private static final int ROLE_ATTR = 6;
  private static final int POOL = Deltas.FREE_STRING_IDS;
  private static final int NAMES = POOL + 1; // thread names or roles from here
  static final String QUERY = ThreadsScheme.QUERY;
  private static final AnalysisSpec SPEC = new AnalysisSpec(0.01, 0.7, 10);

  private final MutableClock clock = MutableClock.atNanos(T0 + S);
  private final GlobalDictionary dictionary = new GlobalDictionary(10_000);
  private FoldEngine engine;

  private void start() throws Exception {
    engine =
        new FoldEngine(
            new FoldConfig(
                INTERVAL,
                5,
                1000,
                20,
                List.of(
                    SchemeDefinition.compile(
                        "threads", QUERY, Duration.ofNanos(INTERVAL), 1000, 10))),
            dictionary,
            clock,
            new CollectorMetrics(new SimpleMeterRegistry()));
  }

  private static Deltas.Builder delta() {
    return Deltas.source("reports", "r-1")
        .incarnation(7)
        .seq(1)
        .interval(T0, T0 + INTERVAL)
        .attribute(GROUP_ATTR, "thread.group", VALUE_TYPE_STRING, ATTRIBUTE_KIND_DIMENSION, "")
        .attribute(THREAD_ATTR, "thread", VALUE_TYPE_STRING, ATTRIBUTE_KIND_DIMENSION, "")
        .attribute(ROLE_ATTR, "thread.role", VALUE_TYPE_STRING, ATTRIBUTE_KIND_DIMENSION, "")
        .attribute(
            PER_THREAD, "time.per_thread", VALUE_TYPE_DOUBLE, ATTRIBUTE_KIND_MEASUREMENT, "seconds")
        .string(POOL, "worker-*")
        .region(1, "work", REGION_KIND_COMPUTE)
        .region(2, "barrier", REGION_KIND_WAIT);
  }

  private static Entry.Builder entry(int region) {
    return Entry.newBuilder()
        .addKey(Deltas.regionKey(region))
        .addKey(AttributeValue.newBuilder().setAttributeId(GROUP_ATTR).setStringId(POOL));
  }

  /** SET: one value per visiting thread. */
  private static Entry perThread(int region, double... totals) {
    return entry(region).addMeasurements(Deltas.measurement(PER_THREAD, totals)).build();
  }

  /** NONE or KEY: the time of one thread or role ({@code attr}, string {@code name}). */
  private static Entry member(int region, int attr, int name, double seconds) {
    return entry(region)
        .addKey(AttributeValue.newBuilder().setAttributeId(attr).setStringId(name))
        .addMeasurements(Deltas.time(seconds))
        .build();
  }

  private void push(Deltas.Builder d, int threadsInGroup) {
    if (threadsInGroup > 0) {
      d.threads("worker-*", threadsInGroup, new long[6], 0, 0, 0);
    }
    engine.apply(d.decode(dictionary));
    clock.setNanos(T0 + 2 * INTERVAL); // the window closes
    engine.advance();
  }

  private List<DerivedValue> values() {
    return Catalogued.check(new ThreadRegionImbalanceValues(engine::snapshot, SPEC).current());
  }

  private static DerivedValue find(List<DerivedValue> all, String name, String path) {
    return all.stream()
        .filter(v -> v.name().equals(name) && v.labels().get("path").equals(path))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + name + " at " + path + " in " + all));
  }

  private static DerivedValue imbalance(List<DerivedValue> all, String path) {
    return find(all, ThreadRegionImbalanceValues.IMBALANCE, path);
  }

  @Test
  void setGivesTheExactImbalanceAndWaitingPerNode() throws Exception {
    start();
    push(
        delta().entry(perThread(1, 4.0, 1.0, 1.0, 1.0)).entry(perThread(2, 0.0625, 3.0, 3.0, 3.0)),
        0);
    List<DerivedValue> all = values();

    DerivedValue work = imbalance(all, "work");
    assertThat(work.labels())
        .isEqualTo(
            Map.of(
                "service", "reports",
                "instance", "r-1",
                "thread_group", "worker-*",
                "path", "work",
                "kind", "compute"));
    assertThat(work.value()).isEqualTo(4.0 - 7.0 / 4); // max - avg, planted
    assertThat(work.context())
        .containsEntry("threads", "4")
        .containsEntry("wait", "0")
        .containsEntry("source", "set")
        .containsEntry("estimate", "exact")
        .containsEntry("slowest_thread", ""); // SET does not say which thread
    assertThat(all.get(0)).as("most imbalance first").isEqualTo(work);

    DerivedValue barrier = imbalance(all, "barrier");
    assertThat(barrier.value()).isEqualTo(3.0 - 9.0625 / 4); // wait nodes: imb = max - avg
    DerivedValue waiting = find(all, ThreadRegionImbalanceValues.WAIT, "barrier");
    assertThat(waiting.value()).isEqualTo(9.0625 / 4); // and wait = avg
    assertThat(waiting.context()).containsEntry("category", "wait");
  }

  @Test
  void setThreadsThatNeverVisitedANodeCountAsZero() throws Exception {
    start();
    push(
        delta().entry(perThread(1, 4.0, 1.0, 1.0, 1.0)).entry(perThread(2, 0.0625, 3.0, 3.0, 3.0)),
        5); // the thread activity knows a fifth thread that did neither
    DerivedValue work = imbalance(values(), "work");
    assertThat(work.value()).isEqualTo(4.0 - 7.0 / 5);
    assertThat(work.context()).containsEntry("min", "0").containsEntry("threads", "5");
  }

  @Test
  void aGroupOfOneThreadGivesNothing() throws Exception {
    // A lone consumer: its imbalance read 0 and its whole wait 'balanced waiting'.
    start();
    push(
        delta()
            .string(NAMES, "worker-0")
            .entry(member(1, THREAD_ATTR, NAMES, 4.0))
            .entry(member(2, THREAD_ATTR, NAMES, 2.0)),
        1);
    assertThat(values()).isEmpty();
  }

  /** The planted pool as NONE sends it: one entry per thread and node. */
  private static Deltas.Builder none() {
    Deltas.Builder d = delta();
    double[] work = {4.0, 1.0, 1.0, 1.0};
    double[] barrier = {0.0625, 3.0, 3.0, 3.0};
    for (int t = 0; t < 4; t++) {
      d.string(NAMES + t, "worker-" + t)
          .entry(member(1, THREAD_ATTR, NAMES + t, work[t]))
          .entry(member(2, THREAD_ATTR, NAMES + t, barrier[t]));
    }
    return d;
  }

  @Test
  void noneGivesTheExactImbalanceAndNamesTheThreads() throws Exception {
    start();
    push(none(), 0);
    List<DerivedValue> all = values();
    DerivedValue work = imbalance(all, "work");
    assertThat(work.value()).isEqualTo(4.0 - 7.0 / 4);
    assertThat(work.context())
        .containsEntry("source", "none")
        .containsEntry("estimate", "exact")
        .containsEntry("slowest_thread", "worker-0")
        .containsEntry("fastest_thread", "worker-1") // ties: first by name
        .containsEntry("threads", "4")
        // the largest thread total: worker-1..3 spent 1 + 3 s
        .containsEntry("runtime", "4.0625");
    assertThat(find(all, ThreadRegionImbalanceValues.IMBALANCE_RATIO, "work").value())
        .isEqualTo((4.0 - 7.0 / 4) / 4.0625);
    assertThat(find(all, ThreadRegionImbalanceValues.WAIT, "barrier").value())
        .isEqualTo(9.0625 / 4);
  }

  @Test
  void noneCountsThreadsWithoutRecordsAsZero() throws Exception {
    start();
    push(none(), 6);
    DerivedValue work = imbalance(values(), "work");
    assertThat(work.value()).isEqualTo(4.0 - 7.0 / 6);
    assertThat(work.context())
        .containsEntry("min", "0")
        .containsEntry("fastest_thread", "2 threads without records")
        .containsEntry("threads", "6");
  }

  @Test
  void keysWaitAtASyncNodeIsAnUpperBound() throws Exception {
    // lock (sync): slowest 1 s, fastest 0.5 s, the rest 2 s over two threads (1 s each, though
    // one may have waited 0.25 s): KEY's min, 0.5 s, can only be above the true one.
    start();
    Deltas.Builder d = key(2.0).region(3, "lock", REGION_KIND_SYNC);
    d.entry(member(3, ROLE_ATTR, NAMES, 1.0))
        .entry(member(3, ROLE_ATTR, NAMES + 1, 0.5))
        .entry(member(3, ROLE_ATTR, NAMES + 2, 2.0));
    push(d, 4);
    DerivedValue lock = find(values(), ThreadRegionImbalanceValues.WAIT, "lock");
    assertThat(lock.value()).isEqualTo(0.5);
    assertThat(lock.context()).containsEntry("estimate", "upper bound");
    DerivedValue barrier = find(values(), ThreadRegionImbalanceValues.WAIT, "barrier");
    assertThat(barrier.context()).containsEntry("estimate", "exact"); // the avg
  }

  @Test
  void aDeltaThatClosesNoIntervalDoesNotRecomputeTheValues() throws Exception {
    // The fold hands out a new snapshot after every delta: before, every scrape after a delta
    // recomputed the whole thread analysis, though its inputs (closed intervals, thread counts)
    // had not changed.
    start();
    push(none(), 0);
    ThreadRegionImbalanceValues values = new ThreadRegionImbalanceValues(engine::snapshot, SPEC);
    List<DerivedValue> first = values.current();
    engine.apply(
        Deltas.source("other", "o-1")
            .seq(1)
            .interval(T0 + 2 * INTERVAL, T0 + 3 * INTERVAL)
            .region(1, "main", REGION_KIND_COMPUTE)
            .entry(1, 1.0)
            .decode(dictionary));

    assertThat(values.current()).isNotEmpty().isSameAs(first);
    push(none().seq(2).interval(T0 + INTERVAL, T0 + 2 * INTERVAL), 0); // a new closed interval
    clock.setNanos(T0 + 3 * INTERVAL);
    engine.advance();
    assertThat(values.current()).isNotSameAs(first);
  }

  @Test
  void noneWithATimeBeyondTheDoubleRangeStillGivesItsValues() throws Exception {
    // A client may send a state whose sum is +Inf (two times of 1e308): before, the profile
    // refused it with an exception that failed every scrape and every alert rule.
    start();
    Deltas.Builder d = delta();
    for (int t = 0; t < 4; t++) {
      d.string(NAMES + t, "worker-" + t)
          .entry(
              entry(1)
                  .addKey(
                      AttributeValue.newBuilder()
                          .setAttributeId(THREAD_ATTR)
                          .setStringId(NAMES + t))
                  .addMeasurements(t == 0 ? Deltas.time(1e308, 1e308) : Deltas.time(1.0))
                  .build())
          .entry(member(2, THREAD_ATTR, NAMES + t, 1.0));
    }
    push(d, 0);
    List<DerivedValue> all = values();

    DerivedValue work = imbalance(all, "work");
    assertThat(work.value()).isFinite().isGreaterThan(1e307);
    assertThat(work.context()).containsEntry("slowest_thread", "worker-0");
    assertThat(all).allSatisfy(v -> assertThat(v.value()).isFinite());
  }

  @Test
  void keyWithATimeBeyondTheDoubleRangeGivesNoNaN() throws Exception {
    // Before: the slowest role's sum of +Inf made max and avg infinite and the imbalance NaN.
    start();
    Deltas.Builder d = delta();
    String[] roles = {"slowest", "fastest", "rest"};
    for (int r = 0; r < roles.length; r++) {
      d.string(NAMES + r, roles[r])
          .entry(
              entry(1)
                  .addKey(
                      AttributeValue.newBuilder().setAttributeId(ROLE_ATTR).setStringId(NAMES + r))
                  .addMeasurements(r == 0 ? Deltas.time(1e308, 1e308) : Deltas.time(1.0))
                  .build());
    }
    push(d, 4);
    List<DerivedValue> all = values();

    assertThat(all).isNotEmpty().allSatisfy(v -> assertThat(v.value()).isFinite());
    assertThat(imbalance(all, "work").value()).isGreaterThan(1e307);
  }

  /**
   * The planted pool as KEY sends it: worker-0 is the slowest, worker-1 the fastest, worker-2 and
   * worker-3 merged as the rest.
   */
  private static Deltas.Builder key(double restWork) {
    Deltas.Builder d = delta();
    String[] roles = {"slowest", "fastest", "rest"};
    double[] work = {4.0, 1.0, restWork};
    double[] barrier = {0.0625, 3.0, 6.0};
    for (int r = 0; r < roles.length; r++) {
      d.string(NAMES + r, roles[r])
          .entry(member(1, ROLE_ATTR, NAMES + r, work[r]))
          .entry(member(2, ROLE_ATTR, NAMES + r, barrier[r]));
    }
    return d;
  }

  @Test
  void keyGivesTheExactImbalanceWhenTheRestIsBalanced() throws Exception {
    start();
    push(key(2.0), 4);
    List<DerivedValue> all = values();
    DerivedValue work = imbalance(all, "work");
    assertThat(work.value()).isEqualTo(4.0 - 7.0 / 4);
    assertThat(work.context())
        .containsEntry("source", "key")
        .containsEntry("estimate", "lower bound")
        .containsEntry("slowest_thread", "slowest")
        .containsEntry("threads", "4");
    assertThat(find(all, ThreadRegionImbalanceValues.WAIT, "barrier").value())
        .isEqualTo(9.0625 / 4);
  }

  @Test
  void keyUnderestimatesAnUnevenRestAndNeverOverstates() throws Exception {
    start();
    // The rest was 3.5 s and 0.5 s: the true max is 4 (slowest), the true min 0.5; KEY sees the
    // rest as 2 x 2 s, so min is 1 (the fastest): the sync imb avg - min is a lower bound.
    push(key(4.0).region(3, "lock", REGION_KIND_SYNC).entry(member(3, ROLE_ATTR, NAMES, 1)), 4);
    DerivedValue work = imbalance(values(), "work");
    assertThat(work.value()).isEqualTo(4.0 - 9.0 / 4);
    DerivedValue lock = imbalance(values(), "lock");
    // only the slowest thread took the lock: avg 0.25, min 0
    assertThat(lock.value()).isEqualTo(0.25);
  }

  @Test
  void keyWithARestAndNoThreadCountIsLeftOut() throws Exception {
    start();
    push(key(2.0), 0);
    assertThat(values()).isEmpty();
  }

  @Test
  void significanceAcrossThreadsFollowsBothCriteria() throws Exception {
    start();
    // work has two leaves: work/a holds the imbalance (thread 0: 3 s, others 0), work/b is even.
    Deltas.Builder d =
        delta()
            .region(3, 1, "a", REGION_KIND_COMPUTE)
            .region(4, 1, "b", REGION_KIND_COMPUTE)
            .entry(perThread(1, 4.0, 1.0, 1.0, 1.0))
            .entry(perThread(3, 3.0))
            .entry(perThread(4, 1.0, 1.0, 1.0, 1.0));
    push(d, 4);
    List<DerivedValue> all = values();
    DerivedValue a = imbalance(all, "work/a");
    assertThat(a.value()).isEqualTo(3.0 - 0.75);
    assertThat(a.context()).containsEntry("significant", "true");
    DerivedValue work = imbalance(all, "work");
    // work's imb (2.25) is all of its leaves' (2.25 + 0): it passes the leaf criterion too
    assertThat(work.context())
        .containsEntry("sum_imbalance", "2.25")
        .containsEntry("significant", "true");
    DerivedValue b = imbalance(all, "work/b");
    assertThat(b.value()).isZero();
    assertThat(b.context()).containsEntry("significant", "false");
    assertThat(all)
        .filteredOn(v -> v.name().equals(ThreadRegionImbalanceValues.SIGNIFICANT_IMBALANCE_RATIO))
        .extracting(v -> v.labels().get("path"))
        .containsExactlyInAnyOrder("work", "work/a");
    // runtime: an upper bound from each node's max, 4 s here (work's own time covers its leaves)
    assertThat(Double.parseDouble(a.context().get("runtime"))).isCloseTo(4.0, within(1e-9));
  }

  @Test
  void theValuesAreInMetrics() throws Exception {
    start();
    push(none(), 0);
    PrometheusRegistry registry = new PrometheusRegistry();
    registry.register(
        AnalysisExposition.threads(new ThreadRegionImbalanceValues(engine::snapshot, SPEC)));
    String text = RegionAnalysisValuesTest.text(registry.scrape());
    assertThat(text)
        .contains(
            "profold_thread_region_imbalance_seconds{instance=\"r-1\",kind=\"compute\","
                + "path=\"work\",service=\"reports\",thread_group=\"worker-*\"} 2.25")
        .contains("profold_thread_region_wait_seconds{")
        .contains("profold_thread_region_imbalance_ratio{");
  }
}
