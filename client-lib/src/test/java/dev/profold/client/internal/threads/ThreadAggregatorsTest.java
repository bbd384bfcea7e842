package dev.profold.client.internal.threads;

import static dev.profold.client.internal.threads.Fixtures.agg;
import static dev.profold.client.internal.threads.Fixtures.cell;
import static dev.profold.client.internal.threads.Fixtures.entry;
import static dev.profold.client.internal.threads.Fixtures.initial;
import static dev.profold.client.internal.threads.Fixtures.labels;
import static dev.profold.client.internal.threads.Fixtures.thread;
import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.Kind;
import dev.profold.client.ThreadAggregation;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Each strategy's exact output on one hand-built interval. */
class ThreadAggregatorsTest {
  static final int WORK = 1; // COMPUTE
  static final int QUEUE = 2; // WAIT
  static final int INIT = 3; // COMPUTE, initial thread only
  static final int TIME = 1;
  static final int BYTES = 2;
  static final String POOL = "pool-*";
  static final String IO = "io-*";

  final ContextView contexts =
      new Fixtures.FakeContexts(
          Map.of(WORK, Kind.COMPUTE, QUEUE, Kind.WAIT, INIT, Kind.COMPUTE), 1);

  /**
   * COMPUTE time (metric TIME in WORK and INIT): main 6 (initial), w-a 3, w-b 1 (but 9 of WAIT),
   * worker#4 2, worker#5 1.5; visited: main {WORK, INIT}, w-a/w-b/worker#4 {WORK, QUEUE}, worker#5
   * {WORK}.
   */
  final List<ThreadSnapshot> threads =
      List.of(
          thread(6, "io", IO, cell(QUEUE, TIME, 4.0)),
          thread(3, "w-b", POOL, cell(WORK, TIME, 1.0), cell(QUEUE, TIME, 9.0)),
          initial(1, "main", POOL, cell(INIT, TIME, 5.0), cell(WORK, TIME, 1.0)),
          thread(
              2,
              "w-a",
              POOL,
              cell(WORK, TIME, 2.0, 1.0),
              cell(QUEUE, TIME, 0.5),
              cell(WORK, BYTES, 100)),
          thread(4, "worker", POOL, cell(WORK, TIME, 2.0), cell(QUEUE, TIME, 0.25)),
          thread(5, "worker", POOL, cell(WORK, TIME, 1.5)));

  List<AggregatedEntry> run(ThreadAggregation mode) {
    return ThreadAggregators.forMode(mode).aggregate(threads, contexts, TIME);
  }

  @Test
  void noneGivesEveryThreadItsOwnLabelEvenWhenADisambiguatedNameIsAnotherThreadsName() {
    List<ThreadSnapshot> clash =
        List.of(
            thread(5, "a", POOL, cell(WORK, TIME, 1.0)),
            thread(6, "a", POOL, cell(WORK, TIME, 2.0)),
            thread(7, "a#5", POOL, cell(WORK, TIME, 4.0)));
    List<AggregatedEntry> out =
        ThreadAggregators.forMode(ThreadAggregation.NONE).aggregate(clash, contexts, TIME);
    assertThat(out).hasSize(3);
    assertThat(out.stream().map(e -> e.labels().get("thread")))
        .containsExactlyInAnyOrder("a#5#5", "a#6", "a#5");
    assertThat(out.stream().filter(e -> e.labels().get("thread").equals("a#5")))
        .singleElement()
        .satisfies(e -> assertThat(e.state().sum()).isEqualTo(4.0));
  }

  @Test
  void noneKeepsEveryThreadAndDisambiguatesSharedNames() {
    Map<String, String> io = labels("thread.group", IO, "thread", "io");
    Map<String, String> main = labels("thread.group", POOL, "thread", "main");
    Map<String, String> a = labels("thread.group", POOL, "thread", "w-a");
    Map<String, String> b = labels("thread.group", POOL, "thread", "w-b");
    Map<String, String> w4 = labels("thread.group", POOL, "thread", "worker#4");
    Map<String, String> w5 = labels("thread.group", POOL, "thread", "worker#5");
    assertThat(run(ThreadAggregation.NONE))
        .containsExactly(
            entry(QUEUE, io, TIME, false, agg(4.0)),
            entry(WORK, main, TIME, false, agg(1.0)),
            entry(INIT, main, TIME, false, agg(5.0)),
            entry(WORK, a, TIME, false, agg(2.0, 1.0)),
            entry(WORK, a, BYTES, false, agg(100)),
            entry(QUEUE, a, TIME, false, agg(0.5)),
            entry(WORK, b, TIME, false, agg(1.0)),
            entry(QUEUE, b, TIME, false, agg(9.0)),
            entry(WORK, w4, TIME, false, agg(2.0)),
            entry(QUEUE, w4, TIME, false, agg(0.25)),
            entry(WORK, w5, TIME, false, agg(1.5)));
  }

  @Test
  void sumMergesEachGroup() {
    Map<String, String> io = labels("thread.group", IO);
    Map<String, String> pool = labels("thread.group", POOL);
    assertThat(run(ThreadAggregation.SUM))
        .containsExactly(
            entry(QUEUE, io, TIME, false, agg(4.0)),
            entry(WORK, pool, TIME, false, agg(1.0, 2.0, 1.0, 1.0, 2.0, 1.5)),
            entry(WORK, pool, BYTES, false, agg(100)),
            entry(QUEUE, pool, TIME, false, agg(0.5, 9.0, 0.25)),
            entry(INIT, pool, TIME, false, agg(5.0)));
  }

  @Test
  void setAddsTheDistributionOfThreadTotals() {
    Map<String, String> io = labels("thread.group", IO);
    Map<String, String> pool = labels("thread.group", POOL);
    List<AggregatedEntry> out = run(ThreadAggregation.SET);
    assertThat(out)
        .containsExactly(
            entry(QUEUE, io, TIME, false, agg(4.0)),
            entry(QUEUE, io, TIME, true, agg(4.0)),
            entry(WORK, pool, TIME, false, agg(1.0, 2.0, 1.0, 1.0, 2.0, 1.5)),
            // one value per visiting thread: main 1, w-a 2+1, w-b 1, worker#4 2, worker#5 1.5
            entry(WORK, pool, TIME, true, agg(1.0, 3.0, 1.0, 2.0, 1.5)),
            entry(WORK, pool, BYTES, false, agg(100)),
            entry(WORK, pool, BYTES, true, agg(100)),
            entry(QUEUE, pool, TIME, false, agg(0.5, 9.0, 0.25)),
            entry(QUEUE, pool, TIME, true, agg(0.5, 9.0, 0.25)),
            entry(INIT, pool, TIME, false, agg(5.0)),
            entry(INIT, pool, TIME, true, agg(5.0)));
    AggregatedEntry spread = out.get(3);
    assertThat(spread.state().count()).isEqualTo(5);
    assertThat(spread.state().min()).isEqualTo(1.0);
    assertThat(spread.state().max()).isEqualTo(3.0);
    assertThat(spread.state().sum()).isEqualTo(8.5);
    assertThat(spread.state().sumOfSquares()).isEqualTo(1 + 9 + 1 + 4 + 2.25);
  }

  @Test
  void keyKeepsInitialSlowestFastestByComputeTimeAndMergesTheRest() {
    // main has the most COMPUTE time but is initial; w-b has the most time overall (WAIT) but the
    // least COMPUTE time, so it is the fastest; w-a (3) is the slowest.
    Map<String, String> ioSlowest = labels("thread.group", IO, "thread.role", "slowest");
    Map<String, String> initial = labels("thread.group", POOL, "thread.role", "initial");
    Map<String, String> slowest = labels("thread.group", POOL, "thread.role", "slowest");
    Map<String, String> fastest = labels("thread.group", POOL, "thread.role", "fastest");
    Map<String, String> rest = labels("thread.group", POOL, "thread.role", "rest");
    assertThat(run(ThreadAggregation.KEY))
        .containsExactly(
            entry(QUEUE, ioSlowest, TIME, false, agg(4.0)),
            entry(WORK, initial, TIME, false, agg(1.0)),
            entry(INIT, initial, TIME, false, agg(5.0)),
            entry(WORK, slowest, TIME, false, agg(2.0, 1.0)),
            entry(WORK, slowest, BYTES, false, agg(100)),
            entry(QUEUE, slowest, TIME, false, agg(0.5)),
            entry(WORK, fastest, TIME, false, agg(1.0)),
            entry(QUEUE, fastest, TIME, false, agg(9.0)),
            entry(WORK, rest, TIME, false, agg(2.0, 1.5)),
            entry(QUEUE, rest, TIME, false, agg(0.25)));
  }

  @Test
  void keyBreaksTiesByThreadIdAndNeedsNoInitialThread() {
    List<ThreadSnapshot> tied =
        List.of(
            thread(9, "c", "g", cell(WORK, TIME, 1.0)),
            thread(7, "a", "g", cell(WORK, TIME, 1.0)),
            thread(8, "b", "g", cell(WORK, TIME, 1.0), cell(QUEUE, TIME, 0.5)));
    List<AggregatedEntry> out =
        ThreadAggregators.forMode(ThreadAggregation.KEY).aggregate(tied, contexts, TIME);
    assertThat(out)
        .containsExactly(
            entry(WORK, labels("thread.group", "g", "thread.role", "slowest"), TIME, false, agg(1)),
            entry(WORK, labels("thread.group", "g", "thread.role", "fastest"), TIME, false, agg(1)),
            entry(
                QUEUE,
                labels("thread.group", "g", "thread.role", "fastest"),
                TIME,
                false,
                agg(0.5)),
            entry(WORK, labels("thread.group", "g", "thread.role", "rest"), TIME, false, agg(1)));
  }

  @Test
  void keyCountsNestedComputeTimeOnce() {
    // handle (10) > parse (11) > validate (12), all COMPUTE, each region's time inclusive: thread
    // a did 1 s of work, recorded as 1 s in each of the three. Thread b did 2 s of flat work.
    // Before, a scored 3 s and was the slowest.
    int handle = 10;
    int parse = 11;
    int validate = 12;
    ContextView nested =
        new Fixtures.FakeContexts(
            Map.of(handle, Kind.COMPUTE, parse, Kind.COMPUTE, validate, Kind.COMPUTE),
            1,
            Map.of(parse, handle, validate, parse));
    List<ThreadSnapshot> two =
        List.of(
            thread(
                2,
                "a",
                "g",
                cell(handle, TIME, 1.0),
                cell(parse, TIME, 1.0),
                cell(validate, TIME, 1.0)),
            thread(3, "b", "g", cell(handle, TIME, 2.0)));
    assertThat(ThreadAggregators.forMode(ThreadAggregation.KEY).aggregate(two, nested, TIME))
        .filteredOn(e -> e.labels().get("thread.role").equals("slowest"))
        .extracting(e -> e.state().sum())
        .containsExactly(2.0);
  }

  @Test
  void keyRanksBySelfComputeTimeNotAWaitNestedInIt() {
    // round (10, COMPUTE) > work (11, COMPUTE) and barrier (12, WAIT): every thread spends 4 s in
    // a round; a works 3 s and waits 1 s, b works 1 s and waits 3 s. a is the slowest.
    int round = 10;
    int work = 11;
    int barrier = 12;
    ContextView rounds =
        new Fixtures.FakeContexts(
            Map.of(round, Kind.COMPUTE, work, Kind.COMPUTE, barrier, Kind.WAIT),
            1,
            Map.of(work, round, barrier, round));
    List<ThreadSnapshot> two =
        List.of(
            thread(
                2,
                "b",
                "g",
                cell(round, TIME, 4.0),
                cell(work, TIME, 1.0),
                cell(barrier, TIME, 3.0)),
            thread(
                3,
                "a",
                "g",
                cell(round, TIME, 4.0),
                cell(work, TIME, 3.0),
                cell(barrier, TIME, 1.0)));
    assertThat(ThreadAggregators.forMode(ThreadAggregation.KEY).aggregate(two, rounds, TIME))
        .filteredOn(e -> e.labels().get("thread.role").equals("slowest") && e.context() == work)
        .extracting(e -> e.state().sum())
        .containsExactly(3.0);
  }

  @Test
  void keyCountsTheAgentsSampledFramesWhole() {
    // The agent's time is each frame's own: run/compute (10) holds 0.5 s of samples and
    // run/compute/sqrt (11) 0.5 s more. Thread a worked 1 s, b 0.75 s: a is the slowest.
    int compute = 10;
    int sqrt = 11;
    Fixtures.FakeContexts sampled =
        new Fixtures.FakeContexts(
            Map.of(compute, Kind.COMPUTE, sqrt, Kind.COMPUTE), 1, Map.of(sqrt, compute));
    sampled.selfTimed = java.util.Set.of(compute, sqrt);
    List<ThreadSnapshot> two =
        List.of(
            thread(2, "a", "g", cell(compute, TIME, 0.5), cell(sqrt, TIME, 0.5)),
            thread(3, "b", "g", cell(compute, TIME, 0.75)));
    assertThat(ThreadAggregators.forMode(ThreadAggregation.KEY).aggregate(two, sampled, TIME))
        .filteredOn(e -> e.labels().get("thread.role").equals("slowest"))
        .extracting(AggregatedEntry::context)
        .containsExactly(compute, sqrt);
  }

  @Test
  void keyWithTwoWorkersHasNoRest() {
    List<ThreadSnapshot> two =
        List.of(
            initial(1, "main", "g", cell(INIT, TIME, 50.0)),
            thread(2, "a", "g", cell(WORK, TIME, 1.0)),
            thread(3, "b", "g", cell(WORK, TIME, 2.0)));
    assertThat(ThreadAggregators.forMode(ThreadAggregation.KEY).aggregate(two, contexts, TIME))
        .extracting(e -> e.labels().get("thread.role") + ":" + e.state().sum())
        .containsExactly("initial:50.0", "slowest:2.0", "fastest:1.0");
  }

  @Test
  void calltreeClustersThreadsWithEqualContextSets() {
    Map<String, String> io0 = labels("thread.group", IO, "thread.cluster", "0");
    Map<String, String> c0 = labels("thread.group", POOL, "thread.cluster", "0");
    Map<String, String> c1 = labels("thread.group", POOL, "thread.cluster", "1");
    Map<String, String> c2 = labels("thread.group", POOL, "thread.cluster", "2");
    assertThat(run(ThreadAggregation.CALLTREE))
        .containsExactly(
            entry(QUEUE, io0, TIME, false, agg(4.0)),
            entry(WORK, c0, TIME, false, agg(1.0)),
            entry(INIT, c0, TIME, false, agg(5.0)),
            // w-a, w-b, worker#4: {WORK, QUEUE}, whatever the metrics
            entry(WORK, c1, TIME, false, agg(2.0, 1.0, 1.0, 2.0)),
            entry(WORK, c1, BYTES, false, agg(100)),
            entry(QUEUE, c1, TIME, false, agg(0.5, 9.0, 0.25)),
            entry(WORK, c2, TIME, false, agg(1.5)));
    assertThat(ThreadAggregators.clusters(threads))
        .containsExactly(
            Map.entry(IO, List.of(List.of(6L))),
            Map.entry(POOL, List.of(List.of(1L), List.of(2L, 3L, 4L), List.of(5L))));
  }

  @Test
  void noThreadsNoEntries() {
    for (ThreadAggregation mode : ThreadAggregation.values()) {
      assertThat(ThreadAggregators.forMode(mode).aggregate(List.of(), contexts, TIME)).isEmpty();
    }
    assertThat(ThreadAggregators.clusters(List.of())).isEmpty();
  }

  @Test
  void everyModeHasItsWireValue() {
    assertThat(ThreadAggregation.values())
        .extracting(m -> ThreadAggregators.toProto(m).name())
        .containsExactly(
            "THREAD_AGGREGATION_NONE",
            "THREAD_AGGREGATION_SUM",
            "THREAD_AGGREGATION_SET",
            "THREAD_AGGREGATION_KEY",
            "THREAD_AGGREGATION_CALLTREE");
  }
}
