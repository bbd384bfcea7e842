package dev.profold.client.internal.export;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.ClientOverhead;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.MetricState;
import dev.profold.proto.v1.ThreadAggregation;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.WireStates;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * {@link DeltaBuffer}: merging math (totals after merging equal totals before, exactly: values are
 * dyadic so no sum rounds), sequence ranges, sent deltas never merged, drops only when even merged
 * data cannot fit; plus a property over random add / send / ack histories.
 */
class DeltaBufferTest {
  private static final long T0 = 1_700_000_000_000_000_000L;
  private static final long TEN_S = 10_000_000_000L;
  private static final int REGION = 1;
  private static final int TIME = 2;
  private static final int BYTES = 3;

  /** Delta {@code seq}: interval seq-1, one entry per region node with these time values. */
  private static Delta delta(long seq, Map<Integer, double[]> timeByNode) {
    Delta.Builder b =
        Delta.newBuilder()
            .setSequence(seq)
            .setIntervalStartUnixNanos(T0 + (seq - 1) * TEN_S)
            .setIntervalEndUnixNanos(T0 + seq * TEN_S)
            .setThreadAggregation(ThreadAggregation.THREAD_AGGREGATION_SUM)
            .setOverhead(
                ClientOverhead.newBuilder()
                    .setCpuNanos(1000 * seq)
                    .setEventsDropped(seq)
                    .setBytesHeld(100 * seq)
                    .setContexts(10 + seq)
                    .setExportReconnects(seq)
                    .setExportDeltasMerged(2 * seq)
                    .setExportBufferedBytes(1000 * seq)
                    .setExportBufferLimitBytes(1 << 20)
                    .putMisuse("closed_twice", seq)
                    .putMisuse(seq % 2 == 0 ? "contexts_full" : "too_deep", 10 * seq));
    timeByNode.forEach(
        (node, values) ->
            b.addEntries(
                Entry.newBuilder()
                    .addKey(regionKey(node))
                    .addMeasurements(measurement(TIME, values))));
    return b.build();
  }

  private static Delta delta(long seq, double... mainValues) {
    return delta(seq, Map.of(1, mainValues));
  }

  private static AttributeValue regionKey(int node) {
    return AttributeValue.newBuilder().setAttributeId(REGION).setPathNodeId(node).build();
  }

  private static Aggregate aggregate(double... values) {
    Aggregate a = new Aggregate();
    for (double v : values) {
      a.record(v);
    }
    return a;
  }

  private static Measurement measurement(int attribute, double... values) {
    return Measurement.newBuilder()
        .setAttributeId(attribute)
        .setState(WireStates.toProto(aggregate(values)))
        .build();
  }

  /** Per (key, measurement attribute): the merge of every state, in sequence order. */
  private static Map<String, MetricState> totals(List<Delta> deltas) {
    List<Delta> sorted = new ArrayList<>(deltas);
    sorted.sort((a, b) -> Long.compare(a.getSequence(), b.getSequence()));
    Map<String, Aggregate> byKey = new TreeMap<>();
    for (Delta d : sorted) {
      for (Entry e : d.getEntriesList()) {
        for (Measurement m : e.getMeasurementsList()) {
          String key = e.getKeyList() + "/" + m.getAttributeId();
          WireStates.mergeInto(m.getState(), byKey.computeIfAbsent(key, k -> new Aggregate()));
        }
      }
    }
    Map<String, MetricState> out = new LinkedHashMap<>();
    byKey.forEach((k, a) -> out.put(k, WireStates.toProto(a)));
    return out;
  }

  private static long cpu(List<Delta> deltas) {
    return deltas.stream().mapToLong(d -> d.getOverhead().getCpuNanos()).sum();
  }

  private static long sizes(List<Delta> deltas) {
    return deltas.stream().mapToLong(Delta::getSerializedSize).sum();
  }

  @Test
  void withinTheBoundNothingIsMergedOrDropped() {
    DeltaBuffer buffer = new DeltaBuffer(1 << 20);
    Delta d1 = delta(1, 0.25);
    Delta d2 = delta(2, 0.5);
    assertThat(buffer.add(d1)).isEqualTo(new DeltaBuffer.AddResult(0, List.of()));
    assertThat(buffer.add(d2).merges()).isZero();
    assertThat(buffer.deltas()).containsExactly(d1, d2);
    assertThat(buffer.bytes()).isEqualTo(sizes(List.of(d1, d2)));
    assertThat(buffer.next(0)).isEqualTo(d1);
    assertThat(buffer.next(1)).isEqualTo(d2);
    assertThat(buffer.next(2)).isNull();
    assertThat(buffer.remove(1)).isEqualTo(d1);
    assertThat(buffer.remove(1)).isNull();
    assertThat(buffer.bytes()).isEqualTo(d2.getSerializedSize());
  }

  @Test
  void mergesStayWithinTheMessageBoundAndTheOldestGoesWhenTheyCannot() {
    Delta d1 = delta(1, 0.25);
    Delta d2 = delta(2, 0.5);
    Delta d3 = delta(3, 1.0);
    long bound = sizes(List.of(d1, d2, d3)) - 1; // the third add overflows
    long mergedSize = DeltaBuffer.merge(d1, d2).getSerializedSize();

    DeltaBuffer roomy = new DeltaBuffer(bound, mergedSize);
    roomy.add(d1);
    roomy.add(d2);
    DeltaBuffer.AddResult merging = roomy.add(d3);
    assertThat(merging.merges()).isPositive();
    assertThat(merging.dropped()).isEmpty();

    DeltaBuffer tight = new DeltaBuffer(bound, mergedSize);
    tight.limitDeltaBytes(mergedSize - 1); // the collector turned out to take less
    tight.add(d1);
    tight.add(d2);
    DeltaBuffer.AddResult r = tight.add(d3);
    assertThat(r.merges()).isZero();
    assertThat(r.dropped()).containsExactly(d1);
    assertThat(tight.deltas()).containsExactly(d2, d3);
  }

  @Test
  void overflowMergesTheOldestNeverSentDeltasWithExactTotals() {
    List<Delta> all = new ArrayList<>();
    for (int seq = 1; seq <= 6; seq++) {
      Map<Integer, double[]> entries = new LinkedHashMap<>();
      entries.put(1, new double[] {0.25 * seq, 0.5});
      if (seq % 2 == 0) {
        entries.put(2, new double[] {1.5 * seq});
      }
      if (seq == 5) {
        entries.put(3, new double[] {-2.0, 0.0, 8.0}); // negative and zero buckets too
      }
      all.add(delta(seq, entries));
    }
    long bound = all.get(5).getSerializedSize() * 3L;
    DeltaBuffer buffer = new DeltaBuffer(bound);
    int merges = 0;
    for (Delta d : all) {
      DeltaBuffer.AddResult r = buffer.add(d);
      assertThat(r.dropped()).isEmpty();
      merges += r.merges();
      assertThat(buffer.bytes()).isLessThanOrEqualTo(bound).isEqualTo(sizes(buffer.deltas()));
    }
    assertThat(merges).isGreaterThan(0);
    assertThat(buffer.size()).isEqualTo(6 - merges);

    List<Delta> kept = buffer.deltas();
    assertThat(totals(kept)).isEqualTo(totals(all));
    assertThat(cpu(kept)).isEqualTo(cpu(all));
    // The ranges are contiguous: [1, k], then single deltas.
    Delta oldest = kept.get(0);
    assertThat(oldest.getFirstSequence()).isEqualTo(1);
    assertThat(oldest.getSequence()).isEqualTo(merges + 1L);
    assertThat(DeltaBuffer.covered(oldest)).isEqualTo(merges + 1L);
    assertThat(oldest.getIntervalStartUnixNanos()).isEqualTo(T0);
    assertThat(oldest.getIntervalEndUnixNanos()).isEqualTo(T0 + (merges + 1L) * TEN_S);
    assertThat(oldest.getOverhead().getEventsDropped())
        .isEqualTo((merges + 1L) * (merges + 2L) / 2); // 1 + 2 + ... + (merges + 1)
    assertThat(oldest.getOverhead().getBytesHeld()).isEqualTo(100L * (merges + 1));
    long expected = merges + 2L;
    for (Delta d : kept.subList(1, kept.size())) {
      assertThat(d.getFirstSequence()).isZero();
      assertThat(d.getSequence()).isEqualTo(expected++);
    }
    // Same keys merged into one entry each: region 1 once, whatever the number of deltas.
    assertThat(oldest.getEntriesList().stream().filter(e -> e.getKey(0).getPathNodeId() == 1))
        .hasSize(1);
    long events = 0;
    for (Delta d : all) {
      events += DeltaBuffer.events(d);
    }
    assertThat(kept.stream().mapToLong(DeltaBuffer::events).sum()).isEqualTo(events);
  }

  @Test
  void mergingTwoDeltasAddsEveryFieldOfTheStates() {
    Delta a = delta(1, Map.of(1, new double[] {0.25, 0.25, 0.5}, 2, new double[] {3.0}));
    Delta b = delta(2, Map.of(1, new double[] {1.0}, 4, new double[] {-0.5}));
    Delta m = DeltaBuffer.merge(a, b);
    assertThat(m.getFirstSequence()).isEqualTo(1);
    assertThat(m.getSequence()).isEqualTo(2);
    assertThat(m.hasSource()).isFalse();
    assertThat(m.hasDictionary()).isFalse();
    assertThat(m.getEntriesCount()).isEqualTo(3);
    MetricState main =
        m.getEntriesList().stream()
            .filter(e -> e.getKey(0).getPathNodeId() == 1)
            .findFirst()
            .orElseThrow()
            .getMeasurements(0)
            .getState();
    assertThat(main.getCount()).isEqualTo(4);
    assertThat(main.getSum()).isEqualTo(2.0);
    assertThat(main.getMin()).isEqualTo(0.25);
    assertThat(main.getMax()).isEqualTo(1.0);
    assertThat(main.getSumOfSquares()).isEqualTo(1.375);
    assertThat(main).isEqualTo(WireStates.toProto(aggregate(0.25, 0.25, 0.5, 1.0)));
    assertThat(m.getOverhead().getCpuNanos()).isEqualTo(3000);
    assertThat(m.getOverhead().getEventsDropped()).isEqualTo(3);
    assertThat(m.getOverhead().getBytesHeld()).isEqualTo(200); // a level: the newer one
    assertThat(m.getOverhead().getContexts()).isEqualTo(12); // a level too
    assertThat(m.getOverhead().getExportReconnects()).isEqualTo(3); // counters: added
    assertThat(m.getOverhead().getExportDeltasMerged()).isEqualTo(6);
    assertThat(m.getOverhead().getExportBufferedBytes()).isEqualTo(2000); // levels: the newer
    assertThat(m.getOverhead().getExportBufferLimitBytes()).isEqualTo(1 << 20);
    assertThat(m.getOverhead().getMisuseMap())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("closed_twice", 3L, "too_deep", 10L, "contexts_full", 20L));
    assertThat(totals(List.of(m))).isEqualTo(totals(List.of(a, b)));

    Delta c = delta(3, 2.0);
    Delta abc = DeltaBuffer.merge(m, c);
    assertThat(abc.getFirstSequence()).isEqualTo(1);
    assertThat(abc.getSequence()).isEqualTo(3);
    assertThat(DeltaBuffer.covered(abc)).isEqualTo(3);
    assertThat(abc).isEqualTo(DeltaBuffer.merge(a, DeltaBuffer.merge(b, c))); // associative
  }

  private static dev.profold.proto.v1.ThreadGroupActivity activity(
      String group, int threads, long base) {
    return dev.profold.proto.v1.ThreadGroupActivity.newBuilder()
        .setThreadGroup(group)
        .setThreads(threads)
        .setWallNanos(10 * base)
        .setComputeNanos(base)
        .setSyncNanos(2 * base)
        .setWaitNanos(base)
        .setIoNanos(base)
        .setRuntimeNanos(base)
        .setThreadMgmtNanos(base)
        .setIdleNanos(3 * base)
        .setCpuWaitNanos(base) // part of idle
        .setCpuMinNanos(base / 4)
        .setCpuSumNanos(base)
        .setCpuMaxNanos(base / 2)
        .build();
  }

  @Test
  void mergingAddsThreadActivityPerGroup() {
    Delta a =
        delta(1, 1.0).toBuilder()
            .addThreadActivity(activity("pool-*", 4, 100))
            .addThreadActivity(activity("main", 1, 8))
            .build();
    Delta b =
        delta(2, 1.0).toBuilder()
            .addThreadActivity(activity("pool-*", 6, 1000))
            .setIoObservation(
                dev.profold.proto.v1.IoObservation.newBuilder().setUnobservedNanos(700))
            .build();
    Delta m = DeltaBuffer.merge(a, b);
    long aLength = a.getIntervalEndUnixNanos() - a.getIntervalStartUnixNanos();
    assertThat(m.getIoObservation().getUnobservedNanos())
        .as("b's 700 ns, and a, which does not say, unobserved throughout")
        .isEqualTo(aLength + 700);
    Delta b3 = b.toBuilder().setSequence(3).build();
    assertThat(DeltaBuffer.merge(b, b3).getIoObservation().getUnobservedNanos())
        .as("the time I/O went unobserved, added")
        .isEqualTo(1400);
    assertThat(DeltaBuffer.merge(a, a.toBuilder().setSequence(2).build()).hasIoObservation())
        .as("not said by either: not said")
        .isFalse();
    assertThat(m.getThreadActivityList())
        .containsExactly(
            activity("pool-*", 6, 1100).toBuilder()
                .setCpuMinNanos(25 + 250)
                .setCpuMaxNanos(50 + 500)
                .build(),
            activity("main", 1, 8));
  }

  @Test
  void mergingTwoDeltasOfManyGroupsKeepsAtMostTheCollectorsLimit() {
    // Before: two deltas of 200 groups each merged into one of 400, which the collector refuses
    // whole (at most 256): after an outage, every interval the merge held was lost.
    Delta.Builder a = delta(1, 1.0).toBuilder();
    Delta.Builder b = delta(2, 1.0).toBuilder();
    for (int i = 0; i < 200; i++) {
      a.addThreadActivity(activity("a-" + (char) ('A' + i % 26) + i, 1, 1000 + i));
      b.addThreadActivity(activity("b-" + (char) ('A' + i % 26) + i, 2, 10 + i));
    }
    Delta m = DeltaBuffer.merge(a.build(), b.build());

    List<dev.profold.proto.v1.ThreadGroupActivity> groups = m.getThreadActivityList();
    assertThat(groups).hasSize(256);
    assertThat(groups.get(0).getThreadGroup()).as("largest wall time first").isEqualTo("a-R199");
    dev.profold.proto.v1.ThreadGroupActivity other = groups.get(255);
    assertThat(other.getThreadGroup()).isEqualTo("_other_");
    assertThat(groups.stream().map(g -> g.getThreadGroup()).distinct()).hasSize(256);
    // Nothing lost: every total of the 400 groups is in the 256, and the threads are counted.
    long wall = 0;
    long threads = 0;
    long compute = 0;
    for (dev.profold.proto.v1.ThreadGroupActivity g : groups) {
      wall += g.getWallNanos();
      threads += g.getThreads();
      compute += g.getComputeNanos();
    }
    long expectedCompute = 0;
    for (int i = 0; i < 200; i++) {
      expectedCompute += (1000 + i) + (10 + i);
    }
    assertThat(compute).isEqualTo(expectedCompute);
    assertThat(wall).isEqualTo(10 * expectedCompute);
    assertThat(threads).isEqualTo(200 * 1 + 200 * 2);
    // The 145 smallest, all of b's 200 but 55: their CPU spread is the union's.
    assertThat(other.getCpuMinNanos()).isEqualTo(10 / 4);
    assertThat(other.getThreads()).isEqualTo(145 * 2);
  }

  @Test
  void aMergedMeasurementKeepsAHistogramOnlyIfEveryStateHadOne() {
    Delta a = delta(1, 0.25, 0.5);
    Delta.Builder noHistogram = delta(2, 1.0).toBuilder();
    noHistogram.getEntriesBuilder(0).getMeasurementsBuilder(0).getStateBuilder().clearHistogram();
    Delta m = DeltaBuffer.merge(a, noHistogram.build());
    MetricState s = m.getEntries(0).getMeasurements(0).getState();
    assertThat(s.getCount()).isEqualTo(3);
    assertThat(s.getSum()).isEqualTo(1.75);
    assertThat(s.hasHistogram()).isFalse(); // its bucket total could not equal the count
  }

  @Test
  void entriesWithSeveralMeasurementsMergePerAttribute() {
    Delta a =
        Delta.newBuilder()
            .setSequence(1)
            .setIntervalStartUnixNanos(T0)
            .setIntervalEndUnixNanos(T0 + TEN_S)
            .addEntries(
                Entry.newBuilder()
                    .addKey(regionKey(1))
                    .addMeasurements(measurement(TIME, 0.5))
                    .addMeasurements(measurement(BYTES, 1024, 2048)))
            .build();
    Delta b =
        a.toBuilder()
            .setSequence(2)
            .setIntervalStartUnixNanos(T0 + TEN_S)
            .setIntervalEndUnixNanos(T0 + 2 * TEN_S)
            .build();
    Delta m = DeltaBuffer.merge(a, b);
    assertThat(m.getEntriesCount()).isEqualTo(1);
    assertThat(m.getEntries(0).getMeasurementsList())
        .extracting(Measurement::getAttributeId)
        .containsExactly(TIME, BYTES);
    assertThat(m.getEntries(0).getMeasurements(1).getState().getSum()).isEqualTo(6144);
    assertThat(DeltaBuffer.events(m)).isEqualTo(4); // per entry the largest count
    assertThat(totals(List.of(m))).isEqualTo(totals(List.of(a, b)));
  }

  @Test
  void sentDeltasAreNeverMerged() {
    Delta d1 = delta(1, 0.25);
    Delta d2 = delta(2, 0.5);
    long bound = d1.getSerializedSize() * 5L;
    DeltaBuffer buffer = new DeltaBuffer(bound);
    buffer.add(d1);
    buffer.add(d2);
    buffer.markSent(1);
    buffer.markSent(2);
    assertThat(buffer.wasSent(2)).isTrue();
    List<Delta> later = new ArrayList<>();
    int merges = 0;
    for (int seq = 3; seq <= 10; seq++) {
      Delta d = delta(seq, 0.25 * (1 + seq % 2));
      later.add(d);
      DeltaBuffer.AddResult r = buffer.add(d);
      assertThat(r.dropped()).isEmpty();
      merges += r.merges();
    }
    assertThat(merges).isGreaterThan(0);
    List<Delta> kept = buffer.deltas();
    assertThat(kept.subList(0, 2)).containsExactly(d1, d2); // untouched
    assertThat(kept.get(2).getFirstSequence()).isEqualTo(3);
    assertThat(totals(kept.subList(2, kept.size()))).isEqualTo(totals(later));
    assertThat(buffer.wasSent(3)).isFalse();
  }

  @Test
  void theOldestIsDroppedOnlyWhenEvenMergedDataCannotFit() {
    Delta d1 = delta(1, 0.25);
    Delta d2 = delta(2, 0.5);
    Delta d3 = delta(3, 1.0);
    DeltaBuffer buffer =
        new DeltaBuffer(d1.getSerializedSize() + (long) d2.getSerializedSize() + 2);
    buffer.add(d1);
    buffer.add(d2);
    buffer.markSent(2); // both may have been applied: they must stay as they are
    DeltaBuffer.AddResult r = buffer.add(d3);
    assertThat(r.merges()).isZero(); // only one never-sent delta: nothing to merge it with
    assertThat(r.dropped()).containsExactly(d1);
    assertThat(buffer.deltas()).containsExactly(d2, d3);
    assertThat(DeltaBuffer.events(d1)).isEqualTo(1);
  }

  /** Nodes {@code from} to {@code from + 9}, one value each: deltas with disjoint keys. */
  private static Map<Integer, double[]> tenNodes(int from) {
    Map<Integer, double[]> nodes = new LinkedHashMap<>();
    for (int n = from; n < from + 10; n++) {
      nodes.put(n, new double[] {0.25 * n});
    }
    return nodes;
  }

  @Test
  void theNewestDeltaIsKeptWhenItFitsAloneEvenIfItsMergeWithTheOlderOneDoesNot() {
    Delta d1 = delta(1, tenNodes(1));
    Delta d2 = delta(2, tenNodes(100)); // disjoint keys: merged, the two barely shrink
    long bound = Math.max(d1.getSerializedSize(), d2.getSerializedSize()) + 10L;
    assertThat((long) DeltaBuffer.merge(d1, d2).getSerializedSize()).isGreaterThan(bound);
    DeltaBuffer buffer = new DeltaBuffer(bound);
    buffer.add(d1);
    DeltaBuffer.AddResult r = buffer.add(d2);
    assertThat(r.merges()).isZero(); // a merge that cannot fit is not made...
    assertThat(r.dropped()).containsExactly(d1); // ...the oldest goes instead
    assertThat(buffer.deltas()).containsExactly(d2);
    assertThat(buffer.bytes()).isEqualTo(d2.getSerializedSize());
  }

  @Test
  void whenNeverSentDeltasCannotBeMergedToFitTheSentOnesGoFirst() {
    Delta d1 = delta(1, 0.25);
    Delta d2 = delta(2, tenNodes(1));
    Delta d3 = delta(3, tenNodes(100));
    long bound = d1.getSerializedSize() + (long) d3.getSerializedSize() + 10;
    assertThat((long) DeltaBuffer.merge(d2, d3).getSerializedSize()).isGreaterThan(bound);
    DeltaBuffer buffer = new DeltaBuffer(bound);
    buffer.add(d1);
    buffer.markSent(1);
    buffer.add(d2);
    DeltaBuffer.AddResult r = buffer.add(d3);
    assertThat(r.merges()).isZero();
    assertThat(r.dropped()).containsExactly(d1, d2); // oldest first, the sent one included
    assertThat(buffer.deltas()).containsExactly(d3);
  }

  @Test
  void aDeltaLargerThanTheBoundIsDroppedAfterTheOlderOnes() {
    Delta small = delta(1, 0.25);
    DeltaBuffer buffer = new DeltaBuffer(small.getSerializedSize() + 10L);
    buffer.add(small);
    Map<Integer, double[]> many = new LinkedHashMap<>();
    for (int node = 1; node <= 20; node++) {
      many.put(node, new double[] {node});
    }
    Delta big = delta(2, many);
    DeltaBuffer.AddResult r = buffer.add(big);
    assertThat(r.merges()).isZero(); // a merge holding the big one could not fit: not made
    assertThat(r.dropped()).containsExactly(small, big); // oldest first
    assertThat(r.dropped().stream().mapToLong(DeltaBuffer::covered).sum()).isEqualTo(2);
    assertThat(r.dropped().stream().mapToLong(DeltaBuffer::events).sum()).isEqualTo(21);
    assertThat(buffer.isEmpty()).isTrue();
    assertThat(buffer.bytes()).isZero();
  }

  @Test
  void deltasMustBeAddedInSequenceOrder() {
    DeltaBuffer buffer = new DeltaBuffer(1 << 20);
    buffer.add(delta(2, 0.25));
    assertThatThrownBy(() -> buffer.add(delta(2, 0.25)))
        .isInstanceOf(IllegalArgumentException.class);
    buffer.markSent(2);
    buffer.remove(2);
    assertThatThrownBy(() -> buffer.add(delta(1, 0.25)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * Over any history of adds, sends (in order, as the exporter does) and acks: buffered plus
   * dropped plus acked data equals everything added, exactly; sent deltas are never changed;
   * covered ranges partition 1..n; the bound holds; a delta that fits the bound by itself is still
   * buffered after its add (merged or not); and a never-sent delta is dropped only when merging it
   * with the oldest never-sent delta left would not fit.
   */
  @Property(tries = 300)
  void nothingIsLostOrCountedTwice(
      @ForAll @Size(max = 60) List<@IntRange(min = 0, max = 9) Integer> ops,
      @ForAll @IntRange(min = 60, max = 1500) int maxBytes) {
    DeltaBuffer buffer = new DeltaBuffer(maxBytes);
    List<Delta> added = new ArrayList<>();
    List<Delta> gone = new ArrayList<>();
    Map<Long, Delta> sentAs = new TreeMap<>();
    long lastSent = 0;
    long seq = 0;
    for (int op : ops) {
      if (op <= 5 || op == 9) {
        seq++;
        Map<Integer, double[]> entries = new LinkedHashMap<>();
        int nodes = op == 9 ? 12 : 1 + op % 3;
        for (int n = 0; n < nodes; n++) {
          int node = 1 + (int) ((seq + n * op) % 5);
          entries.put(node, new double[] {0.25 * (1 + (seq + n) % 16), -0.5 * (op % 2)});
        }
        Delta d = delta(seq, entries);
        added.add(d);
        DeltaBuffer.AddResult r = buffer.add(d);
        gone.addAll(r.dropped());
        if (d.getSerializedSize() <= maxBytes) {
          assertThat(buffer.deltas()).last().extracting(Delta::getSequence).isEqualTo(seq);
        }
        Delta lastDroppedNeverSent = null;
        for (Delta x : r.dropped()) {
          if (!buffer.wasSent(x.getSequence())) {
            lastDroppedNeverSent = x;
          }
        }
        Delta oldestNeverSent = buffer.next(lastSent);
        if (lastDroppedNeverSent != null && oldestNeverSent != null) {
          assertThat(
                  (long)
                      DeltaBuffer.merge(lastDroppedNeverSent, oldestNeverSent).getSerializedSize())
              .isGreaterThan(maxBytes);
        }
      } else if (op <= 7) {
        Delta next = buffer.next(lastSent);
        if (next != null) {
          buffer.markSent(next.getSequence());
          sentAs.put(next.getSequence(), next);
          lastSent = next.getSequence();
        }
      } else {
        Delta oldest = buffer.next(0);
        if (oldest != null && buffer.wasSent(oldest.getSequence())) {
          gone.add(buffer.remove(oldest.getSequence()));
        }
      }
      assertThat(buffer.bytes()).isLessThanOrEqualTo(maxBytes).isEqualTo(sizes(buffer.deltas()));
    }
    for (Delta d : buffer.deltas()) {
      if (sentAs.containsKey(d.getSequence())) {
        assertThat(d).isEqualTo(sentAs.get(d.getSequence()));
      }
    }
    List<Delta> everything = new ArrayList<>(buffer.deltas());
    everything.addAll(gone);
    assertThat(totals(everything)).isEqualTo(totals(added));
    assertThat(cpu(everything)).isEqualTo(cpu(added));
    everything.sort((a, b) -> Long.compare(a.getSequence(), b.getSequence()));
    long expectedFirst = 1;
    for (Delta d : everything) {
      assertThat(DeltaBuffer.firstCovered(d)).isEqualTo(expectedFirst);
      expectedFirst = d.getSequence() + 1;
    }
    assertThat(expectedFirst).isEqualTo(seq + 1);
  }
}
