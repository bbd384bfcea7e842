package dev.profold.client.internal.export;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.client.internal.export.ExporterTest.FakeStream;
import dev.profold.proto.v1.AckResult;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.ClientOverhead;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.PathNode;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.ThreadAggregation;
import dev.profold.proto.v1.ValueType;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.WireStates;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/**
 * Stream rotation (see {@link Exporter}'s class comment): against the fake collector of {@link
 * ExporterTest} over in-process gRPC, on a {@link ManualScheduler}, so a stream's age is the fake
 * clock's and nothing sleeps.
 */
class ExporterRotationTest extends InProcessExporterTest {
  private static final Duration INITIAL = Duration.ofMillis(500);
  private static final Duration ACK_TIMEOUT = Duration.ofMinutes(10);
  private static final Duration AGE = Duration.ofMinutes(1);
  private static final Duration INTERVAL = Duration.ofSeconds(10);
  private static final long ROTATE_AFTER = 2000;

  private final DeltaEncoder encoder = ExporterTest.encoder(42);
  private final int region = encoder.dimension("region", ValueType.VALUE_TYPE_PATH);
  private final int time = encoder.measurement("time", ValueType.VALUE_TYPE_DOUBLE, "seconds");
  private final int main = encoder.pathNode(0, region, "main", RegionKind.REGION_KIND_COMPUTE);
  private int interval;

  /** No jitter, a long ack timeout; rotation after {@link #ROTATE_AFTER} bytes and {@link #AGE}. */
  private static ExporterConfig config() {
    return ExporterConfig.defaults()
        .withJitter(0)
        .withBackoff(INITIAL, Duration.ofSeconds(2))
        .withAckTimeout(ACK_TIMEOUT)
        .withRotation(ROTATE_AFTER, AGE);
  }

  private Exporter exporter(ExporterConfig config) {
    exporter = new Exporter(channel, encoder, config, scheduler, RandomGenerator.getDefault());
    return exporter;
  }

  /** A new path node under main, its name {@code name} and 200 more characters (~230 B defined). */
  private int node(String name) {
    return encoder.pathNode(main, region, name + "-" + "x".repeat(200), RegionKind.REGION_KIND_IO);
  }

  private List<Integer> nodes(String prefix, int n) {
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(node(prefix + i));
    }
    return out;
  }

  /** The next interval's delta: one entry of one value per path node. */
  private Delta.Builder delta(List<Integer> nodes) {
    int i = interval++;
    Delta.Builder d =
        Delta.newBuilder()
            .setIntervalStartUnixNanos(ExporterTest.T0 + i * 10_000_000_000L)
            .setIntervalEndUnixNanos(ExporterTest.T0 + (i + 1) * 10_000_000_000L)
            .setThreadAggregation(ThreadAggregation.THREAD_AGGREGATION_SUM)
            .setOverhead(ClientOverhead.newBuilder().setCpuNanos(100));
    for (int node : nodes) {
      Aggregate a = new Aggregate();
      a.record(0.25);
      d.addEntries(
          Entry.newBuilder()
              .addKey(AttributeValue.newBuilder().setAttributeId(region).setPathNodeId(node))
              .addMeasurements(
                  Measurement.newBuilder().setAttributeId(time).setState(WireStates.toProto(a))));
    }
    return d;
  }

  private Delta.Builder delta(Integer... nodes) {
    return delta(List.of(nodes));
  }

  /** Submits the next interval's delta and lets the interval pass. */
  private void interval(Exporter e, List<Integer> nodes) {
    e.submit(delta(nodes));
    scheduler.advance(INTERVAL);
  }

  /** Submits, at once, {@code n} deltas each referencing {@code live} and a new node. */
  private void churn(Exporter e, int live, int n) {
    for (int i = 0; i < n; i++) {
      e.submit(delta(live, node("churn" + interval)));
      scheduler.runDue();
    }
  }

  /** Dictionary bytes the messages {@code s} received carried. */
  private static long carried(FakeStream s) {
    long bytes = 0;
    for (Delta d : s.received) {
      bytes += d.hasDictionary() ? d.getDictionary().getSerializedSize() : 0;
    }
    return bytes;
  }

  private static List<Long> sequences(FakeStream s) {
    return s.received.stream().map(Delta::getSequence).toList();
  }

  /** Every sequence received, over all streams, in order. */
  private List<Long> allSequences() {
    return ingest.streams.stream().flatMap(s -> sequences(s).stream()).toList();
  }

  private static List<Integer> nodeIds(Delta d) {
    return d.getDictionary().getPathNodesList().stream().map(PathNode::getId).toList();
  }

  private static List<Long> oneTo(long n) {
    return LongStream.rangeClosed(1, n).boxed().toList();
  }

  @Test
  void aStreamDueForRotationIsHalfClosedOnceDrainedAndTheNextCarriesOnlyWhatItsDeltasUse() {
    Exporter e = exporter(config().withMaxInFlight(2));
    int live = node("live");
    churn(e, live, 10); // sequences 1..10, all acknowledged
    FakeStream first = ingest.streams.get(0);
    assertThat(carried(first)).isGreaterThanOrEqualTo(ROTATE_AFTER);

    // Two deltas in flight, their acks held back, and a third waiting for room in the window.
    ingest.silent.addAll(List.of(11L, 12L));
    e.submit(delta(live));
    e.submit(delta(live));
    int fresh = node("fresh");
    e.submit(delta(live, fresh));
    scheduler.runDue();
    assertThat(sequences(first)).isEqualTo(oneTo(12));

    scheduler.advance(AGE); // rotation is due now, but two deltas are in flight
    assertThat(first.halfClosed).isFalse();
    assertThat(ingest.streams).hasSize(1);

    first.ack(11, AckResult.ACK_RESULT_APPLIED);
    scheduler.runDue();
    assertThat(sequences(first)).as("no new delta on a draining stream").isEqualTo(oneTo(12));
    assertThat(first.halfClosed).isFalse();
    assertThat(ingest.streams).hasSize(1);

    first.ack(12, AckResult.ACK_RESULT_APPLIED);
    scheduler.runDue();
    assertThat(first.halfClosed).isTrue();
    assertThat(first.cancelled).isFalse();
    assertThat(ingest.streams).as("opened at once, no backoff").hasSize(2);
    FakeStream second = ingest.streams.get(1);
    assertThat(sequences(second)).containsExactly(13L);
    Delta opening = second.received.get(0);
    assertThat(opening.getSource()).isEqualTo(encoder.identity());
    assertThat(nodeIds(opening)).containsExactly(main, live, fresh);
    assertThat(opening.getDictionary().getStringsCount()).isEqualTo(3);
    assertThat(opening.getDictionary().getAttributesCount()).isEqualTo(2);
    assertThat(encoder.definitions().getPathNodesCount()).isEqualTo(13); // 10 no longer used

    assertThat(allSequences()).as("each delta sent once in all").isEqualTo(oneTo(13));
    ExporterStats stats = e.stats();
    assertThat(stats.submitted()).isEqualTo(13);
    assertThat(stats.acked()).isEqualTo(13);
    assertThat(stats.duplicates()).isZero();
    assertThat(stats.dropped()).isZero();
    assertThat(stats.rotations()).isEqualTo(1);
    assertThat(stats.reconnects()).isZero();
    assertThat(stats.lastError()).isEmpty();
    assertThat(scheduler.pendingDelays()).as("only the new stream's age").containsExactly(AGE);
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void anIdleStreamDueForRotationIsEndedAndTheNextDeltaOpensANewOneWithoutBackoff() {
    Exporter e = exporter(config());
    int live = node("live");
    churn(e, live, 10);
    scheduler.advance(AGE);
    FakeStream first = ingest.streams.get(0);
    assertThat(first.halfClosed).isTrue();
    assertThat(ingest.streams).as("nothing to send yet").hasSize(1);
    // The collector ended the half-closed stream with OK: no failure, no reconnect pending.
    assertThat(scheduler.pendingDelays()).isEmpty();
    assertThat(e.stats().lastError()).isEmpty();

    e.submit(delta(live));
    scheduler.runDue();
    assertThat(ingest.streams).hasSize(2);
    Delta opening = ingest.streams.get(1).received.get(0);
    assertThat(opening.getSequence()).isEqualTo(11);
    assertThat(opening.getSource()).isEqualTo(encoder.identity());
    assertThat(nodeIds(opening)).containsExactly(main, live);
    ExporterStats stats = e.stats();
    assertThat(stats.rotations()).isEqualTo(1);
    assertThat(stats.reconnects()).isZero();
    assertThat(stats.acked()).isEqualTo(11);
    assertThat(stats.lastError()).isEmpty();
  }

  @Test
  void noRotationBeforeTheMinimumAgeEvenFarPastTheByteThreshold() {
    Exporter e = exporter(config());
    int live = node("live");
    churn(e, live, 40);
    assertThat(carried(ingest.streams.get(0))).isGreaterThan(4 * ROTATE_AFTER);
    scheduler.advance(AGE.minusMillis(1));
    e.submit(delta(live));
    scheduler.runDue();
    assertThat(ingest.streams).hasSize(1);
    assertThat(ingest.streams.get(0).halfClosed).isFalse();
    assertThat(e.stats().rotations()).isZero();

    scheduler.advance(Duration.ofMillis(1));
    assertThat(ingest.streams.get(0).halfClosed).isTrue();
    assertThat(e.stats().rotations()).isEqualTo(1);
  }

  @Test
  void noRotationBelowTheByteThresholdHoweverOldTheStream() {
    Exporter e = exporter(config());
    int live = node("live");
    churn(e, live, 5);
    FakeStream first = ingest.streams.get(0);
    for (int i = 0; i < 60; i++) { // ten minimum ages
      interval(e, List.of(live));
    }
    assertThat(carried(first)).isLessThan(ROTATE_AFTER);
    assertThat(ingest.streams).hasSize(1);
    assertThat(first.halfClosed).isFalse();
    assertThat(e.stats().rotations()).isZero();

    // New definitions take it past the threshold: it rotates as soon as they are acknowledged.
    e.submit(delta(live, node("a"), node("b"), node("c"), node("d")));
    scheduler.runDue();
    assertThat(carried(first)).isGreaterThanOrEqualTo(ROTATE_AFTER);
    assertThat(first.halfClosed).isTrue();
    assertThat(e.stats().rotations()).isEqualTo(1);
    assertThat(e.stats().acked()).isEqualTo(66);
  }

  @Test
  void aStreamRotatesOnceTheDefinitionsItCarriedReachTheThresholdExactly() {
    int live = node("live");
    List<Delta.Builder> deltas = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      deltas.add(delta(live, node("churn" + i)));
    }
    long bytes = 0; // what the ten messages will carry, the encoder's dictionary being the same
    for (Delta.Builder d : deltas) {
      Delta wire = encoder.prepare(d.clone()).build();
      bytes += wire.getDictionary().getSerializedSize();
    }
    encoder.newStream();
    Exporter e = exporter(config().withRotation(bytes, Duration.ZERO));
    for (int i = 0; i < 9; i++) {
      e.submit(deltas.get(i));
      scheduler.runDue();
    }
    assertThat(e.stats().rotations()).isZero();
    e.submit(deltas.get(9));
    scheduler.runDue();
    assertThat(carried(ingest.streams.get(0))).isEqualTo(bytes);
    assertThat(e.stats().rotations()).isEqualTo(1);
  }

  @Test
  void aProcessWhoseEveryDeltaUsesALargeLiveSetDoesNotRotateOverAndOver() {
    Exporter e = exporter(config());
    List<Integer> liveSet = nodes("live", 20);
    // One minimum age of heavy churn: the first stream rotates once.
    for (int i = 0; i < 6; i++) {
      List<Integer> used = new ArrayList<>(liveSet);
      used.addAll(nodes("churn" + i + "-", 10));
      interval(e, used);
    }
    assertThat(e.stats().rotations()).isEqualTo(1);

    // Then only the live set, for five minimum ages.
    for (int i = 0; i < 30; i++) {
      interval(e, liveSet);
    }
    assertThat(ingest.streams).hasSize(2);
    FakeStream second = ingest.streams.get(1);
    Delta opening = second.received.get(0);
    assertThat(opening.getDictionary().getPathNodesCount()).isEqualTo(1 + liveSet.size());
    // Its first message alone is past the byte threshold: only the 2x rule keeps it open.
    assertThat(carried(second)).isGreaterThan(ROTATE_AFTER);
    assertThat(second.halfClosed).isFalse();
    ExporterStats stats = e.stats();
    assertThat(stats.rotations()).isEqualTo(1);
    assertThat(stats.acked()).isEqualTo(36);
    assertThat(stats.reconnects()).isZero();
  }

  /**
   * A stream past both thresholds with delta 11 in flight (applied by the collector, its ack held
   * back) and delta 12 waiting: it is draining.
   */
  private Exporter drainingWithOneInFlight() {
    Exporter e = exporter(config());
    int live = node("live");
    churn(e, live, 10);
    ingest.silent.add(11L);
    e.submit(delta(live));
    e.submit(delta(live));
    scheduler.runDue();
    scheduler.advance(AGE);
    assertThat(sequences(ingest.streams.get(0))).isEqualTo(oneTo(11));
    assertThat(ingest.streams).hasSize(1);
    return e;
  }

  /** After the draining stream failed: resent on a reconnect, nothing lost or applied twice. */
  private void reconnectedWithNothingLost(Exporter e) {
    FakeStream first = ingest.streams.get(0);
    assertThat(first.halfClosed).isFalse();
    assertThat(ingest.streams).hasSize(2);
    assertThat(sequences(ingest.streams.get(1))).containsExactly(11L, 12L);
    assertThat(ingest.streams.get(1).received.get(0).getSource()).isEqualTo(encoder.identity());
    ExporterStats stats = e.stats();
    assertThat(stats.submitted()).isEqualTo(12);
    assertThat(stats.acked()).isEqualTo(12);
    assertThat(stats.duplicates()).isEqualTo(1); // delta 11, applied before the failure
    assertThat(stats.dropped()).isZero();
    assertThat(stats.reconnects()).isEqualTo(1);
    assertThat(stats.rotations()).isZero();
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void aStreamThatFailsWhileDrainingTakesTheReconnectPathAndLosesNothing() {
    Exporter e = drainingWithOneInFlight();
    ingest.streams.get(0).fail(Status.UNAVAILABLE.withDescription("reset").asRuntimeException());
    scheduler.runDue();
    assertThat(scheduler.pendingDelays()).containsExactly(INITIAL);
    scheduler.advance(INITIAL);
    reconnectedWithNothingLost(e);
  }

  @Test
  void aStreamThatTimesOutWhileDrainingTakesTheReconnectPathAndLosesNothing() {
    Exporter e = drainingWithOneInFlight();
    scheduler.advance(ACK_TIMEOUT.plus(INITIAL));
    assertThat(ingest.streams.get(0).cancelled).isTrue();
    assertThat(e.stats().lastError()).hasValueSatisfying(m -> assertThat(m).contains("no ack"));
    reconnectedWithNothingLost(e);
  }

  @Test
  void aMessageNotSentDoesNotCountTowardsTheThreshold() {
    long limit = ExporterConfig.MIN_MESSAGE_BYTES;
    Exporter e = exporter(config().withMaxMessageBytes(limit).withRotation(100_000, Duration.ZERO));
    // One entry too large to send or split, whose message would carry about 45 kB of definitions.
    Delta.Builder huge = delta(main);
    Entry.Builder entry = huge.getEntriesBuilder(0);
    for (int k = 0; k < 45; k++) {
      int n =
          encoder.pathNode(
              main, region, "refused" + k + "x".repeat(1000), RegionKind.REGION_KIND_IO);
      entry.addKey(AttributeValue.newBuilder().setAttributeId(region).setPathNodeId(n));
    }
    for (int k = 0; k < 20_000; k++) {
      entry.addKey(AttributeValue.newBuilder().setAttributeId(time).setIntValue(1L << 40));
    }
    e.submit(huge);
    // Then about 70 kB of definitions that are sent: below the threshold, and below it together
    // with the refused ones only when those count (the first message sent carries about 10 kB).
    for (int i = 0; i < 7; i++) {
      List<Integer> used = new ArrayList<>();
      for (int k = 0; k < 10; k++) {
        used.add(
            encoder.pathNode(
                main, region, "sent" + i + "-" + k + "x".repeat(1000), RegionKind.REGION_KIND_IO));
      }
      e.submit(delta(used));
      scheduler.runDue();
    }
    FakeStream first = ingest.streams.get(0);
    assertThat(sequences(first)).isEqualTo(oneTo(8).subList(1, 8));
    assertThat(carried(first)).isBetween(60_000L, 100_000L - 1);
    ExporterStats stats = e.stats();
    assertThat(stats.dropped()).isEqualTo(1);
    assertThat(stats.rotations()).isZero();
    assertThat(ingest.streams).hasSize(1);
    assertThat(first.halfClosed).isFalse();
  }

  @Test
  void aRotatedStreamTheCollectorDoesNotEndIsCancelledAfterTheAckTimeout() {
    ingest.answerHalfClose = false;
    Exporter e = exporter(config());
    churn(e, node("live"), 10);
    scheduler.advance(AGE);
    FakeStream first = ingest.streams.get(0);
    assertThat(first.halfClosed).isTrue();
    assertThat(first.cancelled).isFalse();
    scheduler.advance(ACK_TIMEOUT.minusMillis(1));
    assertThat(first.cancelled).isFalse();
    scheduler.advance(Duration.ofMillis(1));
    assertThat(first.cancelled).isTrue();
    assertThat(scheduler.pendingDelays()).as("no reconnect").isEmpty();
    ExporterStats stats = e.stats();
    assertThat(stats.rotations()).isEqualTo(1);
    assertThat(stats.reconnects()).isZero();
    assertThat(stats.lastError()).isEmpty();
    assertThat(stats.acked()).isEqualTo(10);
  }

  @Test
  void theRotationSettingsHaveDefaultsAndAreValidated() {
    ExporterConfig defaults = ExporterConfig.defaults();
    assertThat(defaults.rotateAfterBytes()).isEqualTo(1L << 20);
    assertThat(defaults.minStreamAge()).isEqualTo(Duration.ofMinutes(10));
    assertThat(defaults.withRotation(1, Duration.ZERO).rotateAfterBytes()).isEqualTo(1);
    assertThatThrownBy(() -> defaults.withRotation(0, Duration.ofMinutes(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("rotateAfterBytes must be >= 1, was 0");
    assertThatThrownBy(() -> defaults.withRotation(1, Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("minStreamAge must be >= 0, was PT-1S");
  }
}
