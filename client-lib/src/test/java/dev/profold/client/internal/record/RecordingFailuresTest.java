package dev.profold.client.internal.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.client.Kind;
import dev.profold.client.Region;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.threads.Cell;
import dev.profold.client.internal.threads.ThreadSnapshot;
import dev.profold.proto.v1.Dictionary;
import dev.profold.proto.v1.PathNode;
import dev.profold.proto.v1.SourceIdentity;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An Error (an OutOfMemoryError, a StackOverflowError) thrown while a thread records or while the
 * flush drains a table: the thread's table and context stay whole, the values a failed drain held
 * are counted as lost, and one table's failure does not keep the other threads from being
 * collected. The failures are planted through {@link ThreadTable}'s test seams.
 */
class RecordingFailuresTest {
  private final DeltaEncoder encoder =
      new DeltaEncoder(
          SourceIdentity.newBuilder().setService("s").setInstance("i").setIncarnationId(1).build());
  private final Recorder recorder = new Recorder(encoder, 1024);

  @AfterEach
  void noFaults() {
    ThreadTable.onNewCell = null;
    ThreadTable.afterCellCopied = null;
  }

  /** The next cell the calling thread makes fails, as an allocation that runs out of memory. */
  private static void failNextNewCell() {
    Thread on = Thread.currentThread();
    ThreadTable.onNewCell =
        () -> {
          if (Thread.currentThread() == on) {
            ThreadTable.onNewCell = null;
            throw new OutOfMemoryError("planted: making a cell");
          }
        };
  }

  /** The {@code n}th cell the calling thread's drains copy (from 1) fails, once. */
  private static void failDrainAtCell(int n) {
    Thread on = Thread.currentThread();
    int[] copied = {0};
    ThreadTable.afterCellCopied =
        () -> {
          if (Thread.currentThread() == on && ++copied[0] == n) {
            throw new OutOfMemoryError("planted: copying a cell");
          }
        };
  }

  /**
   * {@link Recorder#collect()}, which must not throw; an OutOfMemoryError it let through would end
   * the test run rather than fail the test.
   */
  private List<ThreadSnapshot> collect() {
    try {
      return recorder.collect();
    } catch (RuntimeException | Error e) {
      throw new AssertionError("the collection failed", e);
    }
  }

  /** Region path ("a/b") of a context, from the encoder's path nodes. */
  private String path(int context) {
    Dictionary dictionary = encoder.definitions();
    Map<Integer, PathNode> nodes = new HashMap<>();
    dictionary.getPathNodesList().forEach(n -> nodes.put(n.getId(), n));
    Map<Integer, String> strings = dictionary.getStringsMap();
    String p = "";
    for (int node = recorder.contexts().pathNode(context); node != 0; ) {
      PathNode n = nodes.get(node);
      p = strings.get(n.getNameId()) + (p.isEmpty() ? "" : "/" + p);
      node = n.getParentId();
    }
    return p;
  }

  /** "path metric" -> sum of the values, over every thread. */
  private Map<String, Double> sums(List<ThreadSnapshot> out) {
    Map<String, Double> sums = new HashMap<>();
    for (ThreadSnapshot t : out) {
      for (Cell c : t.cells()) {
        String metric = c.metric() == recorder.timeMetric() ? "time" : "m" + c.metric();
        sums.merge(path(c.context()) + " " + metric, (double) c.state().count(), Double::sum);
      }
    }
    return sums;
  }

  @Test
  void anErrorMakingACellLeavesTheThreadsTableAndContextWhole() {
    // Before: the table counted the slot before making its cell, and every later drain failed on
    // the null there (every other collection, and every one once the thread ended); and a region
    // whose time could not be recorded stayed the thread's context, under which all that followed
    // nested.
    int m = recorder.metric("m", "");
    int n = recorder.metric("n", "");
    recorder.record(m, 1);
    failNextNewCell();
    assertThatThrownBy(() -> recorder.record(n, 1)).isInstanceOf(OutOfMemoryError.class);
    Region outer = recorder.region("R", Kind.COMPUTE);
    failNextNewCell();
    assertThatThrownBy(outer::close).isInstanceOf(OutOfMemoryError.class); // its time's cell
    recorder.record(n, 1);
    recorder.record(m, 1);
    try (Region x = recorder.region("x", Kind.COMPUTE)) {
      assertThat(x).isNotNull();
    }

    assertThat(sums(collect()))
        .as("counts by path and metric: at the root, and x at depth 0")
        .containsOnly(Map.entry(" m" + m, 2.0), Map.entry(" m" + n, 1.0), Map.entry("x time", 1.0));
    recorder.record(n, 1);
    assertThat(sums(collect())).containsOnly(Map.entry(" m" + n, 1.0));
    assertThat(recorder.failedDrains()).isZero();
    assertThat(recorder.takeDropped()).isZero();
  }

  @Test
  void aDrainFailingPartWayCountsTheTablesValuesAsLostAndCollectsTheOtherThreads() {
    // Before: the cells copied (and reset) before the failure were lost uncounted, and the
    // collection failed with it, taking the other threads' tables down too (counted as lost).
    IdHolder holder = recorder.holder();
    int[] contexts = new int[3];
    for (int i = 0; i < 3; i++) {
      contexts[i] = recorder.regionContext(holder, 0, "r" + i, Kind.COMPUTE);
    }
    ForeignThread a = recorder.foreign(101, "a", false);
    ForeignThread b = recorder.foreign(102, "b", false);
    for (int i = 0; i < 3; i++) {
      for (int k = 0; k <= i; k++) {
        a.record(contexts[i], recorder.timeMetric(), 0.001); // 1 + 2 + 3 values
      }
    }
    for (int k = 0; k < 4; k++) {
      b.record(contexts[0], recorder.timeMetric(), 0.001);
    }
    failDrainAtCell(2); // a's second cell

    List<ThreadSnapshot> out = collect();

    assertThat(out).singleElement().satisfies(t -> assertThat(t.threadId()).isEqualTo(102));
    assertThat(sums(out)).containsOnly(Map.entry("r0 time", 4.0));
    assertThat(recorder.takeDropped()).as("all of a's values, counted once").isEqualTo(6);
    assertThat(recorder.failedDrains()).isEqualTo(1);
    b.record(contexts[1], recorder.timeMetric(), 0.001);
    assertThat(sums(collect()))
        .as("a's table emptied, not given again")
        .containsOnly(Map.entry("r1 time", 1.0));
    assertThat(collect()).isEmpty();
    assertThat(recorder.takeDropped()).isZero();
  }

  @Test
  void anEndedThreadWhoseDrainFailsIsForgottenAndTheThreadsAfterItStillCollected() {
    IdHolder holder = recorder.holder();
    int context = recorder.regionContext(holder, 0, "r", Kind.COMPUTE);
    ForeignThread a = recorder.foreign(101, "a", false);
    ForeignThread b = recorder.foreign(102, "b", false);
    a.record(context, recorder.timeMetric(), 0.001);
    a.record(context, recorder.timeMetric(), 0.001);
    a.retire();
    b.record(context, recorder.timeMetric(), 0.001);
    int states = recorder.states();
    failDrainAtCell(1);

    assertThat(collect()).singleElement().satisfies(t -> assertThat(t.threadId()).isEqualTo(102));
    assertThat(recorder.takeDropped()).isEqualTo(2);
    assertThat(recorder.states()).as("a forgotten").isEqualTo(states - 1);
    b.record(context, recorder.timeMetric(), 0.001);
    assertThat(sums(collect())).containsOnly(Map.entry("r time", 1.0));
  }
}
