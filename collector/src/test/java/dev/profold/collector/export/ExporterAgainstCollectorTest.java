package dev.profold.collector.export;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.export.ExportReport;
import dev.profold.client.internal.export.Exporter;
import dev.profold.client.internal.export.ExporterConfig;
import dev.profold.client.internal.export.ExporterStats;
import dev.profold.client.internal.export.ManualScheduler;
import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.fold.FoldConfig;
import dev.profold.collector.fold.FoldEngine;
import dev.profold.collector.fold.FoldWorker;
import dev.profold.collector.ingest.IngestService;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.testing.MutableClock;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.ClientOverhead;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ThreadAggregation;
import dev.profold.proto.v1.ValueType;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.WireStates;
import dev.profold.sinks.snapshot.ClientExport;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import dev.profold.sinks.snapshot.SourceSnapshot;
import dev.profold.sinks.snapshot.StateSnapshot;
import io.grpc.ForwardingServerCall;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.ServerInterceptors;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The client's {@link Exporter} against the real {@link IngestService} and fold thread over
 * in-process gRPC: exact totals, an outage (the server goes away; a new server with the same
 * collector state comes back on the same name) with nothing lost and nothing counted twice, and a
 * buffer overflow during the outage whose merged deltas still add up to everything submitted.
 *
 * <p>The exporter runs on a {@link ManualScheduler}: backoff time is fake and jumped over; the test
 * only waits (bounded, never sleeping) for acks coming back from the fold thread.
 */
class ExporterAgainstCollectorTest {
  private static final long START = 1_700_000_000_000_000_000L;
  private static final long TEN_S = 10_000_000_000L;
  private static final Duration WAIT = Duration.ofSeconds(30);
  private static final Duration RETRY = Duration.ofMillis(1500);

  private final MutableClock clock = MutableClock.atNanos(START + 60 * TEN_S);
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final CollectorMetrics metrics = new CollectorMetrics(registry);
  private final GlobalDictionary dictionary = new GlobalDictionary(10_000);
  private final AckGate gate = new AckGate();
  private final ManualScheduler scheduler = new ManualScheduler();
  private final DeltaEncoder encoder =
      new DeltaEncoder(
          SourceIdentity.newBuilder()
              .setService("checkout")
              .setInstance("pod-1")
              .setIncarnationId(0x8c3e51f07a2b9d14L)
              .setProcessStartUnixNanos(START)
              .setSdkVersion("profold-java/test")
              .build());
  private final int region = encoder.dimension("region", ValueType.VALUE_TYPE_PATH);
  private final int time = encoder.measurement("time", ValueType.VALUE_TYPE_DOUBLE, "seconds");
  private final int main = encoder.pathNode(0, region, "main", RegionKind.REGION_KIND_COMPUTE);
  private final int query = encoder.pathNode(main, region, "db.query", RegionKind.REGION_KIND_IO);

  /** What was submitted, per path: the reference the collector's cumulative state must equal. */
  private final TreeMap<String, Aggregate> expected = new TreeMap<>();

  /** Every IngestService started, the current one last. */
  private final List<IngestService> services = new ArrayList<>();

  private long expectedCpu;
  private int submitted;
  private FoldWorker worker;
  private String name;
  private Server server;
  private ManagedChannel channel;
  private Exporter exporter;

  @BeforeEach
  void start() throws Exception {
    FoldEngine engine = new FoldEngine(new FoldConfig(TEN_S, 5, 1000), dictionary, clock, metrics);
    worker = new FoldWorker(engine, metrics, 1 << 24, Duration.ofMillis(50), WAIT);
    worker.start();
    name = InProcessServerBuilder.generateName();
    startServer();
    channel = InProcessChannelBuilder.forName(name).directExecutor().build();
  }

  /** A server on {@link #name} over a new IngestService sharing the worker and dictionary. */
  private void startServer() throws Exception {
    IngestService service = new IngestService(dictionary, worker, metrics, RETRY);
    server =
        InProcessServerBuilder.forName(name)
            .directExecutor()
            .addService(ServerInterceptors.intercept(service, gate))
            .build()
            .start();
    services.add(service);
  }

  /** The collector goes away: open streams end with UNAVAILABLE (and RetryInfo), as at shutdown. */
  private void outage() throws Exception {
    services.get(services.size() - 1).closeStreams();
    server.shutdownNow();
    server.awaitTermination();
  }

  /** A new collector process front end on the same name, with the same collector state. */
  private void recover() throws Exception {
    gate.drop = false;
    startServer(); // the exporter resets gRPC's own reconnect backoff before each attempt
  }

  @AfterEach
  void stop() throws Exception {
    if (exporter != null) {
      exporter.close();
      scheduler.runDue();
    }
    channel.shutdownNow();
    server.shutdownNow();
    worker.shutdown(Duration.ofSeconds(5));
  }

  private static ExporterConfig config() {
    return ExporterConfig.defaults()
        .withBackoff(Duration.ofMillis(500), Duration.ofSeconds(2))
        .withAckTimeout(Duration.ofHours(1)); // never reached: the test jumps over backoffs only
  }

  private Exporter manualExporter(ExporterConfig config) {
    exporter = new Exporter(channel, encoder, config, scheduler, new SplittableRandom(7));
    return exporter;
  }

  /** Interval {@code i}'s delta: region main with {@code mainValues}, main/db.query with 0.25. */
  private Delta.Builder delta(int i, double... mainValues) {
    Delta.Builder b =
        Delta.newBuilder()
            .setIntervalStartUnixNanos(START + (i + 1) * TEN_S)
            .setIntervalEndUnixNanos(START + (i + 2) * TEN_S)
            .setThreadAggregation(ThreadAggregation.THREAD_AGGREGATION_SUM)
            .setOverhead(ClientOverhead.newBuilder().setCpuNanos(1000L + i));
    b.addEntries(entry(main, "main", mainValues));
    b.addEntries(entry(query, "main/db.query", 0.25, 0.5 * (1 + i % 3)));
    expectedCpu += 1000L + i;
    submitted++;
    return b;
  }

  private Entry entry(int node, String path, double... values) {
    Aggregate a = new Aggregate();
    for (double v : values) {
      a.record(v);
    }
    expected.computeIfAbsent(path, p -> new Aggregate()).merge(a);
    return Entry.newBuilder()
        .addKey(AttributeValue.newBuilder().setAttributeId(region).setPathNodeId(node))
        .addMeasurements(
            Measurement.newBuilder().setAttributeId(time).setState(WireStates.toProto(a)))
        .build();
  }

  private SeriesSnapshot series(String path) {
    List<SeriesSnapshot> series = worker.snapshot().schemes().get(0).cumulative();
    return series.stream()
        .filter(s -> s.labelValues().get(2).equals(path))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no series for " + path + " in " + series));
  }

  private SourceSnapshot source() {
    return worker.snapshot().sources().stream()
        .filter(s -> s.service().equals("checkout"))
        .findFirst()
        .orElseThrow();
  }

  /** The collector's cumulative state equals everything submitted, exactly. */
  private void assertTotalsEqualEverythingSubmitted() {
    assertThat(expected).containsOnlyKeys("main", "main/db.query");
    expected.forEach(
        (path, want) -> {
          StateSnapshot got = series(path).state();
          assertThat(got.count()).as(path + " count").isEqualTo(want.count());
          assertThat(got.sum()).as(path + " sum").isEqualTo(want.sum());
          assertThat(got.min()).as(path + " min").isEqualTo(want.min());
          assertThat(got.max()).as(path + " max").isEqualTo(want.max());
          assertThat(got.sumOfSquares())
              .as(path + " sum of squares")
              .isEqualTo(want.sumOfSquares());
          assertThat(got.histogramTotal()).as(path + " histogram").isEqualTo(want.count());
        });
    SourceSnapshot source = source();
    assertThat(source.lastSequence()).isEqualTo(submitted);
    assertThat(source.missingDeltas()).isZero();
    assertThat(source.clientCpuNanos()).isEqualTo(expectedCpu); // no delta applied twice
  }

  private double counter(String meter) {
    return registry.get(meter).counter().count();
  }

  private void awaitAcked(Exporter e, long acked) throws InterruptedException {
    scheduler.runUntil(
        () -> e.stats().acked() >= acked && e.stats().bufferedDeltas() == 0,
        WAIT,
        Duration.ofSeconds(5));
  }

  /**
   * A process whose call paths keep changing: its exporter ends its stream now and then, and the
   * collector frees what the ended streams defined, so its dictionary holds about what one stream
   * defines, not the 200 names and nodes the process ever sent; every value arrives exactly.
   */
  @Test
  void rotatingStreamsLetTheCollectorFreeWhatTheProcessNoLongerUses() throws Exception {
    Exporter e = manualExporter(config().withRotation(1024, Duration.ZERO));
    int peak = 0;
    for (int i = 0; i < 200; i++) {
      String name = "operation-with-a-long-name-number-" + i;
      int node = encoder.pathNode(main, region, name, RegionKind.REGION_KIND_IO);
      Delta.Builder b =
          Delta.newBuilder()
              .setIntervalStartUnixNanos(START + (i + 1) * TEN_S)
              .setIntervalEndUnixNanos(START + (i + 2) * TEN_S)
              .setThreadAggregation(ThreadAggregation.THREAD_AGGREGATION_SUM)
              .addEntries(entry(node, "main/" + name, 0.5));
      submitted++;
      e.submit(b);
      awaitAcked(e, i + 1);
      worker.call(() -> null, WAIT); // the ended streams' references are given back by now
      peak = Math.max(peak, dictionary.size());
    }
    assertThat(e.stats().rotations()).isGreaterThanOrEqualTo(10);
    assertThat(peak).as("entries the collector held at most").isLessThan(100);
    assertThat(dictionary.freed()).isGreaterThan(300);
    expected.forEach(
        (path, want) -> assertThat(series(path).state().count()).as(path).isEqualTo(1));
    assertThat(source().lastSequence()).isEqualTo(200);
    assertThat(source().missingDeltas()).isZero();
  }

  @Test
  void deltasAreAppliedWithExactTotalsOnTheExportersOwnThread() {
    try (Exporter e = new Exporter(channel, encoder, config())) {
      e.submit(delta(0, 0.25, 0.5, 1.0));
      e.submit(delta(1, 2.0));
      e.submit(delta(2, 0.125, 0.75, 3.5));
      assertThat(e.flush(WAIT)).isTrue();

      ExporterStats stats = e.stats();
      assertThat(stats.acked()).isEqualTo(3);
      assertThat(stats.duplicates()).isZero();
      assertThat(stats.rejected()).isEmpty();
      assertTotalsEqualEverythingSubmitted();
      assertThat(series("main").state().count()).isEqualTo(7);
      assertThat(series("main/db.query").state().count()).isEqualTo(6);
      assertThat(counter("profold.deltas.applied")).isEqualTo(3);
    }
  }

  @Test
  void anOutageLosesNothingAndCountsNothingTwice() throws Exception {
    Exporter e = manualExporter(config());
    e.submit(delta(0, 0.25));
    e.submit(delta(1, 0.5));
    awaitAcked(e, 2);

    // Delta 3 reaches the collector and is applied, but its ack is lost.
    gate.drop = true;
    e.submit(delta(2, 1.0));
    scheduler.runDue();
    assertThat(source().lastSequence()).isEqualTo(3); // applied (the snapshot queues behind it)
    assertThat(e.stats().bufferedDeltas()).isEqualTo(1);

    outage();
    scheduler.runDue();
    assertThat(e.stats().lastError())
        .hasValueSatisfying(m -> assertThat(m).contains("UNAVAILABLE"));
    e.submit(delta(3, 1.5));
    scheduler.advance(Duration.ofSeconds(10));
    e.submit(delta(4, 0.75));
    scheduler.advance(Duration.ofSeconds(10));
    assertThat(e.stats().bufferedDeltas()).isEqualTo(3);
    long sentBeforeRecovery = e.stats().sent();

    recover();
    awaitAcked(e, 5);

    ExporterStats stats = e.stats();
    assertThat(stats.sent()).isEqualTo(sentBeforeRecovery + 3); // 3 resent, 4 and 5 sent
    assertThat(stats.duplicates()).isEqualTo(1); // delta 3: the collector had applied it
    assertThat(stats.acked()).isEqualTo(5);
    assertThat(stats.merged()).isZero();
    assertThat(stats.dropped()).isZero();
    assertThat(stats.reconnects()).isGreaterThanOrEqualTo(1);
    assertThat(counter("profold.deltas.duplicate")).isEqualTo(1);
    assertThat(counter("profold.deltas.applied")).isEqualTo(5);
    assertTotalsEqualEverythingSubmitted();
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  @Test
  void aBufferOverflowDuringAnOutageMergesNeverSentDeltasAndTheTotalsStillAddUp() throws Exception {
    long oneDelta = delta(0, 0.25, 0.5).setSequence(1).build().getSerializedSize();
    Exporter e = manualExporter(config().withMaxBufferBytes(3 * oneDelta));
    expected.clear(); // the sample above was not submitted
    expectedCpu = 0;
    submitted = 0;
    e.submit(reporting(e, delta(0, 0.25, 0.5)));
    awaitAcked(e, 1);

    outage();
    for (int i = 1; i <= 10; i++) {
      e.submit(reporting(e, delta(i, 0.25 * i, 0.5)));
      scheduler.advance(Duration.ofSeconds(10)); // an interval passes; reconnects fail
    }
    ExporterStats during = e.stats();
    assertThat(during.sent()).isEqualTo(1); // nothing went out during the outage
    assertThat(during.merged()).isGreaterThan(0);
    assertThat(during.dropped()).isZero();
    assertThat(during.bufferedBytes()).isLessThanOrEqualTo(3 * oneDelta);
    assertThat(during.bufferedDeltas()).isLessThan(10);

    recover();
    awaitAcked(e, 1 + during.bufferedDeltas());

    ExporterStats stats = e.stats();
    assertThat(stats.rejected()).isEmpty();
    assertThat(stats.duplicates()).isZero();
    assertThat(counter("profold.deltas.applied")).isEqualTo(1 + during.bufferedDeltas());
    assertTotalsEqualEverythingSubmitted(); // merged deltas stand for their whole range

    // The next delta reports the merges and reconnects since the last one built: the collector
    // then knows of every one, each once, and of the buffer's level and bound.
    e.submit(reporting(e, delta(11, 1.0)));
    awaitAcked(e, 2 + during.bufferedDeltas());
    ExporterStats after = e.stats();
    assertThat(after.merged()).isEqualTo(during.merged());
    assertThat(source().clientExport())
        .isEqualTo(new ClientExport(after.reconnects(), after.merged(), 0, 3 * oneDelta));
    assertThat(e.flush(Duration.ZERO)).isTrue();
  }

  /** {@code b} with the export's report, as the client runtime fills it in before submitting. */
  private static Delta.Builder reporting(Exporter e, Delta.Builder b) {
    ExportReport r = e.takeReport();
    b.getOverheadBuilder()
        .setExportReconnects(r.reconnects())
        .setExportDeltasMerged(r.deltasMerged())
        .setExportBufferedBytes(r.bufferedBytes())
        .setExportBufferLimitBytes(r.bufferLimitBytes());
    return b;
  }

  @Test
  void aDeltaOverHalfTheMessageLimitArrivesInPartsWithExactTotalsAndItsCountersOnce() {
    int tenant = encoder.dimension("tenant", ValueType.VALUE_TYPE_INT);
    Delta.Builder big = delta(0, 0.25);
    for (int k = 0; k < 3000; k++) { // one entry per tenant, folded into the path's series
      Entry.Builder e = entry(main, "main", 0.001 * (k % 97 + 1)).toBuilder();
      big.addEntries(e.addKey(AttributeValue.newBuilder().setAttributeId(tenant).setIntValue(k)));
    }
    long limit = ExporterConfig.MIN_MESSAGE_BYTES;
    assertThat(big.build().getSerializedSize()).isGreaterThan((int) limit);
    try (Exporter e = new Exporter(channel, encoder, config().withMaxMessageBytes(limit))) {
      e.submit(big);
      e.submit(delta(1, 2.0));
      assertThat(e.flush(WAIT)).isTrue();

      ExporterStats stats = e.stats();
      assertThat(stats.split()).isEqualTo(1);
      assertThat(stats.acked()).isGreaterThanOrEqualTo(4);
      assertThat(stats.rejected()).isEmpty();
      assertThat(stats.dropped()).isZero();
      submitted = (int) stats.acked(); // every part is a delta of its own on the wire
      assertTotalsEqualEverythingSubmitted(); // the interval's CPU time counted once
      assertThat(series("main").state().count()).isEqualTo(3002);
      assertThat(counter("profold.deltas.applied")).isEqualTo(stats.acked());
    }
  }

  /** Swallows the server's responses while {@link #drop} is set: acks lost on the way back. */
  static final class AckGate implements ServerInterceptor {
    volatile boolean drop;

    @Override
    public <ReqT, RespT> ServerCall.Listener<ReqT> interceptCall(
        ServerCall<ReqT, RespT> call, Metadata headers, ServerCallHandler<ReqT, RespT> next) {
      return next.startCall(
          new ForwardingServerCall.SimpleForwardingServerCall<>(call) {
            @Override
            public void sendMessage(RespT message) {
              if (!drop) {
                super.sendMessage(message);
              }
            }
          },
          headers);
    }
  }
}
