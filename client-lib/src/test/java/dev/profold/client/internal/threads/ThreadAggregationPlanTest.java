package dev.profold.client.internal.threads;

import static dev.profold.client.internal.threads.Fixtures.cell;
import static dev.profold.client.internal.threads.Fixtures.thread;
import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.Kind;
import dev.profold.client.ThreadAggregation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ThreadAggregationPlanTest {
  private static final int TIME = 1;
  private final Fixtures.FakeContexts contexts =
      new Fixtures.FakeContexts(Map.of(10, Kind.COMPUTE, 11, Kind.WAIT), 99);

  private final List<ThreadSnapshot> http =
      List.of(
          thread(1, "http-exec-1", "http-exec-*", cell(10, TIME, 1.0)),
          thread(2, "http-exec-2", "http-exec-*", cell(10, TIME, 3.0)),
          thread(3, "http-exec-3", "http-exec-*", cell(10, TIME, 2.0)));
  private final List<ThreadSnapshot> workers =
      List.of(
          thread(4, "worker-1", "worker-*", cell(11, TIME, 5.0)),
          thread(5, "worker-2", "worker-*", cell(11, TIME, 7.0)));

  @Test
  void eachGroupGetsItsModeAndTheResultEqualsEachModeOnItsOwnGroups() {
    ThreadAggregationPlan plan =
        new ThreadAggregationPlan(
            ThreadAggregation.SUM, Map.of("http-exec-*", ThreadAggregation.KEY));
    List<ThreadSnapshot> all = new ArrayList<>(http);
    all.addAll(workers);
    List<AggregatedEntry> out = plan.aggregate(all, contexts, TIME);

    List<AggregatedEntry> expected = new ArrayList<>();
    expected.addAll(
        ThreadAggregators.forMode(ThreadAggregation.KEY).aggregate(http, contexts, TIME));
    expected.addAll(
        ThreadAggregators.forMode(ThreadAggregation.SUM).aggregate(workers, contexts, TIME));
    assertThat(out).hasSameSizeAs(expected);
    for (int i = 0; i < out.size(); i++) {
      assertThat(out.get(i).labels()).isEqualTo(expected.get(i).labels());
      assertThat(out.get(i).state()).isEqualTo(expected.get(i).state());
    }
    assertThat(out)
        .filteredOn(e -> e.labels().get("thread.group").equals("http-exec-*"))
        .extracting(e -> e.labels().get("thread.role"))
        .containsExactlyInAnyOrder("slowest", "fastest", "rest");
    assertThat(out)
        .filteredOn(e -> e.labels().get("thread.group").equals("worker-*"))
        .singleElement()
        .satisfies(e -> assertThat(e.state().sum()).isEqualTo(12.0));
    assertThat(plan.modeOf("worker-*")).isEqualTo(ThreadAggregation.SUM);
    assertThat(plan.defaultMode()).isEqualTo(ThreadAggregation.SUM);
  }

  @Test
  void theOutputIsInGroupNameOrderWhateverOrderTheThreadsCameIn() {
    ThreadAggregationPlan plan =
        new ThreadAggregationPlan(ThreadAggregation.KEY, Map.of("worker-*", ThreadAggregation.SUM));
    List<ThreadSnapshot> all = new ArrayList<>(workers); // worker-* (SUM) first in the input
    all.addAll(http);
    List<String> groups =
        plan.aggregate(all, contexts, TIME).stream()
            .map(e -> e.labels().get("thread.group"))
            .distinct()
            .toList();
    assertThat(groups).containsExactly("http-exec-*", "worker-*");
  }
}
