package dev.profold.client.internal.export;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.internal.export.ExporterTest.FakeStream;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.ClientOverhead;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.ThreadAggregation;
import dev.profold.proto.v1.ValueType;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.WireStates;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

/**
 * The exporter's message limit: deltas split to fit it, messages that cannot fit dropped and
 * counted instead of ending the stream, and a collector whose limit is lower than the configured
 * one (in-process with a scripted error, and a real Netty server refusing a real message).
 */
class ExporterMessageSizeTest extends InProcessExporterTest {
  private static final long T0 = ExporterTest.T0;
  private static final long LIMIT = ExporterConfig.MIN_MESSAGE_BYTES; // 64 KiB

  /** Entries of a delta of 70,000 to 128 KiB bytes. */
  private static final int ENTRIES = 1800;

  private final DeltaEncoder encoder = ExporterTest.encoder(7);
  private final int region = encoder.dimension("region", ValueType.VALUE_TYPE_PATH);
  private final int time = encoder.measurement("time", ValueType.VALUE_TYPE_DOUBLE, "seconds");
  private final int main = encoder.pathNode(0, region, "main", RegionKind.REGION_KIND_COMPUTE);

  private Exporter exporter(ExporterConfig config) {
    exporter = new Exporter(channel, encoder, config, scheduler, RandomGenerator.getDefault());
    return exporter;
  }

  private static ExporterConfig config(long maxMessageBytes) {
    return ExporterConfig.defaults()
        .withJitter(0)
        .withBackoff(Duration.ofMillis(500), Duration.ofSeconds(2))
        .withMaxMessageBytes(maxMessageBytes);
  }

  /** Interval {@code i}'s delta with {@code entries} entries of one value each, about 40 B each. */
  private Delta.Builder delta(int i, int entries) {
    Delta.Builder d =
        Delta.newBuilder()
            .setIntervalStartUnixNanos(T0 + i * 10_000_000_000L)
            .setIntervalEndUnixNanos(T0 + (i + 1) * 10_000_000_000L)
            .setThreadAggregation(ThreadAggregation.THREAD_AGGREGATION_SUM)
            .setOverhead(ClientOverhead.newBuilder().setCpuNanos(100).setBytesHeld(2048));
    for (int e = 0; e < entries; e++) {
      Aggregate a = new Aggregate();
      a.record(0.001 * (e + 1));
      d.addEntries(
          Entry.newBuilder()
              .addKey(AttributeValue.newBuilder().setAttributeId(region).setPathNodeId(main))
              .addKey(AttributeValue.newBuilder().setAttributeId(time).setIntValue(e))
              .addMeasurements(
                  Measurement.newBuilder().setAttributeId(time).setState(WireStates.toProto(a))));
    }
    return d;
  }

  /**
   * An exporter for a 256 KiB limit that has sent {@code first} as delta 1 on the first stream,
   * which the fake collector applies without acknowledging it (so it is in flight when the stream
   * ends).
   */
  private Exporter sentAndUnacked(Delta.Builder first) {
    Exporter e = exporter(config(4 * LIMIT));
    ingest.silent.add(1L);
    e.submit(first);
    scheduler.runDue();
    return e;
  }

  /**
   * The collector's gRPC layer ends the first stream with RESOURCE_EXHAUSTED and no RetryInfo, as
   * it does for a message over its limit, and the exporter takes it in.
   */
  private void endFirstStreamResourceExhausted(String description) {
    ingest
        .streams
        .get(0)
        .fail(Status.RESOURCE_EXHAUSTED.withDescription(description).asRuntimeException());
    scheduler.runDue();
  }

  private static List<Long> sequences(List<Delta> deltas) {
    return deltas.stream().map(Delta::getSequence).toList();
  }

  @Test
  void aDeltaLargerThanHalfTheLimitGoesOutInPartsThatAllArriveAndAreAcknowledged() {
    Exporter e = exporter(config(LIMIT));
    Delta.Builder big = delta(0, 3000);
    assertThat(big.build().getSerializedSize()).isGreaterThan((int) (2 * LIMIT));
    e.submit(big);
    e.submit(delta(1, 2));
    scheduler.runDue();

    List<Delta> received = ingest.streams.get(0).received;
    int parts = received.size() - 1;
    assertThat(parts).isGreaterThanOrEqualTo(4);
    assertThat(sequences(received)).isEqualTo(sequences(numbered(parts + 1)));
    List<Entry> entries = new ArrayList<>();
    for (Delta d : received.subList(0, parts)) {
      assertThat(d.getSerializedSize()).isLessThanOrEqualTo((int) LIMIT);
      assertThat(d.toBuilder().clearSource().clearDictionary().build().getSerializedSize())
          .isLessThanOrEqualTo((int) (LIMIT / 2));
      assertThat(d.getIntervalStartUnixNanos()).isEqualTo(T0);
      assertThat(d.getOverhead().getBytesHeld()).isEqualTo(2048);
      entries.addAll(d.getEntriesList());
    }
    assertThat(entries).isEqualTo(big.getEntriesList());
    // The interval's own counters go once, with the first part.
    assertThat(received.stream().limit(parts).mapToLong(d -> d.getOverhead().getCpuNanos()).sum())
        .isEqualTo(100);
    assertThat(received.get(parts).getEntriesCount()).isEqualTo(2);

    ExporterStats stats = e.stats();
    assertThat(stats.split()).isEqualTo(1);
    assertThat(stats.acked()).isEqualTo(parts + 1);
    assertThat(stats.dropped()).isZero();
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  private static List<Delta> numbered(int n) {
    List<Delta> out = new ArrayList<>();
    for (int i = 1; i <= n; i++) {
      out.add(Delta.newBuilder().setSequence(i).build());
    }
    return out;
  }

  @Test
  void aDeltaLargerThanTheWholeBufferIsDroppedWithACauseThatSaysSoAndTheNextOnesGoOn() {
    Exporter e = exporter(config(4 * LIMIT).withMaxBufferBytes(LIMIT));
    Delta.Builder big = delta(0, ENTRIES);
    assertThat(big.build().getSerializedSize()).isGreaterThan((int) LIMIT);
    e.submit(big);
    e.submit(delta(1, 3));
    scheduler.runDue();

    assertThat(sequences(ingest.streams.get(0).received)).containsExactly(1L);
    assertThat(ingest.streams.get(0).received.get(0).getEntriesCount()).isEqualTo(3);
    ExporterStats stats = e.stats();
    assertThat(stats.dropped()).isEqualTo(1);
    assertThat(stats.eventsLost()).isEqualTo(ENTRIES);
    assertThat(stats.lastError())
        .hasValueSatisfying(
            m -> assertThat(m).contains("larger than the whole export buffer").contains("65536"));
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void aDeltaThatFitsTheBufferOnlyUnnumberedIsRefusedAndTakesNoBufferedDeltaWithIt() {
    Delta.Builder big = delta(0, 1000);
    int size = big.build().getSerializedSize();
    // A buffer of exactly the big delta's size before its sequence number is set.
    Exporter e = exporter(config(4 * LIMIT).withMaxBufferBytes(size));
    ingest.silent.add(1L); // delta 1 stays buffered, unacknowledged
    e.submit(delta(1, 2));
    scheduler.runDue();
    e.submit(big);
    scheduler.runDue();

    ExporterStats stats = e.stats();
    // Before the fix: numbered, the big delta no longer fit; the buffer dropped delta 1 (the
    // oldest) and then the big one, and the cause read as an outage.
    assertThat(stats.bufferedDeltas()).isEqualTo(1);
    assertThat(stats.dropped()).isEqualTo(1);
    assertThat(stats.eventsLost()).isEqualTo(1000);
    assertThat(stats.lastError())
        .hasValueSatisfying(m -> assertThat(m).contains("larger than the whole export buffer"));
  }

  @Test
  void mergesDuringAnOutageStayWithinHalfTheLimit() {
    ingest.failOnFirstDelta = true; // the collector is down: every stream fails
    Exporter e = exporter(config(LIMIT).withMaxBufferBytes(4 * LIMIT));
    for (int i = 0; i < 40; i++) {
      e.submit(delta(i, 200)); // about 8 KiB each
      scheduler.runDue();
    }
    ingest.failOnFirstDelta = false;
    scheduler.advance(Duration.ofSeconds(5));
    scheduler.runDue();

    FakeStream last = ingest.streams.get(ingest.streams.size() - 1);
    assertThat(e.stats().merged()).isPositive();
    assertThat(last.received).isNotEmpty();
    for (Delta d : last.received) {
      assertThat(d.toBuilder().clearSource().clearDictionary().build().getSerializedSize())
          .isLessThanOrEqualTo((int) (LIMIT / 2));
    }
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void aMessageThatCannotFitIsDroppedAndCountedAndTheStreamGoesOnWithTheDefinitionsInTheNext() {
    Exporter e = exporter(config(LIMIT));
    // One entry larger than the limit: it cannot be split.
    Delta.Builder huge = delta(0, 1);
    for (int k = 0; k < 20_000; k++) {
      huge.getEntriesBuilder(0)
          .addKey(AttributeValue.newBuilder().setAttributeId(time).setIntValue(1L << 40));
    }
    assertThat(huge.build().getSerializedSize()).isGreaterThan((int) LIMIT);
    e.submit(huge);
    e.submit(delta(1, 3));
    scheduler.runDue();

    assertThat(ingest.streams).hasSize(1);
    FakeStream s = ingest.streams.get(0);
    assertThat(sequences(s.received)).containsExactly(2L);
    // The refused message was to carry the source and dictionary: the next one does.
    assertThat(s.received.get(0).getSource()).isEqualTo(encoder.identity());
    assertThat(s.received.get(0).getDictionary().getPathNodesCount()).isEqualTo(1);
    assertThat(s.cancelled).isFalse();

    ExporterStats stats = e.stats();
    assertThat(stats.dropped()).isEqualTo(1);
    assertThat(stats.eventsLost()).isEqualTo(1);
    assertThat(stats.acked()).isEqualTo(1);
    assertThat(stats.reconnects()).isZero();
    assertThat(stats.lastError())
        .hasValueSatisfying(m -> assertThat(m).contains("delta 1 not sent").contains("limit"));
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void aStreamEndedForAMessageOverTheCollectorsLimitLowersTheLimitToTheOneTheErrorNames() {
    Delta.Builder first = delta(0, ENTRIES);
    assertThat(first.build().getSerializedSize()).isBetween(70_001, (int) (2 * LIMIT));
    Exporter e =
        sentAndUnacked(first); // one message: under half our limit of 256 KiB, over the collector's
    endFirstStreamResourceExhausted("gRPC message exceeds maximum size 70000: 101234");
    scheduler.advance(Duration.ofSeconds(1));
    e.submit(delta(1, ENTRIES));
    scheduler.runDue();

    assertThat(ingest.streams).hasSize(2);
    List<Delta> resent = ingest.streams.get(1).received;
    // Delta 1 is not resent (it does not fit 70000 bytes); delta 2 comes as parts of <= 35000.
    assertThat(resent.get(0).getSequence()).isEqualTo(2L);
    assertThat(resent.size()).isGreaterThanOrEqualTo(3);
    for (Delta d : resent) {
      assertThat(d.getSerializedSize()).isLessThanOrEqualTo(70_000);
    }
    ExporterStats stats = e.stats();
    assertThat(stats.dropped()).isEqualTo(1);
    assertThat(stats.split()).isEqualTo(1);
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void withoutALimitInTheErrorTheLimitGoesBelowTheLargestMessageInFlight() {
    Exporter e = sentAndUnacked(delta(0, ENTRIES));
    int refused = ingest.streams.get(0).received.get(0).getSerializedSize();
    endFirstStreamResourceExhausted("too big");
    scheduler.advance(Duration.ofSeconds(1));
    e.submit(delta(1, ENTRIES));
    scheduler.runDue();

    List<Delta> resent = ingest.streams.get(1).received;
    assertThat(resent.get(0).getSequence()).isEqualTo(2L);
    assertThat(resent).allSatisfy(d -> assertThat(d.getSerializedSize()).isLessThan(refused));
    assertThat(e.stats().dropped()).isEqualTo(1);
  }

  @Test
  void aLimitNamedBelowTheSmallestConfigurableOneIsKeptToSoTheRefusedDeltaIsNotResentForever() {
    Delta.Builder first = delta(0, 700);
    int size = first.build().getSerializedSize();
    assertThat(size).isBetween(40_001, (int) LIMIT - 1); // over the collector's, under 64 KiB
    Exporter e = sentAndUnacked(first);
    endFirstStreamResourceExhausted("gRPC message exceeds maximum size 40000: " + size);
    scheduler.advance(Duration.ofSeconds(1));
    e.submit(delta(1, 700));
    scheduler.runDue();

    assertThat(ingest.streams).hasSize(2);
    List<Delta> resent = ingest.streams.get(1).received;
    assertThat(resent).isNotEmpty();
    assertThat(resent.get(0).getSequence()).isEqualTo(2L); // delta 1 is dropped, not resent
    assertThat(resent).allSatisfy(d -> assertThat(d.getSerializedSize()).isLessThan(40_000));
    assertThat(e.stats().dropped()).isEqualTo(1);
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void resourceExhaustedForTooManyPingsDoesNotLowerTheLimit() {
    // gRPC's HTTP/2 ENHANCE_YOUR_CALM is RESOURCE_EXHAUSTED without RetryInfo too: taken for a
    // size limit, it dropped the delta in flight and lowered the limit, each time it came.
    Exporter e = sentAndUnacked(delta(0, ENTRIES));
    endFirstStreamResourceExhausted(
        "Bandwidth exhausted HTTP/2 error code: ENHANCE_YOUR_CALM Received Goaway too_many_pings");
    scheduler.advance(Duration.ofSeconds(1));
    scheduler.runDue();

    assertThat(ingest.streams).hasSize(2);
    assertThat(sequences(ingest.streams.get(1).received)).containsExactly(1L); // resent whole
    assertThat(e.stats().dropped()).isZero();
    assertThat(e.stats().split()).isZero();
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void resourceExhaustedWithNothingInFlightDoesNotLowerTheLimit() {
    Exporter e = exporter(config(4 * LIMIT));
    e.submit(delta(0, 2));
    scheduler.runDue();
    assertThat(e.stats().acked()).isEqualTo(1); // nothing in flight any more
    endFirstStreamResourceExhausted("too big"); // about a size: the nothing-in-flight guard holds
    scheduler.advance(Duration.ofSeconds(1));
    Delta.Builder next = delta(1, ENTRIES);
    assertThat(next.build().getSerializedSize()).isBetween(70_001, (int) (2 * LIMIT));
    e.submit(next); // under half our limit: one message
    scheduler.runDue();

    assertThat(ingest.streams).hasSize(2);
    assertThat(sequences(ingest.streams.get(1).received)).containsExactly(2L);
    assertThat(e.stats().split()).isZero();
    assertThat(e.stats().dropped()).isZero();
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void bufferedDeltasNeverSentAreSplitToTheLoweredLimitNotDropped() {
    Exporter e = sentAndUnacked(delta(0, ENTRIES)); // sent, refused by the collector
    Delta.Builder waiting = delta(1, ENTRIES);
    Delta.Builder small = delta(2, 3);
    e.submit(waiting); // never sent: behind the one in flight
    e.submit(small);
    scheduler.runDue();
    assertThat(sequences(ingest.streams.get(0).received)).containsExactly(1L);
    endFirstStreamResourceExhausted("gRPC message exceeds maximum size 70000: 101234");
    scheduler.advance(Duration.ofSeconds(1));
    scheduler.runDue();

    List<Delta> resent = List.copyOf(ingest.streams.get(1).received);
    assertThat(resent).allSatisfy(d -> assertThat(d.getSerializedSize()).isLessThan(70_000));
    List<Long> seqs = sequences(resent);
    assertThat(seqs.get(0)).isEqualTo(2L); // delta 1 is dropped, the rest numbered on from 2
    for (int i = 1; i < seqs.size(); i++) {
      assertThat(seqs.get(i)).isEqualTo(seqs.get(i - 1) + 1);
    }
    List<Entry> entries = new ArrayList<>();
    resent.subList(0, resent.size() - 1).forEach(d -> entries.addAll(d.getEntriesList()));
    assertThat(entries).isEqualTo(waiting.getEntriesList());
    assertThat(resent.get(resent.size() - 1).getEntriesList()).isEqualTo(small.getEntriesList());
    ExporterStats stats = e.stats();
    assertThat(stats.dropped()).isEqualTo(1);
    assertThat(stats.split()).isEqualTo(1);
    assertThat(stats.acked()).isEqualTo(resent.size());
    assertThat(e.flush(Duration.ZERO)).isTrue();
    e.submit(delta(3, 1));
    scheduler.runDue();
    assertThat(ingest.streams.get(1).received.get(resent.size()).getSequence())
        .isEqualTo(seqs.get(seqs.size() - 1) + 1);
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void afterTheLimitIsLoweredTheDictionaryIsKeptWithinAQuarterOfItSoNewDefinitionsStillFit() {
    Exporter e = sentAndUnacked(delta(0, ENTRIES));
    endFirstStreamResourceExhausted("gRPC message exceeds maximum size 70000: 101234");
    // Thread churn: 80 new names of 1000 bytes, more than the collector takes in one message.
    int thread = encoder.dimension("thread", ValueType.VALUE_TYPE_STRING);
    Delta.Builder d = delta(1, 0);
    for (int t = 0; t < 80; t++) {
      Aggregate a = new Aggregate();
      a.record(0.5);
      d.addEntries(
          Entry.newBuilder()
              .addKey(
                  AttributeValue.newBuilder()
                      .setAttributeId(thread)
                      .setStringId(encoder.string(t + "-" + "x".repeat(1000))))
              .addMeasurements(
                  Measurement.newBuilder().setAttributeId(time).setState(WireStates.toProto(a))));
    }
    e.submit(d);
    e.submit(delta(2, 3));
    scheduler.advance(Duration.ofSeconds(1));
    scheduler.runDue();

    List<Delta> received = ingest.streams.get(1).received;
    assertThat(sequences(received)).containsExactly(2L, 3L);
    assertThat(received).allSatisfy(m -> assertThat(m.getSerializedSize()).isLessThan(70_000));
    assertThat(e.stats().dropped()).isEqualTo(1); // the refused delta only
    assertThat(encoder.takeLimitCounts()).containsKey("dictionary_full");
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void aRealGrpcServerWithALowerLimitCostsOneDeltaAndTheNextOnesArrive() throws Exception {
    Server netty =
        NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", 0))
            .maxInboundMessageSize(70_000)
            .addService(ingest)
            .build()
            .start();
    ManagedChannel real =
        NettyChannelBuilder.forAddress("127.0.0.1", netty.getPort()).usePlaintext().build();
    try (Exporter e =
        new Exporter(
            real,
            encoder,
            config(4 * LIMIT).withBackoff(Duration.ofMillis(10), Duration.ofMillis(50)))) {
      e.submit(delta(0, ENTRIES)); // over the server's limit, under half ours
      assertThat(e.flush(Duration.ofSeconds(30))).isTrue();
      assertThat(e.stats().lastError()).hasValueSatisfying(m -> assertThat(m).contains("not sent"));
      e.submit(delta(1, ENTRIES));
      e.submit(delta(2, 10));
      assertThat(e.flush(Duration.ofSeconds(30))).isTrue();

      ExporterStats stats = e.stats();
      assertThat(stats.dropped()).isEqualTo(1);
      assertThat(stats.split()).isEqualTo(1);
      assertThat(stats.acked()).isGreaterThanOrEqualTo(3);
      List<Delta> applied = new ArrayList<>();
      ingest.streams.forEach(s -> applied.addAll(s.received));
      assertThat(applied.stream().mapToInt(Delta::getEntriesCount).sum()).isEqualTo(ENTRIES + 10);
    } finally {
      real.shutdownNow();
      netty.shutdownNow();
    }
  }
}
