package dev.profold.client.internal.export;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.ClientOverhead;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.IoObservation;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.ThreadAggregation;
import dev.profold.proto.v1.ThreadGroupActivity;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.WireStates;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class DeltaSplitterTest {
  private static final long START = 1_700_000_000_000_000_000L;

  /**
   * A delta of {@code n} entries whose sizes vary with {@code seed}, with counters and activity.
   */
  private static Delta delta(int n, int seed) {
    Delta.Builder d =
        Delta.newBuilder()
            .setIntervalStartUnixNanos(START)
            .setIntervalEndUnixNanos(START + 10_000_000_000L)
            .setThreadAggregation(ThreadAggregation.THREAD_AGGREGATION_KEY)
            .setOverhead(
                ClientOverhead.newBuilder()
                    .setCpuNanos(1234)
                    .setEventsDropped(5)
                    .setBytesHeld(4096)
                    .setContexts(700)
                    .setContextsLimit(16384)
                    .putMisuse("closed_twice", 2))
            .addThreadActivity(
                ThreadGroupActivity.newBuilder()
                    .setThreadGroup("pool-*")
                    .setThreads(4)
                    .setWallNanos(40_000_000_000L));
    for (int i = 0; i < n; i++) {
      Aggregate a = new Aggregate();
      for (int k = 0; k <= (i * 31 + seed) % 40; k++) {
        a.record(Math.scalb(1.0 + k, -(k % 30))); // spread over many buckets: sizes differ
      }
      d.addEntries(
          Entry.newBuilder()
              .addKey(AttributeValue.newBuilder().setAttributeId(1).setPathNodeId(i + 1))
              .addMeasurements(
                  Measurement.newBuilder().setAttributeId(2).setState(WireStates.toProto(a))));
    }
    return d.build();
  }

  @Test
  void aDeltaThatFitsIsReturnedAsItIs() {
    Delta d = delta(10, 0);
    assertThat(DeltaSplitter.split(d, d.getSerializedSize() + DeltaSplitter.NUMBERING_BYTES))
        .containsExactly(d);
  }

  @Test
  void onlyTheFirstPartCarriesTheIntervalsCountersAndActivityEveryPartItsIdentityAndGauges() {
    Delta d = delta(200, 3);
    List<Delta> parts = DeltaSplitter.split(d, d.getSerializedSize() / 4);

    assertThat(parts.size()).isBetween(5, 7);
    Delta first = parts.get(0);
    assertThat(first.getOverhead()).isEqualTo(d.getOverhead());
    assertThat(first.getThreadActivityList()).isEqualTo(d.getThreadActivityList());
    for (Delta p : parts.subList(1, parts.size())) {
      assertThat(p.getOverhead()) // the gauges only
          .isEqualTo(
              ClientOverhead.newBuilder()
                  .setBytesHeld(4096)
                  .setContexts(700)
                  .setContextsLimit(16384)
                  .build());
      assertThat(p.getThreadActivityCount()).isZero();
    }
    for (Delta p : parts) {
      assertThat(p.getIntervalStartUnixNanos()).isEqualTo(START);
      assertThat(p.getIntervalEndUnixNanos()).isEqualTo(START + 10_000_000_000L);
      assertThat(p.getThreadAggregation()).isEqualTo(ThreadAggregation.THREAD_AGGREGATION_KEY);
      assertThat(p.getEntriesCount()).isPositive();
    }
  }

  @Test
  void theTimeIoWentUnobservedStaysWithTheFirstPartAndSurvivesAMergeOfALaterOne() {
    Delta d =
        delta(200, 3).toBuilder()
            .setIoObservation(IoObservation.newBuilder().setUnobservedNanos(2_000_000_000L))
            .build();
    List<Delta> parts = DeltaSplitter.split(d, d.getSerializedSize() / 4);

    assertThat(parts.get(0).getIoObservation().getUnobservedNanos()).isEqualTo(2_000_000_000L);
    long sum = 0;
    for (Delta p : parts) {
      sum += p.getIoObservation().getUnobservedNanos();
    }
    assertThat(sum).as("over the parts, what the delta said").isEqualTo(2_000_000_000L);
    // A later part merged with the next interval's delta (I/O observed throughout): before, the
    // part said nothing and counted as unobserved for its whole 10 s interval.
    Delta next =
        delta(1, 0).toBuilder()
            .setIntervalStartUnixNanos(START + 10_000_000_000L)
            .setIntervalEndUnixNanos(START + 20_000_000_000L)
            .setIoObservation(IoObservation.newBuilder().setUnobservedNanos(0))
            .setSequence(9)
            .build();
    Delta second = parts.get(1).toBuilder().setSequence(8).build();
    assertThat(DeltaBuffer.merge(second, next).getIoObservation().getUnobservedNanos()).isZero();
  }

  @Test
  void aSingleEntryLargerThanTheBoundIsNotSplitFurther() {
    Delta d = delta(1, 39);
    assertThat(DeltaSplitter.split(d, 100)).containsExactly(d);
  }

  @Test
  void renumberingKeepsAMergedDeltasSequencesAndTakesNewOnesOnlyForExtraParts() {
    Delta merged = delta(200, 1).toBuilder().setFirstSequence(3).setSequence(5).build();
    Delta single = delta(300, 2).toBuilder().setSequence(6).build();
    long bound = merged.getSerializedSize() / 2 + 200; // two parts for the first
    DeltaSplitter.Renumbered r = DeltaSplitter.renumber(List.of(merged, single), bound);

    List<Delta> out = r.deltas();
    assertThat(out.get(0).getSequence()).isEqualTo(3);
    assertThat(out.get(0).getFirstSequence()).isZero();
    assertThat(out.get(1).getFirstSequence()).isEqualTo(4); // the rest of the merged range
    assertThat(out.get(1).getSequence()).isEqualTo(5);
    int singleParts = out.size() - 2;
    assertThat(singleParts).isGreaterThan(1);
    for (int i = 0; i < singleParts; i++) {
      assertThat(out.get(2 + i).getSequence()).isEqualTo(6 + i);
    }
    assertThat(r.addedSequences()).isEqualTo(singleParts - 1);
    assertThat(r.split()).isEqualTo(2);
  }

  /**
   * The law of renumbering: the sequences stay contiguous from the first delta's first one, every
   * submitted delta is still covered once, and only extra parts take new numbers.
   */
  @Property(tries = 100)
  void renumberedDeltasCoverContiguousSequencesAndEverySubmittedDeltaOnce(
      @ForAll @IntRange(min = 1, max = 5) int deltas,
      @ForAll @IntRange(min = 0, max = 3) int mergedExtra,
      @ForAll @IntRange(min = 0, max = 1000) int seed,
      @ForAll @IntRange(min = 400, max = 20_000) int maxBytes) {
    List<Delta> in = new ArrayList<>();
    long next = 11;
    long submitted = 0;
    for (int k = 0; k < deltas; k++) {
      long covers = k == 0 ? 1 + mergedExtra : 1; // the first may be merged
      Delta.Builder d = delta(20 + (seed + k * 37) % 150, seed + k).toBuilder();
      d.setSequence(next + covers - 1);
      if (covers > 1) {
        d.setFirstSequence(next);
      }
      in.add(d.build());
      next += covers;
      submitted += covers;
    }
    DeltaSplitter.Renumbered r = DeltaSplitter.renumber(in, maxBytes);

    long expected = 11;
    long covered = 0;
    for (Delta d : r.deltas()) {
      assertThat(DeltaBuffer.firstCovered(d)).isEqualTo(expected);
      expected = d.getSequence() + 1;
      covered += DeltaBuffer.covered(d);
    }
    assertThat(covered).isEqualTo(submitted + r.addedSequences());
    assertThat(expected - 11).isEqualTo(submitted + r.addedSequences());
    assertThat(r.deltas().stream().mapToInt(Delta::getEntriesCount).sum())
        .isEqualTo(in.stream().mapToInt(Delta::getEntriesCount).sum());
  }

  /**
   * The law: the parts carry every entry once, in order, and each part is within the bound once
   * numbered with the largest sequence numbers, unless it holds a single entry that alone is
   * larger.
   */
  @Property(tries = 200)
  void partsCarryEveryEntryOnceInOrderAndFitTheBound(
      @ForAll @IntRange(min = 0, max = 300) int entries,
      @ForAll @IntRange(min = 0, max = 1000) int seed,
      @ForAll @IntRange(min = 200, max = 20_000) int maxBytes) {
    Delta d = delta(entries, seed);
    List<Delta> parts = DeltaSplitter.split(d, maxBytes);

    List<Entry> carried = new ArrayList<>();
    for (Delta p : parts) {
      carried.addAll(p.getEntriesList());
      Delta numbered = p.toBuilder().setSequence(-1L).setFirstSequence(-1L).build();
      if (p.getEntriesCount() > 1) {
        assertThat(numbered.getSerializedSize()).isLessThanOrEqualTo(maxBytes);
      }
    }
    assertThat(carried).isEqualTo(d.getEntriesList());
    if (d.getSerializedSize() + DeltaSplitter.NUMBERING_BYTES <= maxBytes) {
      assertThat(parts).containsExactly(d);
    }
  }
}
