package dev.profold.collector.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.rpc.RetryInfo;
import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.fold.FoldConfig;
import dev.profold.collector.fold.FoldEngine;
import dev.profold.collector.fold.FoldWorker;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.testing.Deltas;
import dev.profold.collector.testing.MutableClock;
import dev.profold.proto.v1.Ack;
import dev.profold.proto.v1.AckResult;
import dev.profold.proto.v1.AttributeKind;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.ExponentialHistogram;
import dev.profold.proto.v1.ExportResponse;
import dev.profold.proto.v1.IngestGrpc;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.MetricState;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.ValueType;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The Ingest service over in-process gRPC with a real fold thread and an injected clock: acks,
 * duplicates, malformed deltas (a precise error, and the collector keeps serving), reconnects,
 * overload and shutdown.
 */
class IngestServiceTest {
  private static final long T0 = Deltas.DEFAULT_START + 10_000_000_000L; // after the delta's end

  private final MutableClock clock = MutableClock.atNanos(T0);
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final CollectorMetrics metrics = new CollectorMetrics(registry);
  private final GlobalDictionary dictionary = new GlobalDictionary(10_000);
  private FoldWorker worker;
  private IngestService service;
  private Server server;
  private ManagedChannel channel;

  private void start(long maxPendingBytes, boolean startFold) throws Exception {
    start(maxPendingBytes, startFold, FoldConfig.DEFAULT_MAX_SOURCES);
  }

  private void start(long maxPendingBytes, boolean startFold, int maxSources) throws Exception {
    FoldEngine engine =
        new FoldEngine(
            new FoldConfig(
                10_000_000_000L,
                5,
                1000,
                dev.profold.reduce.ExpHistogram.MAX_SCALE,
                List.of(
                    dev.profold.collector.scheme.SchemeDefinition.builtIn(
                        Duration.ofSeconds(10), 1000)),
                maxSources),
            dictionary,
            clock,
            metrics);
    worker =
        new FoldWorker(
            engine, metrics, maxPendingBytes, Duration.ofMillis(50), Duration.ofSeconds(5));
    if (startFold) {
      worker.start();
    }
    service = new IngestService(dictionary, worker, metrics, Duration.ofMillis(1500));
    metrics.dictionary(dictionary);
    String name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name).directExecutor().addService(service).build();
    server.start();
    channel = InProcessChannelBuilder.forName(name).directExecutor().build();
  }

  @AfterEach
  void stop() throws Exception {
    if (channel != null) {
      channel.shutdownNow();
    }
    if (server != null) {
      server.shutdownNow();
    }
    if (worker != null) {
      worker.shutdown(Duration.ofSeconds(5));
    }
  }

  /** A Push stream whose responses land in a queue. */
  private final class PushStream {
    final LinkedBlockingQueue<Object> events = new LinkedBlockingQueue<>();
    volatile int streamIdsAtCompletion = -1;
    private final AtomicReference<ClientCallStreamObserver<Delta>> call = new AtomicReference<>();
    final StreamObserver<Delta> requests;

    /** A stream that reads every ack. */
    PushStream() {
      this(true);
    }

    /** A stream that reads acks only if {@code readsAcks}, else only after {@link #readAcks}. */
    PushStream(boolean readsAcks) {
      requests =
          IngestGrpc.newStub(channel)
              .push(
                  new ClientResponseObserver<Delta, Ack>() {
                    @Override
                    public void beforeStart(ClientCallStreamObserver<Delta> stream) {
                      if (!readsAcks) {
                        stream.disableAutoRequestWithInitial(0);
                      }
                      call.set(stream);
                    }

                    @Override
                    public void onNext(Ack ack) {
                      events.add(ack);
                    }

                    @Override
                    public void onError(Throwable t) {
                      events.add(t);
                    }

                    @Override
                    public void onCompleted() {
                      // Direct executors: called on the thread that completes the call, before
                      // it goes on to anything else.
                      streamIdsAtCompletion = dictionary.streamIds();
                      events.add("completed");
                    }
                  });
    }

    /** From now on the client reads its acks. */
    void readAcks() {
      call.get().request(Integer.MAX_VALUE);
    }

    Ack send(Delta d) throws InterruptedException {
      requests.onNext(d);
      return ack();
    }

    Ack ack() throws InterruptedException {
      Object e = events.poll(10, TimeUnit.SECONDS);
      assertThat(e).as("an ack").isInstanceOf(Ack.class);
      return (Ack) e;
    }

    Object next() throws InterruptedException {
      return events.poll(10, TimeUnit.SECONDS);
    }
  }

  private static Deltas.Builder checkout() {
    return Deltas.source("checkout", "i-1")
        .seq(1)
        .region(1, "main", RegionKind.REGION_KIND_COMPUTE)
        .region(2, 1, "db.query", RegionKind.REGION_KIND_IO)
        .entry(2, 0.25, 0.5);
  }

  private SeriesSnapshot only(String path) {
    List<SeriesSnapshot> series = worker.snapshot().schemes().get(0).cumulative();
    return series.stream()
        .filter(s -> s.labelValues().get(2).equals(path))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no series for " + path + " in " + series));
  }

  @Test
  void pushAcksEachDeltaInOrderAndDuplicatesAreNotAppliedTwice() throws Exception {
    start(1 << 20, true);
    PushStream s = new PushStream();
    Deltas.Builder b = checkout();
    Ack first = s.send(b.build());
    assertThat(first.getSequence()).isEqualTo(1);
    assertThat(first.getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);
    Ack again = s.send(b.build());
    assertThat(again.getResult()).isEqualTo(AckResult.ACK_RESULT_DUPLICATE);
    Ack second = s.send(b.seq(2).build());
    assertThat(second.getSequence()).isEqualTo(2);
    assertThat(second.getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);

    SeriesSnapshot series = only("main/db.query");
    assertThat(series.state().count()).isEqualTo(4);
    assertThat(series.state().sum()).isEqualTo(1.5);
    assertThat(registry.get("profold.deltas.duplicate").counter().count()).isEqualTo(1);
    s.requests.onCompleted();
    assertThat(s.next()).isEqualTo("completed");
  }

  @Test
  void malformedDeltaIsRejectedPreciselyAndTheStreamGoesOn() throws Exception {
    start(1 << 20, true);
    PushStream s = new PushStream();
    Ack ok = s.send(checkout().build());
    assertThat(ok.getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);

    Delta bad = checkout().withoutSource().seq(2).clearEntries().entry(badEntry()).build();
    Ack rejected = s.send(bad);
    assertThat(rejected.getSequence()).isEqualTo(2);
    assertThat(rejected.getResult()).isEqualTo(AckResult.ACK_RESULT_REJECTED);
    assertThat(rejected.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT.value());
    assertThat(rejected.getStatus().getMessage())
        .startsWith("entries[0].key[0].path_node_id: path node 99 is not defined");

    Ack after = s.send(checkout().withoutSource().seq(2).build());
    assertThat(after.getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);
    assertThat(only("main/db.query").state().count()).isEqualTo(4);
    assertThat(registry.get("profold.deltas.rejected").tag("reason", "invalid").counter().count())
        .isEqualTo(1);
  }

  private static MetricState histogramState(int scale, int offset, long... counts) {
    ExponentialHistogram.Buckets.Builder b =
        ExponentialHistogram.Buckets.newBuilder().setOffset(offset);
    long n = 0;
    for (long c : counts) {
      b.addCounts(c);
      n += c;
    }
    return MetricState.newBuilder()
        .setCount(n)
        .setSum(n)
        .setMin(1)
        .setMax(1)
        .setSumOfSquares(n)
        .setHistogram(ExponentialHistogram.newBuilder().setScale(scale).setPositive(b))
        .build();
  }

  private static Entry histogramEntry(int node, MetricState state) {
    return Entry.newBuilder()
        .addKey(Deltas.regionKey(node))
        .addMeasurements(Measurement.newBuilder().setAttributeId(Deltas.TIME).setState(state))
        .build();
  }

  /**
   * The reviewer's input: a bucket at scale -10 that no double has (index -2^26, below -2), in a
   * group whose histogram is at scale 3. It used to pass the decoder and crash the fold after the
   * delta's first entry was folded: acked REJECTED/INTERNAL ("not applied"), yet counted, and
   * counted again when resent. Now the decoder refuses the whole delta and names the field.
   */
  @Test
  void histogramBucketNoDoubleHasIsRejectedWholeAndItsResendCountsNothing() throws Exception {
    start(1 << 20, true);
    PushStream s = new PushStream();
    long[] ones = new long[151];
    java.util.Arrays.fill(ones, 1);
    Deltas.Builder b =
        Deltas.source("evil", "e-1")
            .seq(1)
            .region(1, "main", RegionKind.REGION_KIND_COMPUTE)
            .region(2, "ok", RegionKind.REGION_KIND_COMPUTE)
            .entry(histogramEntry(1, histogramState(3, 0, ones))); // scale 3, buckets 0..150
    assertThat(s.send(b.build()).getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);

    Delta second =
        b.seq(2)
            .clearEntries()
            .entry(histogramEntry(2, histogramState(3, 0, 1)))
            .entry(histogramEntry(1, histogramState(-10, -(1 << 26), 1)))
            .build();
    Ack rejected = s.send(second);
    assertThat(rejected.getResult()).isEqualTo(AckResult.ACK_RESULT_REJECTED);
    assertThat(rejected.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT.value());
    assertThat(rejected.getStatus().getMessage())
        .startsWith(
            "entries[1].measurements[0].state.histogram.positive.counts[0]: bucket -67108864"
                + " (offset -67108864 + 0) is outside -2..0");
    Ack resent = s.send(second);
    assertThat(resent.getResult()).isEqualTo(AckResult.ACK_RESULT_REJECTED);

    assertThat(registry.get("profold.deltas.rejected").tag("reason", "invalid").counter().count())
        .isEqualTo(2);
    assertThat(
            registry
                .get("profold.deltas.rejected")
                .tag("reason", "internal_error")
                .counter()
                .count())
        .isZero();
    List<SeriesSnapshot> series = worker.snapshot().schemes().get(0).cumulative();
    assertThat(series).noneMatch(x -> x.labelValues().get(2).equals("ok"));
    assertThat(only("main").state().count()).isEqualTo(151);
    assertThat(only("main").state().scale()).isEqualTo(3);
  }

  private static dev.profold.proto.v1.Entry badEntry() {
    return dev.profold.proto.v1.Entry.newBuilder()
        .addKey(Deltas.regionKey(99))
        .addMeasurements(Deltas.time(1.0))
        .build();
  }

  @Test
  void streamWithoutSourceEndsWithInvalidArgument() throws Exception {
    start(1 << 20, true);
    PushStream s = new PushStream();
    s.requests.onNext(checkout().withoutSource().build());
    Object end = s.next();
    assertThat(end).isInstanceOf(StatusRuntimeException.class);
    Status status = ((StatusRuntimeException) end).getStatus();
    assertThat(status.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(status.getDescription()).startsWith("source: required on the first delta");
  }

  @Test
  void aNewStreamMustResendTheDictionaryAndOldSequencesAreDuplicates() throws Exception {
    start(1 << 20, true);
    PushStream first = new PushStream();
    assertThat(first.send(checkout().build()).getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);
    first.requests.onCompleted();
    assertThat(first.next()).isEqualTo("completed");

    PushStream second = new PushStream();
    Ack noDictionary = second.send(checkout().withoutDictionary().seq(2).build());
    assertThat(noDictionary.getResult()).isEqualTo(AckResult.ACK_RESULT_REJECTED);
    assertThat(noDictionary.getStatus().getMessage())
        .contains("not defined in this stream's dictionary");
    Ack resent = second.send(checkout().seq(1).build());
    assertThat(resent.getResult()).isEqualTo(AckResult.ACK_RESULT_DUPLICATE);
    Ack withDictionary = second.send(checkout().withoutSource().seq(2).build());
    assertThat(withDictionary.getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);
    assertThat(only("main/db.query").state().count()).isEqualTo(4);
  }

  /** Waits until the fold thread has run everything queued so far. */
  private void afterFold() throws Exception {
    worker.call(() -> null, Duration.ofSeconds(10));
  }

  private double meter(String name) {
    return registry.get(name).meter().measure().iterator().next().getValue();
  }

  @Test
  void aStreamsDefinitionsAreFreedOnceItEndedUnlessAnotherStreamMapsThem() throws Exception {
    start(1 << 20, true);
    PushStream first = new PushStream();
    assertThat(first.send(checkout().build()).getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);
    PushStream second = new PushStream();
    Delta sameRegions = checkout().build().toBuilder().setSource(source("i-2")).build();
    assertThat(second.send(sameRegions).getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);
    assertThat(dictionary.size()).as("2 attributes, 2 names, 2 path nodes").isEqualTo(6);

    assertThat(dictionary.streamIds()).isEqualTo(12);
    first.requests.onCompleted();
    assertThat(first.next()).isEqualTo("completed");
    assertThat(first.streamIdsAtCompletion)
        .as("given back before the client is told its stream is completed")
        .isEqualTo(6);
    afterFold();
    assertThat(dictionary.size()).as("the second stream still maps them").isEqualTo(6);

    second.requests.onError(new IllegalStateException("client gone")); // a cancel
    afterFold();
    assertThat(dictionary.size()).as("attributes go too").isZero();
    assertThat(dictionary.freed()).isEqualTo(6);
    assertThat(meter("profold.dictionary.entries")).isZero();
    assertThat(meter("profold.dictionary.freed")).isEqualTo(6);
    assertThat(meter("profold.dictionary.entries.limit")).isEqualTo(10_000);
    assertThat(only("main/db.query").state().count()).as("the data stays").isEqualTo(2);
  }

  @Test
  void theAttributeShareTakenByAStreamComesFreeWhenItEnds() throws Exception {
    start(1 << 20, true);
    int share = GlobalDictionary.maxAttributes(dictionary.maxEntries());
    // A client naming a measurement per user: every attribute the collector may hold (with the
    // two base attributes), on one stream.
    Deltas.Builder perUser = checkout();
    for (int i = 0; i < share - 2; i++) {
      perUser.attribute(
          100 + i,
          "latency_user" + i,
          ValueType.VALUE_TYPE_DOUBLE,
          AttributeKind.ATTRIBUTE_KIND_MEASUREMENT,
          "seconds");
    }
    PushStream first = new PushStream();
    assertThat(first.send(perUser.build()).getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);

    IngestGrpc.IngestBlockingStub stub = IngestGrpc.newBlockingStub(channel);
    Delta another =
        Deltas.source("payments", "p-1")
            .attribute(
                3,
                "queue_wait",
                ValueType.VALUE_TYPE_DOUBLE,
                AttributeKind.ATTRIBUTE_KIND_MEASUREMENT,
                "seconds")
            .region(1, "main", RegionKind.REGION_KIND_COMPUTE)
            .entry(1, 1.0)
            .build();
    assertThatThrownBy(() -> stub.export(another))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
              assertThat(e.getStatus().getDescription()).contains("holds " + share + " attributes");
            });

    first.requests.onCompleted();
    assertThat(first.next()).isEqualTo("completed");
    afterFold();
    assertThat(stub.export(another).getResult())
        .as("the resend, once the per-user stream has ended")
        .isEqualTo(AckResult.ACK_RESULT_APPLIED);
  }

  private static dev.profold.proto.v1.SourceIdentity source(String instance) {
    return checkout().build().getSource().toBuilder().setInstance(instance).build();
  }

  @Test
  void anExportCallsDefinitionsAreFreedAfterItsDeltaIsFolded() throws Exception {
    start(1 << 20, true);
    IngestGrpc.IngestBlockingStub stub = IngestGrpc.newBlockingStub(channel);
    assertThat(stub.export(checkout().build()).getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);
    afterFold();
    assertThat(dictionary.size()).isZero();
    assertThat(only("main/db.query").state().count()).isEqualTo(2);

    // Refused after its definitions were read: they are given back too.
    Delta invalid =
        checkout().seq(2).region(3, "other", RegionKind.REGION_KIND_IO).entry(badEntry()).build();
    assertThatThrownBy(() -> stub.export(invalid)).isInstanceOf(StatusRuntimeException.class);
    afterFold();
    assertThat(dictionary.size()).isZero();
    assertThat(dictionary.freed())
        .as("2 attributes each time; main, db.query and other: names and nodes")
        .isEqualTo(6 + 8);
  }

  @Test
  void exportAppliesAndReportsErrorsAsStatus() throws Exception {
    start(1 << 20, true);
    IngestGrpc.IngestBlockingStub stub = IngestGrpc.newBlockingStub(channel);
    ExportResponse r = stub.export(checkout().build());
    assertThat(r.getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);
    assertThat(stub.export(checkout().build()).getResult())
        .isEqualTo(AckResult.ACK_RESULT_DUPLICATE);

    Delta zeroSeq = checkout().seq(0).build();
    assertThatThrownBy(() -> stub.export(zeroSeq))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
              assertThat(e.getStatus().getDescription()).startsWith("sequence: must be > 0");
            });

    Delta older = checkout().incarnation(2).processStart(Deltas.DEFAULT_PROCESS_START - 1).build();
    assertThatThrownBy(() -> stub.export(older))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.FAILED_PRECONDITION);
              assertThat(e.getStatus().getDescription()).contains("started before the current one");
            });
    assertThat(only("main/db.query").state().count()).isEqualTo(2);
  }

  @Test
  void overloadIsRetryableWithRetryInfo() throws Exception {
    start(1, false); // the fold is not running: the first delta stays pending
    IngestGrpc.IngestFutureStub async = IngestGrpc.newFutureStub(channel);
    var pending = async.export(checkout().build());
    assertThat(pending.isDone()).isFalse();
    IngestGrpc.IngestBlockingStub stub = IngestGrpc.newBlockingStub(channel);
    Delta next =
        Deltas.source("search", "s-1")
            .seq(1)
            .region(1, "q", RegionKind.REGION_KIND_COMPUTE)
            .entry(1, 1.0)
            .build();
    assertThatThrownBy(() -> stub.export(next))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
              assertThat(e.getStatus().getDescription()).contains("limits.max_pending_bytes");
              assertThat(retryDelay(e)).isEqualTo(Duration.ofMillis(1500));
            });
    assertThat(
            registry.get("profold.deltas.rejected").tag("reason", "overloaded").counter().count())
        .isEqualTo(1);
    worker.start(); // the fold catches up and the pending call completes
    assertThat(pending.get(10, TimeUnit.SECONDS).getResult())
        .isEqualTo(AckResult.ACK_RESULT_APPLIED);
  }

  @Test
  void anExportRefusedForNowHoldsItsSourcesLaterDeltasBackUntilItComesAgain() throws Exception {
    start(1, false); // the fold is not running: the first delta stays pending
    var pending = IngestGrpc.newFutureStub(channel).export(checkout().build());
    IngestGrpc.IngestBlockingStub stub = IngestGrpc.newBlockingStub(channel);
    java.util.function.LongFunction<Delta> search =
        seq ->
            Deltas.source("search", "s-1")
                .seq(seq)
                .region(1, "q", RegionKind.REGION_KIND_COMPUTE)
                .entry(1, 1.0)
                .build();
    assertThatThrownBy(() -> stub.export(search.apply(1)))
        .isInstanceOf(StatusRuntimeException.class); // overloaded
    worker.start();
    assertThat(pending.get(10, TimeUnit.SECONDS).getResult())
        .isEqualTo(AckResult.ACK_RESULT_APPLIED);

    // Before: 2 was applied, and 1 sent again was answered DUPLICATE: its data lost.
    assertThatThrownBy(() -> stub.export(search.apply(2)))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
              assertThat(e.getStatus().getDescription())
                  .startsWith(
                      "sequence 1 of this source was refused for now and must be applied before 2;"
                          + " export 1 again first (")
                  .contains("limits.max_pending_bytes");
              assertThat(retryDelay(e)).isEqualTo(Duration.ofMillis(1500));
            });
    assertThat(
            registry.get("profold.deltas.rejected").tag("reason", "overloaded").counter().count())
        .isEqualTo(2);
    assertThat(stub.export(search.apply(1)).getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);
    assertThat(stub.export(search.apply(2)).getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);
    // Another source was never held back.
    assertThat(stub.export(checkout().seq(2).build()).getResult())
        .isEqualTo(AckResult.ACK_RESULT_APPLIED);
  }

  @Test
  void rejectionAcksCountTowardThePendingLimitAndBeyondItTheStreamEnds() throws Exception {
    Delta first = checkout().build();
    long limit = first.getSerializedSize() + 1000L;
    start(limit, false); // the fold is not running: everything queued stays pending
    PushStream s = new PushStream();
    s.requests.onNext(first);
    Delta.Builder bad =
        checkout().withoutSource().clearEntries().entry(badEntry()).build().toBuilder();
    int sent = IngestService.MAX_UNACKED_DELTAS - 1; // all the stream reads ahead of its acks
    for (int seq = 2; seq <= sent + 1; seq++) {
      s.requests.onNext(bad.setSequence(seq).build());
    }
    long pendingBytes = metrics.pendingBytes().get();
    assertThat(pendingBytes).isGreaterThan(first.getSerializedSize()).isLessThanOrEqualTo(limit);
    assertThat(s.events).isEmpty();

    worker.start();
    assertThat(s.ack().getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);
    int rejected = 0;
    Object e;
    while ((e = s.next()) instanceof Ack a) {
      rejected++;
      assertThat(a.getSequence()).isEqualTo(1 + rejected);
      assertThat(a.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT.value());
    }
    assertThat(rejected).isPositive().isLessThan(sent);
    assertThat(e).isInstanceOf(StatusRuntimeException.class);
    StatusRuntimeException end = (StatusRuntimeException) e;
    assertThat(end.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(end.getStatus().getDescription()).contains("limits.max_pending_bytes");
    assertThat(retryDelay(end)).isEqualTo(Duration.ofMillis(1500));
    assertThat(registry.get("profold.ingest.push.overloaded").counter().count()).isEqualTo(1);
    assertThat(only("main/db.query").state().count()).isEqualTo(2);
    worker.snapshot(); // a barrier: every queued task has run
    assertThat(metrics.pendingBytes().get()).isZero();
  }

  @Test
  void aNewSourceBeyondMaxSourcesIsRefusedAsRetryableAndTheStreamGoesOn() throws Exception {
    start(1 << 20, true, 1);
    PushStream first = new PushStream();
    assertThat(first.send(checkout().build()).getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);
    PushStream second = new PushStream();
    Deltas.Builder other =
        Deltas.source("checkout", "i-2")
            .seq(1)
            .region(1, "main", RegionKind.REGION_KIND_COMPUTE)
            .entry(1, 1.0);

    Ack refused = second.send(other.build());

    assertThat(refused.getResult()).isEqualTo(AckResult.ACK_RESULT_REJECTED);
    assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED.value());
    assertThat(refused.getStatus().getMessage())
        .startsWith("source: the collector tracks as many sources as limits.max_sources (1)");
    RetryInfo retry = refused.getStatus().getDetails(0).unpack(RetryInfo.class);
    assertThat(retry.getRetryDelay().getSeconds()).isEqualTo(60);
    assertThat(
            registry
                .get("profold.deltas.rejected")
                .tag("reason", "too_many_sources")
                .counter()
                .count())
        .isEqualTo(1);
    // The known source goes on.
    assertThat(first.send(checkout().withoutSource().seq(2).build()).getResult())
        .isEqualTo(AckResult.ACK_RESULT_APPLIED);
  }

  @Test
  void deltasAfterOneRefusedForNowAreRefusedTooUntilItIsResent() throws Exception {
    // A client pipelining 2 and 3: 2 was refused (overloaded), 3 applied, and 2's resend then
    // came back DUPLICATE: done, as far as the client knew, and its data never applied.
    Delta first = checkout().build();
    Deltas.Builder big = checkout().withoutSource().seq(2);
    for (int i = 0; i < 200; i++) {
      big.entry(2, i);
    }
    start(first.getSerializedSize() + 1000, false);
    PushStream s = new PushStream();
    s.requests.onNext(first);
    s.requests.onNext(big.build()); // over the limit; its rejection ack fits
    s.requests.onNext(checkout().withoutSource().clearEntries().entry(1, 1.0).seq(3).build());
    worker.start();
    assertThat(s.ack().getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);
    Ack refused = s.ack();
    assertThat(refused.getResult()).isEqualTo(AckResult.ACK_RESULT_REJECTED);
    assertThat(refused.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED.value());
    Ack behind = s.ack();
    assertThat(behind.getSequence()).isEqualTo(3);
    assertThat(behind.getResult()).isEqualTo(AckResult.ACK_RESULT_REJECTED);
    assertThat(behind.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED.value());
    assertThat(behind.getStatus().getMessage())
        .startsWith(
            "sequence 2 was refused for now on this stream and must be applied before 3;"
                + " resend from 2 (the collector has too many received deltas");
    assertThat(behind.getStatus().getDetails(0).unpack(RetryInfo.class).getRetryDelay().getNanos())
        .isEqualTo(500_000_000);
    assertThat(
            registry.get("profold.deltas.rejected").tag("reason", "overloaded").counter().count())
        .isEqualTo(2);

    // Resent in order, as the client does after the delay: both applied.
    assertThat(s.send(big.build()).getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);
    assertThat(
            s.send(checkout().withoutSource().clearEntries().entry(1, 1.0).seq(3).build())
                .getResult())
        .isEqualTo(AckResult.ACK_RESULT_APPLIED);
    assertThat(only("main/db.query").state().count()).isEqualTo(2 + 2 + 200);
  }

  /**
   * Makes the fold thread, once started, fail before anything queued after this; its failure ends
   * the open streams as the server's does.
   */
  private void failFirst() {
    worker.onFailure(service::closeStreams);
    worker.execute(
        () -> {
          throw new OutOfMemoryError("planted by the test");
        });
  }

  private static void assertEndsUnavailable(PushStream s) throws InterruptedException {
    Object e = s.next();
    assertThat(e).isInstanceOf(StatusRuntimeException.class);
    assertThat(((StatusRuntimeException) e).getStatus().getCode())
        .isEqualTo(Status.Code.UNAVAILABLE);
  }

  @Test
  void aHalfClosedStreamIsStillAnsweredWhenTheFoldThreadFailsFirst() throws Exception {
    // It left the open streams at its half-close, before its acks and end ran on the fold thread:
    // a failure there left it without an answer for ever. (In process, with a direct executor,
    // the half-close reaches the service before the fold thread starts: no race.)
    start(1 << 20, false);
    failFirst();
    PushStream s = new PushStream();
    s.requests.onNext(checkout().build());
    s.requests.onCompleted();
    worker.start();
    assertEndsUnavailable(s);
  }

  @Test
  void aStreamEndedForOverloadIsStillAnsweredWhenTheFoldThreadFailsFirst() throws Exception {
    // Its end waited on the fold thread, out of the open streams: a failure there (an overloaded
    // fold is when it is likeliest to run out of memory) left it without an answer for ever.
    Delta first = checkout().build();
    start(first.getSerializedSize(), false);
    failFirst();
    PushStream s = new PushStream();
    s.requests.onNext(first);
    s.requests.onNext(checkout().withoutSource().seq(2).build()); // over the limit: the end
    worker.start();
    assertEndsUnavailable(s);
  }

  @Test
  void aRefusalBeyondThePendingLimitEndsTheStreamAfterItsEarlierAcks() throws Exception {
    Delta first = checkout().build();
    start(first.getSerializedSize(), false);
    PushStream s = new PushStream();
    s.requests.onNext(first);
    s.requests.onNext(checkout().withoutSource().seq(2).build()); // refused: over the limit
    s.requests.onNext(checkout().withoutSource().seq(3).build()); // not read any more
    assertThat(metrics.pendingBytes().get()).isEqualTo(first.getSerializedSize());

    worker.start();
    assertThat(s.ack().getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);
    Object e = s.next();
    assertThat(e).isInstanceOf(StatusRuntimeException.class);
    assertThat(((StatusRuntimeException) e).getStatus().getCode())
        .isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(
            registry.get("profold.deltas.rejected").tag("reason", "overloaded").counter().count())
        .isEqualTo(1);
    assertThat(registry.get("profold.ingest.push.overloaded").counter().count()).isEqualTo(1);
    assertThat(only("main/db.query").state().count()).isEqualTo(2);
  }

  @Test
  void aClientThatDoesNotReadItsAcksIsNoLongerReadUntilItDoes() throws Exception {
    start(1 << 24, true);
    int window = IngestService.MAX_UNACKED_DELTAS;
    int total = window + 10;
    PushStream stream = new PushStream(false); // never reads an ack by itself
    LinkedBlockingQueue<Object> events = stream.events;
    StreamObserver<Delta> requests = stream.requests;
    Deltas.Builder b = checkout();
    for (int seq = 1; seq <= total; seq++) {
      requests.onNext(b.seq(seq).build());
      b = b.withoutSource();
    }
    worker.snapshot(); // a barrier: the fold has answered everything it was given

    assertThat(registry.get("profold.deltas.received").counter().count()).isEqualTo(window);
    assertThat(registry.get("profold.deltas.applied").counter().count()).isEqualTo(window);
    assertThat(registry.get("profold.ingest.push.paused").counter().count()).isEqualTo(1);
    assertThat(events).isEmpty();

    stream.readAcks(); // the client reads its acks: the stream goes on
    for (int seq = 1; seq <= total; seq++) {
      Object e = events.poll(10, TimeUnit.SECONDS);
      assertThat(e).as("ack %d", seq).isInstanceOf(Ack.class);
      assertThat(((Ack) e).getSequence()).isEqualTo(seq);
      assertThat(((Ack) e).getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);
    }
    assertThat(registry.get("profold.deltas.applied").counter().count()).isEqualTo(total);
    assertThat(only("main/db.query").state().count()).isEqualTo(2L * total);
    requests.onCompleted();
    assertThat(events.poll(10, TimeUnit.SECONDS)).isEqualTo("completed");
  }

  private static Duration retryDelay(StatusRuntimeException e) {
    com.google.rpc.Status s = StatusProto.fromThrowable(e);
    assertThat(s).isNotNull();
    RetryInfo info;
    try {
      info = s.getDetails(0).unpack(RetryInfo.class);
    } catch (com.google.protobuf.InvalidProtocolBufferException x) {
      throw new AssertionError("status detail is not a RetryInfo", x);
    }
    return Duration.ofSeconds(info.getRetryDelay().getSeconds(), info.getRetryDelay().getNanos());
  }

  @Test
  void shutdownAppliesWhatWasReceivedAndEndsStreamsWithUnavailable() throws Exception {
    start(1 << 20, true);
    PushStream s = new PushStream();
    assertThat(s.send(checkout().build()).getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);
    worker.shutdown(Duration.ofSeconds(5));
    service.closeStreams();
    Object end = s.next();
    assertThat(end).isInstanceOf(StatusRuntimeException.class);
    StatusRuntimeException e = (StatusRuntimeException) end;
    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
    assertThat(retryDelay(e)).isEqualTo(Duration.ofMillis(1500));

    Delta late = checkout().seq(2).build();
    IngestGrpc.IngestBlockingStub stub = IngestGrpc.newBlockingStub(channel);
    assertThatThrownBy(() -> stub.export(late))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            x -> assertThat(x.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE));
    // What was applied before the shutdown is in the final snapshot.
    assertThat(only("main/db.query").state().count()).isEqualTo(2);
  }
}
