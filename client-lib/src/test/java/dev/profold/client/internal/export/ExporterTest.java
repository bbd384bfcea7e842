package dev.profold.client.internal.export;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.Any;
import com.google.rpc.Code;
import com.google.rpc.RetryInfo;
import dev.profold.proto.v1.Ack;
import dev.profold.proto.v1.AckResult;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.ClientOverhead;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.IngestGrpc;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.PathNode;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ThreadAggregation;
import dev.profold.proto.v1.ValueType;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.WireStates;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.Test;

/**
 * The exporter against a scriptable fake Ingest server over in-process gRPC (direct executors) and
 * a {@link ManualScheduler}: every step runs on the test thread when the test says so, and backoff
 * delays are read from the scheduler's fake clock, never waited for.
 */
class ExporterTest extends InProcessExporterTest {
  static final long T0 = 1_700_000_010_000_000_000L;
  private static final Duration INITIAL = Duration.ofMillis(500);

  /** While a stream is open, the task that marks it old enough to rotate is pending. */
  private static final Duration STREAM_AGE = ExporterConfig.defaults().minStreamAge();

  private final DeltaEncoder encoder = encoder(42);
  private final int region = encoder.dimension("region", ValueType.VALUE_TYPE_PATH);
  private final int time = encoder.measurement("time", ValueType.VALUE_TYPE_DOUBLE, "seconds");
  private final int main = encoder.pathNode(0, region, "main", RegionKind.REGION_KIND_COMPUTE);

  /** An encoder for incarnation {@code incarnation} of checkout/pod-1, started 10 s before T0. */
  static DeltaEncoder encoder(long incarnation) {
    return new DeltaEncoder(
        SourceIdentity.newBuilder()
            .setService("checkout")
            .setInstance("pod-1")
            .setIncarnationId(incarnation)
            .setProcessStartUnixNanos(T0 - 10_000_000_000L)
            .build());
  }

  private static ExporterConfig config() {
    return ExporterConfig.defaults()
        .withJitter(0)
        .withBackoff(INITIAL, Duration.ofSeconds(2))
        .withAckTimeout(Duration.ofSeconds(30));
  }

  private Exporter exporter(ExporterConfig config) {
    return exporter(config, fixedRandom(0.5));
  }

  private Exporter exporter(ExporterConfig config, RandomGenerator random) {
    exporter = new Exporter(channel, encoder, config, scheduler, random);
    return exporter;
  }

  private Exporter exporter(ExporterConfig config, Scheduler on) {
    exporter = new Exporter(channel, encoder, config, on, fixedRandom(0.5));
    return exporter;
  }

  /** Interval {@code i}'s delta: region main, time values as given. */
  private Delta.Builder delta(int i, double... values) {
    return delta(i, main, values);
  }

  private Delta.Builder delta(int i, int node, double... values) {
    Aggregate a = new Aggregate();
    for (double v : values) {
      a.record(v);
    }
    return Delta.newBuilder()
        .setIntervalStartUnixNanos(T0 + i * 10_000_000_000L)
        .setIntervalEndUnixNanos(T0 + (i + 1) * 10_000_000_000L)
        .setThreadAggregation(ThreadAggregation.THREAD_AGGREGATION_SUM)
        .setOverhead(ClientOverhead.newBuilder().setCpuNanos(100))
        .addEntries(
            Entry.newBuilder()
                .addKey(AttributeValue.newBuilder().setAttributeId(region).setPathNodeId(node))
                .addMeasurements(
                    Measurement.newBuilder().setAttributeId(time).setState(WireStates.toProto(a))));
  }

  static RandomGenerator fixedRandom(double value) {
    return new RandomGenerator() {
      @Override
      public long nextLong() {
        return 0;
      }

      @Override
      public double nextDouble() {
        return value;
      }
    };
  }

  private static List<Long> sequences(List<Delta> deltas) {
    return deltas.stream().map(Delta::getSequence).toList();
  }

  private static StatusRuntimeException unavailable(Duration retryDelay) {
    com.google.rpc.Status.Builder s =
        com.google.rpc.Status.newBuilder()
            .setCode(Code.UNAVAILABLE.getNumber())
            .setMessage("shutting down");
    if (retryDelay != null) {
      s.addDetails(retryInfo(retryDelay));
    }
    return StatusProto.toStatusRuntimeException(s.build());
  }

  static Any retryInfo(Duration d) {
    return Any.pack(
        RetryInfo.newBuilder()
            .setRetryDelay(
                com.google.protobuf.Duration.newBuilder()
                    .setSeconds(d.getSeconds())
                    .setNanos(d.getNano()))
            .build());
  }

  @Test
  void acksRemoveDeltasAndOnlyTheFirstDeltaOfTheStreamCarriesSourceAndDictionary() {
    Exporter e = exporter(config());
    e.submit(delta(0, 0.25, 0.5));
    e.submit(delta(1, 1.0));
    e.submit(delta(2, 0.5));
    assertThat(e.flush(Duration.ZERO)).isFalse(); // nothing ran yet
    scheduler.runDue();

    assertThat(ingest.streams).hasSize(1);
    List<Delta> received = ingest.streams.get(0).received;
    assertThat(sequences(received)).containsExactly(1L, 2L, 3L);
    Delta first = received.get(0);
    assertThat(first.getSource()).isEqualTo(encoder.identity());
    assertThat(first.getDictionary().getStringsMap()).containsValue("main");
    assertThat(first.getDictionary().getAttributesCount()).isEqualTo(2);
    assertThat(first.getDictionary().getPathNodesCount()).isEqualTo(1);
    assertThat(first.getFirstSequence()).isZero();
    assertThat(first.getEntries(0).getMeasurements(0).getState().getCount()).isEqualTo(2);
    assertThat(received.get(1).hasSource()).isFalse();
    assertThat(received.get(1).hasDictionary()).isFalse();

    ExporterStats stats = e.stats();
    assertThat(stats.submitted()).isEqualTo(3);
    assertThat(stats.sent()).isEqualTo(3);
    assertThat(stats.acked()).isEqualTo(3);
    assertThat(stats.duplicates()).isZero();
    assertThat(stats.bufferedDeltas()).isZero();
    assertThat(stats.bufferedBytes()).isZero();
    assertThat(stats.reconnects()).isZero();
    assertThat(stats.lastError()).isEmpty();
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void deltasAreSentOneAtATimeByDefault() {
    ingest.silent.add(1L);
    Exporter e = exporter(config());
    e.submit(delta(0, 0.25));
    e.submit(delta(1, 0.5));
    scheduler.runDue();
    assertThat(sequences(ingest.streams.get(0).received)).containsExactly(1L);
    ingest.streams.get(0).ack(1, AckResult.ACK_RESULT_APPLIED);
    scheduler.runDue();
    assertThat(sequences(ingest.streams.get(0).received)).containsExactly(1L, 2L);
    assertThat(e.stats().acked()).isEqualTo(2);
  }

  @Test
  void aPermanentRejectionDropsTheDeltaCountsItByCodeAndResendsTheDictionary() {
    Exporter e = exporter(config());
    e.submit(delta(0, 0.25));
    scheduler.runDue();
    // Delta 2 brings a new path node, and the collector rejects it as invalid.
    int child = encoder.pathNode(main, region, "db", RegionKind.REGION_KIND_IO);
    ingest.rejections.put(2L, Code.INVALID_ARGUMENT);
    e.submit(delta(1, child, 0.5));
    e.submit(delta(2, child, 1.0));
    scheduler.runDue();

    List<Delta> received = ingest.streams.get(0).received;
    assertThat(sequences(received)).containsExactly(1L, 2L, 3L);
    assertThat(received.get(1).getDictionary().getPathNodesCount()).isEqualTo(1);
    // The collector may not have kept the rejected delta's definitions: the next carries them all.
    assertThat(received.get(2).getSource()).isEqualTo(encoder.identity());
    assertThat(received.get(2).getDictionary().getPathNodesCount()).isEqualTo(2);

    ExporterStats stats = e.stats();
    assertThat(stats.rejected()).containsExactly(Map.entry("INVALID_ARGUMENT", 1L));
    assertThat(stats.acked()).isEqualTo(2);
    assertThat(stats.dropped()).isZero(); // rejections are counted apart
    assertThat(stats.bufferedDeltas()).isZero();
    assertThat(stats.lastError()).hasValueSatisfying(m -> assertThat(m).contains("rejected"));
    assertThat(ingest.streams).hasSize(1); // a rejected delta does not end the stream
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void afterAPermanentRejectionTheStreamGoesOnWithoutReusingAnIdItStillMaps() {
    Exporter e = exporter(config());
    int old = encoder.pathNode(main, region, "old", RegionKind.REGION_KIND_IO);
    e.submit(delta(0, old, 0.25));
    scheduler.runDue();
    // Ageing frees "old" (no delta or context uses it); the stream's collector still maps its ids.
    for (int round = 0; round < 3; round++) {
      BitSet paths = new BitSet();
      paths.set(main); // a context in use
      encoder.age(new BitSet(), paths);
    }
    assertThat(encoder.freed()).isEqualTo(2);
    ingest.rejections.put(2L, Code.INVALID_ARGUMENT);
    int next = encoder.pathNode(main, region, "next", RegionKind.REGION_KIND_IO);
    e.submit(delta(1, next, 0.5));
    scheduler.runDue();
    int other = encoder.pathNode(main, region, "other", RegionKind.REGION_KIND_WAIT);
    e.submit(delta(2, other, 1.0));
    scheduler.runDue();

    assertThat(ingest.streams).hasSize(1);
    assertThat(sequences(ingest.streams.get(0).received)).containsExactly(1L, 2L, 3L);
    assertNoIdRedefined(ingest.streams.get(0).received);
  }

  /** Protocol §3: on one stream an id may be defined again only with the same content. */
  private static void assertNoIdRedefined(List<Delta> stream) {
    Map<Integer, String> strings = new HashMap<>();
    Map<Integer, PathNode> nodes = new HashMap<>();
    for (Delta d : stream) {
      d.getDictionary()
          .getStringsMap()
          .forEach(
              (id, s) ->
                  assertThat(strings.computeIfAbsent(id, k -> s))
                      .as("string %d on the stream", id)
                      .isEqualTo(s));
      for (PathNode n : d.getDictionary().getPathNodesList()) {
        assertThat(nodes.computeIfAbsent(n.getId(), k -> n))
            .as("path node %d on the stream", n.getId())
            .isEqualTo(n);
      }
    }
  }

  @Test
  void failedPreconditionIsPermanentToo() {
    Exporter e = exporter(config());
    ingest.rejections.put(1L, Code.FAILED_PRECONDITION);
    e.submit(delta(0, 0.25));
    scheduler.runDue();
    assertThat(e.stats().rejected("FAILED_PRECONDITION")).isEqualTo(1);
    assertThat(e.stats().bufferedDeltas()).isZero();
    assertThat(scheduler.pendingDelays()).containsExactly(STREAM_AGE); // no retry
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void aFailedStreamIsDescribedInOneLineWithItsCauseButNoStackTrace() {
    Exporter e = exporter(config());
    e.submit(delta(0, 0.25));
    scheduler.runDue();
    ingest
        .streams
        .get(0)
        .fail(Status.UNAVAILABLE.withDescription("io exception").asRuntimeException());
    scheduler.runDue();
    assertThat(e.stats().lastError()).hasValue("stream failed: UNAVAILABLE: io exception");

    // A transport failure carries a local cause (the in-process fake drops causes, as the wire
    // does): its message is kept, its stack trace is not.
    java.net.ConnectException refused =
        new java.net.ConnectException("Connection refused: /127.0.0.1:9");
    assertThat(
            Statuses.describe(
                Status.UNAVAILABLE
                    .withDescription("io exception")
                    .withCause(new java.io.IOException("finishConnect failed", refused))))
        .isEqualTo("UNAVAILABLE: io exception (finishConnect failed)");
    assertThat(
            Statuses.describe(Status.INTERNAL.withCause(new IllegalStateException(null, refused))))
        .isEqualTo("INTERNAL (Connection refused: /127.0.0.1:9)");
    // An endpoint that answers HTTP/1.1 (the collector's HTTP port, say) gets a hint.
    assertThat(
            Statuses.describe(
                Status.INTERNAL.withDescription(
                    "http2 exception (First received frame was not SETTINGS. Hex dump for first"
                        + " 5 bytes: 485454502f)")))
        .endsWith("is it the collector's HTTP port, for /metrics, rather than its gRPC port?)");
  }

  @Test
  void aServerErrorReconnectsAfterTheBackoffAndResendsUnackedDeltasWithTheFullDictionary() {
    Exporter e = exporter(config());
    e.submit(delta(0, 0.25));
    scheduler.runDue();
    ingest.silent.add(2L); // applied, but the ack is lost
    e.submit(delta(1, 0.5));
    scheduler.runDue();
    e.submit(delta(2, 1.0)); // waits: delta 2 is in flight
    scheduler.runDue();
    FakeStream first = ingest.streams.get(0);
    assertThat(sequences(first.received)).containsExactly(1L, 2L);

    first.fail(Status.UNAVAILABLE.withDescription("connection reset").asRuntimeException());
    scheduler.runDue();
    assertThat(scheduler.pendingDelays()).containsExactly(INITIAL);
    assertThat(e.stats().lastError())
        .hasValueSatisfying(m -> assertThat(m).contains("connection reset"));

    scheduler.advance(INITIAL.minusMillis(1));
    assertThat(ingest.streams).hasSize(1);
    scheduler.advance(Duration.ofMillis(1));
    assertThat(ingest.streams).hasSize(2);

    List<Delta> resent = ingest.streams.get(1).received;
    assertThat(sequences(resent)).containsExactly(2L, 3L);
    Delta again = resent.get(0);
    assertThat(again.getSource()).isEqualTo(encoder.identity());
    assertThat(again.getDictionary().getStringsCount()).isEqualTo(1);
    assertThat(again.getDictionary().getAttributesCount()).isEqualTo(2);
    assertThat(again.getDictionary().getPathNodesCount()).isEqualTo(1);
    // Resent unchanged: the same sequence and content as on the first stream.
    assertThat(again.toBuilder().clearSource().clearDictionary().build())
        .isEqualTo(first.received.get(1));
    assertThat(resent.get(1).hasDictionary()).isFalse();

    ExporterStats stats = e.stats();
    assertThat(stats.reconnects()).isEqualTo(1);
    assertThat(stats.sent()).isEqualTo(4);
    assertThat(stats.acked()).isEqualTo(3);
    assertThat(stats.duplicates()).isEqualTo(1); // delta 2 had been applied
    assertThat(stats.bufferedDeltas()).isZero();
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void consecutiveFailuresDoubleTheBackoffUpToTheCap() {
    Exporter e = exporter(config());
    ingest.failOnFirstDelta = true;
    e.submit(delta(0, 0.25));
    scheduler.runDue();
    List<Duration> delays = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      assertThat(scheduler.pendingDelays()).hasSize(1);
      Duration d = scheduler.pendingDelays().get(0);
      delays.add(d);
      scheduler.advance(d);
    }
    assertThat(delays)
        .containsExactly(
            Duration.ofMillis(500),
            Duration.ofMillis(1000),
            Duration.ofMillis(2000),
            Duration.ofMillis(2000));
    assertThat(e.stats().reconnects()).isEqualTo(4);

    // An acknowledged delta resets the backoff.
    ingest.failOnFirstDelta = false;
    scheduler.advance(scheduler.pendingDelays().get(0));
    assertThat(e.stats().acked()).isEqualTo(1);
    ingest.streams.get(ingest.streams.size() - 1).fail(Status.UNAVAILABLE.asRuntimeException());
    scheduler.runDue();
    assertThat(scheduler.pendingDelays()).containsExactly(INITIAL); // back to the first step
    e.submit(delta(1, 0.5));
    scheduler.runDue();
    assertThat(e.stats().sent()).isEqualTo(6); // the backoff holds for new deltas too
    scheduler.advance(INITIAL);
    assertThat(e.stats().acked()).isEqualTo(2);
  }

  @Test
  void jitterSpreadsTheBackoffBothWays() {
    ExporterConfig jittered = config().withJitter(0.2);
    ingest.failOnFirstDelta = true;
    exporter(jittered, fixedRandom(0.0)).submit(delta(0, 0.25));
    scheduler.runDue();
    assertThat(scheduler.pendingDelays()).containsExactly(Duration.ofMillis(400));
  }

  @Test
  void jitterUpwards() {
    ExporterConfig jittered = config().withJitter(0.2);
    ingest.failOnFirstDelta = true;
    exporter(jittered, fixedRandom(0.75)).submit(delta(0, 0.25));
    scheduler.runDue();
    assertThat(scheduler.pendingDelays()).containsExactly(Duration.ofMillis(550));
  }

  @Test
  void aRetryInfoDelayOnTheStreamErrorIsHonoured() {
    Exporter e = exporter(config());
    ingest.silent.add(1L);
    e.submit(delta(0, 0.25));
    scheduler.runDue();
    ingest.streams.get(0).fail(unavailable(Duration.ofSeconds(7)));
    scheduler.runDue();
    assertThat(scheduler.pendingDelays()).containsExactly(Duration.ofSeconds(7));
    scheduler.advance(Duration.ofMillis(6999));
    assertThat(ingest.streams).hasSize(1);
    scheduler.advance(Duration.ofMillis(1));
    assertThat(ingest.streams).hasSize(2);
    assertThat(sequences(ingest.streams.get(1).received)).containsExactly(1L);
    assertThat(e.stats().duplicates()).isEqualTo(1);
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void aRetryInfoDelayIsNeverShortenedByJitter() {
    Exporter e = exporter(config().withJitter(0.2), fixedRandom(0.0));
    ingest.silent.add(1L);
    e.submit(delta(0, 0.25));
    scheduler.runDue();
    ingest.streams.get(0).fail(unavailable(Duration.ofSeconds(5)));
    scheduler.runDue();
    assertThat(scheduler.pendingDelays()).containsExactly(Duration.ofSeconds(5));
  }

  @Test
  void aRetryableRejectionKeepsTheDeltaAndResendsItAfterTheRetryInfoDelay() {
    Exporter e = exporter(config());
    ingest.rejections.put(1L, Code.RESOURCE_EXHAUSTED);
    ingest.rejectionDelay = Duration.ofSeconds(3);
    e.submit(delta(0, 0.25));
    scheduler.runDue();

    ExporterStats stats = e.stats();
    assertThat(stats.rejected("RESOURCE_EXHAUSTED")).isEqualTo(1);
    assertThat(stats.bufferedDeltas()).isEqualTo(1);
    assertThat(stats.acked()).isZero();
    assertThat(scheduler.pendingDelays()).containsExactly(Duration.ofSeconds(3));
    assertThat(ingest.streams.get(0).cancelled).isTrue(); // the stream is abandoned

    scheduler.advance(Duration.ofMillis(2999));
    assertThat(ingest.streams).hasSize(1);
    scheduler.advance(Duration.ofMillis(1));
    assertThat(ingest.streams).hasSize(2);
    Delta resent = ingest.streams.get(1).received.get(0);
    assertThat(resent.getSequence()).isEqualTo(1);
    assertThat(resent.toBuilder().clearSource().clearDictionary().build())
        .isEqualTo(
            ingest.streams.get(0).received.get(0).toBuilder()
                .clearSource()
                .clearDictionary()
                .build());
    assertThat(e.stats().acked()).isEqualTo(1);
    assertThat(e.stats().duplicates()).isZero();
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void noAckWithinTheTimeoutAbandonsTheStreamAndResends() {
    Exporter e = exporter(config().withAckTimeout(Duration.ofSeconds(30)));
    ingest.silent.add(1L);
    e.submit(delta(0, 0.25));
    scheduler.runDue();
    assertThat(scheduler.pendingDelays()).containsExactly(Duration.ofSeconds(30), STREAM_AGE);

    scheduler.advance(Duration.ofSeconds(30));
    assertThat(ingest.streams.get(0).cancelled).isTrue();
    assertThat(e.stats().lastError()).hasValueSatisfying(m -> assertThat(m).contains("no ack"));
    assertThat(scheduler.pendingDelays()).containsExactly(INITIAL);
    scheduler.advance(INITIAL);
    assertThat(sequences(ingest.streams.get(1).received)).containsExactly(1L);
    assertThat(e.stats().duplicates()).isEqualTo(1);
    assertThat(scheduler.pendingDelays()).containsExactly(STREAM_AGE); // acked: no ack timer
  }

  @Test
  void aLargeMessageInFlightGetsASecondPer64KiBMoreBeforeItsStreamIsAbandoned() {
    // A merged delta of megabytes on a slow link: timed out while still going up, it was sent
    // again and again, and everything behind it waited.
    Delta.Builder big = delta(0, 0.25);
    Entry entry = big.getEntries(0);
    for (int i = 0; i < 12_000; i++) {
      big.addEntries(entry);
    }
    Exporter e = exporter(config().withAckTimeout(Duration.ofSeconds(30)));
    ingest.silent.add(1L);
    e.submit(big);
    scheduler.runDue();
    long wire = ingest.streams.get(0).received.get(0).getSerializedSize();
    long allowance = wire / Exporter.UPLOAD_BYTES_PER_SECOND;
    assertThat(allowance).as("seconds for %d bytes", wire).isGreaterThanOrEqualTo(2);

    scheduler.advance(Duration.ofSeconds(30 + allowance).minusMillis(1));
    assertThat(ingest.streams.get(0).cancelled).as("still given time").isFalse();
    scheduler.advance(Duration.ofMillis(1));
    assertThat(ingest.streams.get(0).cancelled).isTrue();
    assertThat(e.stats().lastError())
        .hasValueSatisfying(m -> assertThat(m).contains("no ack within " + (30 + allowance) + "s"));
  }

  @Test
  void aRetryInfoDelayOfZeroStillBacksOffAndGrowsWithEachFailure() {
    // A collector configured with retry_delay: 0s, overloaded: every client reconnected at once,
    // in a loop, each time sending its source and dictionary again.
    Exporter e = exporter(config());
    ingest.silent.add(1L);
    e.submit(delta(0, 0.25));
    scheduler.runDue();
    ingest.streams.get(0).fail(unavailable(Duration.ZERO));
    scheduler.runDue();
    assertThat(scheduler.pendingDelays()).containsExactly(INITIAL);
    ingest.silent.add(1L); // no ack on the next stream either: an ack is progress
    scheduler.advance(INITIAL);
    assertThat(ingest.streams).hasSize(2);
    ingest.streams.get(1).fail(unavailable(Duration.ZERO));
    scheduler.runDue();
    assertThat(scheduler.pendingDelays()).containsExactly(INITIAL.multipliedBy(2));
  }

  @Test
  void aRetryInfoDelayBeyondTenMinutesIsCutToThem() {
    Exporter e = exporter(config());
    ingest.silent.add(1L);
    e.submit(delta(0, 0.25));
    scheduler.runDue();
    ingest.streams.get(0).fail(unavailable(Duration.ofDays(365 * 292)));
    scheduler.runDue();
    assertThat(scheduler.pendingDelays()).containsExactly(Backoff.MAX_ASKED);
  }

  @Test
  void anAskedDelayUpToALongMaxBackoffIsNotCutShortForTheLastFlush() {
    // The flush's early try was allowed after 10 minutes while the reconnect honoured 20.
    Exporter e = exporter(config().withBackoff(INITIAL, Duration.ofHours(1)));
    ingest.silent.add(1L);
    e.submit(delta(0, 0.25));
    scheduler.runDue();
    ingest.streams.get(0).fail(unavailable(Duration.ofMinutes(20)));
    scheduler.runDue();
    assertThat(scheduler.pendingDelays())
        .contains(Duration.ofMinutes(20))
        .doesNotContain(Backoff.MAX_ASKED);
  }

  @Test
  void aStatusWhoseDetailsDoNotMatchItsCodeStillEndsTheStreamAndReconnects() {
    // StatusProto.fromThrowable throws when the details' code differs from the call's (a proxy
    // rewriting statuses): the exporter then kept the dead stream as its current one and never
    // reconnected.
    Exporter e = exporter(config());
    ingest.silent.add(1L);
    e.submit(delta(0, 0.25));
    scheduler.runDue();
    com.google.rpc.Status details =
        com.google.rpc.Status.newBuilder()
            .setCode(Code.UNAVAILABLE.getNumber())
            .addDetails(retryInfo(Duration.ofSeconds(3)))
            .build();
    io.grpc.Metadata trailers = new io.grpc.Metadata();
    trailers.put(
        io.grpc.Metadata.Key.of("grpc-status-details-bin", io.grpc.Metadata.BINARY_BYTE_MARSHALLER),
        details.toByteArray());
    ingest.streams.get(0).fail(io.grpc.Status.INTERNAL.asRuntimeException(trailers));
    scheduler.runDue();
    assertThat(e.stats().internalErrors()).isZero();
    assertThat(scheduler.pendingDelays())
        .containsExactly(INITIAL); // the backoff: no readable delay
    scheduler.advance(INITIAL);
    assertThat(ingest.streams).hasSize(2);
    assertThat(sequences(ingest.streams.get(1).received)).containsExactly(1L);
  }

  @Test
  void deltasSubmittedWhileTheCollectorIsUnreachableAreMergedNotDropped() throws Exception {
    server.shutdownNow();
    server.awaitTermination();
    long oneDelta = delta(0, 0.25, 0.5).setSequence(1).build().getSerializedSize();
    Exporter e = exporter(config().withMaxBufferBytes(oneDelta * 5 / 2));
    double total = 0;
    for (int i = 0; i < 6; i++) {
      e.submit(delta(i, 0.25, 0.5));
      total += 0.75;
      scheduler.advance(Duration.ofSeconds(10)); // the interval passes; reconnects fail
    }
    ExporterStats outage = e.stats();
    assertThat(outage.sent()).isZero();
    assertThat(outage.merged()).isGreaterThan(0);
    assertThat(outage.dropped()).isZero();
    assertThat(outage.bufferedBytes()).isLessThanOrEqualTo(oneDelta * 5 / 2);
    assertThat(outage.reconnects()).isGreaterThan(0);
    ExportReport report = e.takeReport(); // what the next delta tells the collector
    assertThat(report)
        .isEqualTo(
            new ExportReport(
                outage.reconnects(), outage.merged(), outage.bufferedBytes(), oneDelta * 5 / 2));
    ExportReport next = e.takeReport(); // each count once
    assertThat(next.reconnects()).isZero();
    assertThat(next.deltasMerged()).isZero();
    assertThat(next.bufferedBytes()).isEqualTo(outage.bufferedBytes());

    // The collector comes back on the same name (that the exporter resets gRPC's own connection
    // backoff is checked with a channel that has one, below).
    server =
        InProcessServerBuilder.forName(name).directExecutor().addService(ingest).build().start();
    scheduler.runUntil(
        () -> e.stats().bufferedDeltas() == 0, Duration.ofSeconds(30), Duration.ofSeconds(2));

    List<Delta> received = ingest.streams.get(ingest.streams.size() - 1).received;
    assertThat(received.get(0).getFirstSequence()).isEqualTo(1);
    assertThat(received.get(received.size() - 1).getSequence()).isEqualTo(6);
    long count = 0;
    double sum = 0;
    long cpu = 0;
    for (Delta d : received) {
      for (Entry entry : d.getEntriesList()) {
        count += entry.getMeasurements(0).getState().getCount();
        sum += entry.getMeasurements(0).getState().getSum();
      }
      cpu += d.getOverhead().getCpuNanos();
    }
    assertThat(count).isEqualTo(12);
    assertThat(sum).isEqualTo(total);
    assertThat(cpu).isEqualTo(600);
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void aCollectorBackAfterAnOutageIsReachedAtTheExportersNextAttempt() throws Exception {
    server.shutdownNow();
    server.awaitTermination();
    BackingOffChannel backingOff = new BackingOffChannel(channel);
    exporter = new Exporter(backingOff, encoder, config(), scheduler, fixedRandom(0.5));
    exporter.submit(delta(0, 0.25));
    scheduler.advance(Duration.ofSeconds(10)); // attempts 0.5, 1, 2, 2, 2 s apart, all refused
    long attempts = exporter.stats().reconnects();
    assertThat(attempts).isGreaterThan(2);
    // before every attempt, the first one included (the connection made at start may have failed)
    assertThat(backingOff.resets()).isEqualTo((int) attempts + 1);

    server =
        InProcessServerBuilder.forName(name).directExecutor().addService(ingest).build().start();
    assertThat(scheduler.pendingDelays()).hasSize(1);
    scheduler.advance(scheduler.pendingDelays().get(0)); // the exporter's next attempt, no later
    assertThat(exporter.stats().bufferedDeltas()).isZero();
    assertThat(sequences(ingest.streams.get(ingest.streams.size() - 1).received))
        .containsExactly(1L);
    assertThat(backingOff.failedFast()).isZero();
  }

  /**
   * Runs {@code flushLast} on another thread while this one drives the exporter's scheduler without
   * letting time pass (or by {@code advance} per round): its answer, within 10 s.
   */
  private Boolean flushLastDriven(Exporter e, Duration timeout, Duration advance) throws Exception {
    return driven(CompletableFuture.supplyAsync(() -> e.flushLast(timeout)), advance);
  }

  /** Drives the scheduler (by {@code advance} per round) until {@code last} is done: its answer. */
  private Boolean driven(CompletableFuture<Boolean> last, Duration advance) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!last.isDone() && System.nanoTime() < deadline) {
      scheduler.advance(advance);
      Thread.onSpinWait();
    }
    assertThat(last).as("flushLast returned").isDone();
    return last.get();
  }

  /**
   * Before a shutdown, an exporter waiting out its backoff tries the collector at once, and when
   * that attempt cannot reach it the wait ends: an unreachable collector does not hold the
   * process's exit for the whole timeout (5 s by default, added to every exit before). The
   * exporter's own schedule goes on.
   */
  @Test
  void theLastFlushTriesTheCollectorAtOnceAndGivesUpWhenItIsNotThere() throws Exception {
    server.shutdownNow();
    exporter = new Exporter(channel, encoder, config(), scheduler, fixedRandom(0.5));
    exporter.submit(delta(0, 0.25));
    scheduler.advance(Duration.ofSeconds(2)); // refused at 0 s, 0.5 s and 1.5 s
    long attempts = exporter.stats().reconnects();
    assertThat(scheduler.pendingDelays()).as("a reconnect waits for its backoff").isNotEmpty();

    assertThat(flushLastDriven(exporter, Duration.ofDays(1), Duration.ZERO))
        .as("returns at once, not after a day")
        .isFalse();
    assertThat(exporter.stats().reconnects())
        .as("tried with no time passing")
        .isEqualTo(attempts + 1);
    assertThat(exporter.unacknowledged()).isEqualTo(1); // what the shutdown then reports lost
    assertThat(scheduler.pendingDelays()).as("the exporter's own schedule goes on").isNotEmpty();
  }

  /**
   * A collector that is there and asks for a retry (RetryInfo) during the last flush is retried
   * within the flush's timeout, not given up on.
   */
  @Test
  void theLastFlushRetriesACollectorThatIsThereAndAsksForARetry() throws Exception {
    Exporter e = exporter(config());
    ingest.rejections.put(1L, Code.UNAVAILABLE);
    ingest.rejectionDelay = Duration.ofSeconds(1);
    e.submit(delta(0, 0.25));
    assertThat(flushLastDriven(e, Duration.ofSeconds(30), Duration.ofMillis(100)))
        .as("acknowledged after the retry")
        .isTrue();
    assertThat(e.stats().rejected("UNAVAILABLE")).isEqualTo(1);
    assertThat(e.stats().acked()).isEqualTo(1);
  }

  /**
   * The last flush tries a collector at once only when the exporter waits out its own backoff: a
   * collector that asked for a delay (RetryInfo) is not tried before it, bound or not.
   */
  @Test
  void theLastFlushDoesNotCutADelayTheCollectorAskedFor() throws Exception {
    Exporter e = exporter(config());
    ingest.rejections.put(1L, Code.UNAVAILABLE);
    ingest.rejectionDelay = Duration.ofSeconds(10);
    e.submit(delta(0, 0.25));
    scheduler.runDue();
    assertThat(scheduler.pendingDelays()).contains(Duration.ofSeconds(10));
    // with no time passing on the scheduler: what flushLast posts runs, nothing else
    assertThat(flushLastDriven(e, Duration.ofMillis(300), Duration.ZERO))
        .as("not acknowledged within the bound")
        .isFalse();
    assertThat(ingest.streams).as("no stream before the asked delay").hasSize(1);
    scheduler.advance(Duration.ofSeconds(10));
    assertThat(ingest.streams).hasSize(2);
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  /**
   * After failures in a row the backoff outgrows a short delay the collector asks for: the last
   * flush connects once the asked delay has passed, not only once the backoff has.
   */
  @Test
  void theLastFlushConnectsOnceTheAskedDelayHasPassedThoughTheBackoffIsLonger() throws Exception {
    Exporter e = exporter(config()); // backoff 500 ms doubling to 2 s, no jitter
    ingest.silent.add(1L);
    e.submit(delta(0, 0.25));
    scheduler.runDue();
    for (int i = 0; i < 3; i++) { // the backoff grows: 0.5, 1, 2 s
      ingest.silent.add(1L);
      ingest.streams.get(i).fail(unavailable(null));
      scheduler.runDue();
      scheduler.advance(scheduler.pendingDelays().stream().min(Duration::compareTo).orElseThrow());
    }
    assertThat(ingest.streams).hasSize(4);
    ingest.streams.get(3).fail(unavailable(Duration.ofMillis(100))); // asks for 100 ms
    scheduler.runDue();
    assertThat(scheduler.pendingDelays()).contains(Duration.ofSeconds(2));

    CompletableFuture<Boolean> last =
        CompletableFuture.supplyAsync(() -> e.flushLast(Duration.ofSeconds(30)));
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
    while (System.nanoTime() < deadline) {
      scheduler.runDue(); // runs what flushLast posts, with no time passing
      Thread.onSpinWait();
    }
    assertThat(ingest.streams).as("not before the asked 100 ms").hasSize(4);
    scheduler.advance(Duration.ofMillis(100));
    assertThat(ingest.streams).as("at once after them, not after the 2 s backoff").hasSize(5);
    assertThat(driven(last, Duration.ZERO)).isTrue();
  }

  @Test
  void deltasStillBufferedWhenTheExporterClosesAreCountedDroppedAndNotWaitedFor() {
    Exporter e = exporter(config());
    ingest.silent.add(1L); // applied, but its ack never comes: delta 1 stays in flight
    e.submit(delta(0, 0.25));
    scheduler.runDue();
    e.submit(delta(1, 0.25, 0.5));
    e.submit(delta(2, 0.25, 0.5, 0.75));
    scheduler.runDue();
    assertThat(ingest.streams.get(0).received).hasSize(1); // 2 and 3 wait behind the window
    assertThat(e.unacknowledged()).isEqualTo(3);

    e.close(); // as a shutdown does once its wait for the acks ran out
    scheduler.runDue();
    ExporterStats s = e.stats();
    assertThat(s.dropped()).as("the delta in flight and the two never sent").isEqualTo(3);
    assertThat(s.eventsLost()).isEqualTo(1 + 2 + 3);
    assertThat(s.bufferedDeltas()).isZero();
    assertThat(s.bufferedBytes()).isZero();
    assertThat(e.unacknowledged()).isZero();
    assertThat(e.flush(Duration.ZERO)).as("nothing left to wait for").isTrue();
    scheduler.advance(Duration.ofMinutes(5));
    assertThat(ingest.streams).hasSize(1);
    assertThat(ingest.streams.get(0).received).hasSize(1); // nothing sent after the close
  }

  /** Delta 1 in flight (its ack held back), then delta 2 takes the buffer over its bound. */
  private Exporter inFlightDeltaDroppedOnOverflow() {
    ingest.silent.add(1L);
    long one = delta(0, 0.25, 0.5).setSequence(1).build().getSerializedSize();
    Exporter e = exporter(config().withMaxBufferBytes(one * 3 / 2));
    e.submit(delta(0, 0.25, 0.5));
    scheduler.runDue();
    e.submit(delta(1, 1.0, 2.0)); // delta 1, sent, is the one dropped to make room
    scheduler.runDue();
    ExporterStats s = e.stats();
    assertThat(s.bufferedDeltas()).isEqualTo(1);
    assertThat(s.bufferedBytes()).isLessThanOrEqualTo(one * 3 / 2); // the bound holds
    assertThat(s.dropped()).as("not known to be lost yet").isZero();
    assertThat(s.eventsLost()).isZero();
    return e;
  }

  /** The WARNING messages the exporters log while {@code body} runs. */
  private static List<String> warningsDuring(Runnable body) {
    return dev.profold.client.internal.LogCapture.warnings(Exporter.class.getName(), body);
  }

  @Test
  void anInFlightDeltaDroppedOnOverflowIsNotCountedLostWhenItsAckThenSaysApplied() {
    Exporter[] made = new Exporter[1];
    List<String> warnings =
        warningsDuring(
            () -> {
              made[0] = inFlightDeltaDroppedOnOverflow();
              ingest
                  .streams
                  .get(0)
                  .ack(1, AckResult.ACK_RESULT_APPLIED); // the collector applied it
              scheduler.runDue();
            });
    assertThat(warnings)
        .as("nothing was lost: no warning that deltas were dropped (before the fix: one)")
        .noneMatch(w -> w.contains("export buffer"));
    Exporter e = made[0];
    ExporterStats s = e.stats();
    assertThat(s.acked() + s.dropped())
        .as("acked + dropped <= submitted")
        .isLessThanOrEqualTo(s.submitted());
    assertThat(s.eventsLost()).as("events the collector applied are not lost").isZero();
    assertThat(s.acked()).isEqualTo(2); // delta 2 went out after the ack
    assertThat(s.dropped()).isZero();
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void anInFlightDeltaDroppedOnOverflowIsCountedLostOnceWhenItsStreamFailsBeforeTheAck() {
    Exporter[] made = new Exporter[1];
    List<String> warnings =
        warningsDuring(
            () -> {
              made[0] = inFlightDeltaDroppedOnOverflow();
              ingest.streams.get(0).fail(Status.UNAVAILABLE.asRuntimeException());
              scheduler.runDue();
            });
    assertThat(warnings).anyMatch(w -> w.contains("the oldest deltas were dropped"));
    Exporter e = made[0];
    assertThat(e.stats().dropped()).isEqualTo(1); // it cannot be resent: lost
    assertThat(e.stats().eventsLost()).isEqualTo(2);
    scheduler.advance(INITIAL);
    assertThat(sequences(ingest.streams.get(1).received)).containsExactly(2L);
    ExporterStats s = e.stats();
    assertThat(s.acked()).isEqualTo(1);
    assertThat(s.dropped()).isEqualTo(1);
    assertThat(s.eventsLost()).isEqualTo(2);
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void anInFlightDeltaDroppedOnOverflowAndThenRejectedIsCountedAsRejectedOnly() {
    Exporter e = inFlightDeltaDroppedOnOverflow();
    ingest
        .streams
        .get(0)
        .out
        .onNext(
            Ack.newBuilder()
                .setSequence(1)
                .setResult(AckResult.ACK_RESULT_REJECTED)
                .setStatus(
                    com.google.rpc.Status.newBuilder()
                        .setCode(Code.INVALID_ARGUMENT.getNumber())
                        .setMessage("no"))
                .build());
    scheduler.runDue();
    ExporterStats s = e.stats();
    assertThat(s.rejected("INVALID_ARGUMENT")).isEqualTo(1);
    assertThat(s.dropped()).isZero(); // rejections are counted apart
    assertThat(s.eventsLost()).isZero();
    assertThat(s.acked()).isEqualTo(1); // delta 2
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void closeHalfClosesTheStreamAndLaterSubmitsAreDropped() {
    Exporter e = exporter(config());
    e.submit(delta(0, 0.25));
    scheduler.runDue();
    e.close();
    scheduler.runDue();
    assertThat(ingest.streams.get(0).halfClosed).isTrue();
    e.submit(delta(1, 0.25, 0.5));
    scheduler.runDue();
    assertThat(e.stats().dropped()).isEqualTo(1);
    assertThat(e.stats().eventsLost()).isEqualTo(2);
    assertThat(ingest.streams).hasSize(1);
    assertThat(sequences(ingest.streams.get(0).received)).containsExactly(1L);
    assertThat(scheduler.isShutdown()).isFalse(); // the caller owns it
  }

  /**
   * A scheduler that, on its first task, lets {@link Exporter#close} happen first: as if close ran
   * between a submit's closed check and its hand-over to the exporter's thread. When {@code
   * refuseAfterClose}, it then rejects every task, as the exporter's own scheduler does once shut
   * down.
   */
  private Scheduler closingOnFirstTask(AtomicReference<Exporter> target, boolean refuseAfterClose) {
    return new Scheduler() {
      private boolean first = true;

      @Override
      public void execute(Runnable task) {
        if (first) {
          first = false;
          target.get().close();
        }
        if (refuseAfterClose) {
          throw new RejectedExecutionException("shut down");
        }
        scheduler.execute(task);
      }

      @Override
      public Cancellable schedule(Runnable task, Duration delay) {
        return scheduler.schedule(task, delay);
      }

      @Override
      public void shutdown() {}
    };
  }

  @Test
  void aDeltaSubmittedAsTheExporterClosesIsCountedAsDropped() {
    AtomicReference<Exporter> target = new AtomicReference<>();
    Exporter e = exporter(config(), closingOnFirstTask(target, false));
    target.set(e);
    e.submit(delta(0, 0.25, 0.5));
    scheduler.runDue();
    assertThat(ingest.streams).isEmpty();
    assertThat(e.stats().dropped()).isEqualTo(1);
    assertThat(e.stats().eventsLost()).isEqualTo(2);
    assertThat(e.flush(Duration.ZERO)).isTrue(); // nothing left unaccounted for
  }

  @Test
  void aDeltaSubmittedAsTheExporterClosesIsCountedAsDroppedEvenIfItsSchedulerRefuses() {
    AtomicReference<Exporter> target = new AtomicReference<>();
    Exporter e = exporter(config(), closingOnFirstTask(target, true));
    target.set(e);
    e.submit(delta(0, 0.25, 0.5));
    assertThat(e.stats().dropped()).isEqualTo(1);
    assertThat(e.stats().eventsLost()).isEqualTo(2);
    assertThat(e.stats().internalErrors()).isZero();
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void theEventsADroppedDeltaReportedAsDroppedAreCountedAsLostToo() {
    Exporter e = exporter(config());
    e.close();
    scheduler.runDue();
    Delta.Builder reporting = delta(0, 0.25, 0.5);
    reporting.getOverheadBuilder().setEventsDropped(5); // earlier losses it was to tell of
    e.submit(reporting);
    assertThat(e.stats().dropped()).isEqualTo(1);
    assertThat(e.stats().eventsLost()).isEqualTo(2 + 5);
  }

  @Test
  void theEventsADeltaDroppedOnOverflowReportedAsDroppedAreCountedAsLostToo() {
    long one = delta(0, 0.25).setSequence(1).build().getSerializedSize();
    Exporter e = exporter(config().withMaxBufferBytes(one + 8));
    server.shutdownNow(); // nothing is sent: the buffer overflows
    Delta.Builder big = delta(0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0);
    big.getOverheadBuilder().setEventsDropped(5);
    e.submit(big); // larger than the bound by itself
    scheduler.runDue();
    assertThat(e.stats().dropped()).isEqualTo(1);
    assertThat(e.stats().eventsLost()).isEqualTo(8 + 5);
  }

  @Test
  void theMisuseCountsOfDroppedDeltasAreHandedBackOnceToBeReportedAgain() {
    Exporter e = exporter(config());
    e.close();
    scheduler.runDue();
    Delta.Builder a = delta(0, 0.25);
    a.getOverheadBuilder().putMisuse("contexts_full", 3).putMisuse("too_deep", 1);
    Delta.Builder b = delta(0, 0.5);
    b.getOverheadBuilder().putMisuse("contexts_full", 2);
    e.submit(a); // closed: both are dropped
    e.submit(b);
    assertThat(e.stats().dropped()).isEqualTo(2);
    assertThat(e.takeLostMisuse())
        .containsExactlyInAnyOrderEntriesOf(java.util.Map.of("contexts_full", 5L, "too_deep", 1L));
    assertThat(e.takeLostMisuse()).isEmpty();
  }

  @Test
  void theExportCountsOfDroppedDeltasAreReportedAgainOnce() {
    Exporter e = exporter(config());
    e.close();
    scheduler.runDue();
    Delta.Builder a = delta(0, 0.25);
    a.getOverheadBuilder().setExportReconnects(2).setExportDeltasMerged(3);
    Delta.Builder b = delta(0, 0.5);
    b.getOverheadBuilder().setExportReconnects(1);
    e.submit(a); // closed: both are dropped
    e.submit(b);
    assertThat(e.stats().dropped()).isEqualTo(2);
    ExportReport report = e.takeReport();
    assertThat(report.reconnects()).isEqualTo(3);
    assertThat(report.deltasMerged()).isEqualTo(3);
    assertThat(e.takeReport().reconnects()).isZero();
  }

  @Test
  void submitNeverThrowsEvenWhenTheSchedulerRefuses() {
    Scheduler refusing =
        new Scheduler() {
          @Override
          public void execute(Runnable task) {
            throw new RejectedExecutionException("full");
          }

          @Override
          public Cancellable schedule(Runnable task, Duration delay) {
            throw new RejectedExecutionException("full");
          }

          @Override
          public void shutdown() {}
        };
    Exporter e = new Exporter(channel, encoder, config(), refusing, fixedRandom(0.5));
    e.submit(delta(0, 0.25));
    e.submit(delta(1, 0.25));
    assertThat(e.stats().submitted()).isEqualTo(2);
    assertThat(e.stats().internalErrors()).isEqualTo(2);
    assertThat(e.stats().lastError()).hasValueSatisfying(m -> assertThat(m).contains("full"));
    assertThat(e.flush(Duration.ZERO)).isFalse();
    e.close();
  }

  @Test
  void theDefaultSchedulerRunsOnADaemonThreadAndFlushWaitsForTheAcks() {
    try (Exporter e = new Exporter(channel, encoder, config())) {
      e.submit(delta(0, 0.25));
      e.submit(delta(1, 0.5));
      assertThat(e.flush(Duration.ofSeconds(30))).isTrue();
      assertThat(e.stats().acked()).isEqualTo(2);
    }
  }

  // ---------------------------------------------------------------- the fake collector

  /**
   * An Ingest service that records what it receives per stream and acks like the collector: APPLIED
   * above the last applied sequence, DUPLICATE otherwise, unless scripted.
   */
  static final class FakeIngest extends IngestGrpc.IngestImplBase {
    final List<FakeStream> streams = new CopyOnWriteArrayList<>();

    /** Applied, but no ack sent (as if the ack were lost). */
    final Set<Long> silent = ConcurrentHashMap.newKeySet();

    /** Rejected once with this code. */
    final Map<Long, Code> rejections = new ConcurrentHashMap<>();

    volatile Duration rejectionDelay;
    volatile boolean failOnFirstDelta;

    /** Whether a half-close is answered by ending the stream with OK, as the collector does. */
    volatile boolean answerHalfClose = true;

    long lastApplied;

    @Override
    public StreamObserver<Delta> push(StreamObserver<Ack> responses) {
      FakeStream s = new FakeStream((ServerCallStreamObserver<Ack>) responses);
      streams.add(s);
      s.out.setOnCancelHandler(() -> s.cancelled = true);
      return new StreamObserver<>() {
        @Override
        public void onNext(Delta d) {
          s.received.add(d);
          if (failOnFirstDelta) {
            s.fail(Status.UNAVAILABLE.withDescription("not now").asRuntimeException());
            return;
          }
          long seq = d.getSequence();
          Code code = rejections.remove(seq);
          if (code != null) {
            com.google.rpc.Status.Builder status =
                com.google.rpc.Status.newBuilder().setCode(code.getNumber()).setMessage("no");
            if (rejectionDelay != null) {
              status.addDetails(retryInfo(rejectionDelay));
            }
            s.out.onNext(
                Ack.newBuilder()
                    .setSequence(seq)
                    .setResult(AckResult.ACK_RESULT_REJECTED)
                    .setStatus(status)
                    .build());
            return;
          }
          AckResult result;
          synchronized (FakeIngest.this) {
            if (seq <= lastApplied) {
              result = AckResult.ACK_RESULT_DUPLICATE;
            } else {
              lastApplied = seq;
              result = AckResult.ACK_RESULT_APPLIED;
            }
          }
          if (!silent.remove(seq)) {
            s.ack(seq, result);
          }
        }

        @Override
        public void onError(Throwable t) {
          s.cancelled = true;
        }

        @Override
        public void onCompleted() {
          s.halfClosed = true;
          if (answerHalfClose) {
            s.out.onCompleted();
          }
        }
      };
    }
  }

  /** One Push stream as the fake server sees it. */
  static final class FakeStream {
    final List<Delta> received = new CopyOnWriteArrayList<>();
    final ServerCallStreamObserver<Ack> out;
    volatile boolean halfClosed;
    volatile boolean cancelled;

    FakeStream(ServerCallStreamObserver<Ack> out) {
      this.out = out;
    }

    void ack(long seq, AckResult result) {
      out.onNext(Ack.newBuilder().setSequence(seq).setResult(result).build());
    }

    void fail(StatusRuntimeException e) {
      out.onError(e);
    }
  }
}
