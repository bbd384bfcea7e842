package dev.profold.client.internal.export;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.ClientOverhead;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
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
  void onlyTheFirstPartCarriesTheIntervalsCountersAndActivityEveryPartItsIdentityAndBytesHeld() {
    Delta d = delta(200, 3);
    List<Delta> parts = DeltaSplitter.split(d, d.getSerializedSize() / 4);

    assertThat(parts.size()).isBetween(5, 7);
    Delta first = parts.get(0);
    assertThat(first.getOverhead()).isEqualTo(d.getOverhead());
    assertThat(first.getThreadActivityList()).isEqualTo(d.getThreadActivityList());
    for (Delta p : parts.subList(1, parts.size())) {
      assertThat(p.getOverhead()).isEqualTo(ClientOverhead.newBuilder().setBytesHeld(4096).build());
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
  void aSingleEntryLargerThanTheBoundIsNotSplitFurther() {
    Delta d = delta(1, 39);
    assertThat(DeltaSplitter.split(d, 100)).containsExactly(d);
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
