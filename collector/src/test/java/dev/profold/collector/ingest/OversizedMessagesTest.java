package dev.profold.collector.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.export.Exporter;
import dev.profold.client.internal.export.ExporterConfig;
import dev.profold.client.internal.export.ExporterStats;
import dev.profold.collector.config.CollectorConfig;
import dev.profold.collector.server.CollectorServer;
import dev.profold.collector.testing.Deltas;
import dev.profold.collector.testing.JulRecords;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.IngestGrpc;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ValueType;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.WireStates;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.TimeUnit;
import java.util.logging.Filter;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A real collector whose {@code limits.max_message_bytes} is 64 KiB: a larger message is refused by
 * gRPC before the collector sees it, and the collector counts it ({@code reason="too_large"}); the
 * client library's exporter, configured for the default 16 MiB, learns the lower limit from the
 * refusal and its later deltas arrive split. The log has the collector's one line saying which
 * limit to raise, not gRPC's stack trace.
 */
class OversizedMessagesTest {
  private static final int LIMIT = 64 * 1024;

  private CollectorServer server;
  private ManagedChannel channel;

  @BeforeEach
  void start() throws Exception {
    CollectorConfig d = CollectorConfig.defaults().withOverrides(null, 0, 0, null);
    CollectorConfig small =
        new CollectorConfig(
            d.listen(),
            d.grpcPort(),
            d.httpPort(),
            Duration.ofMinutes(1),
            d.sourceTtlIntervals(),
            d.cardinalityLimit(),
            d.histogramMaxScale(),
            LIMIT,
            d.maxPendingBytes(),
            d.dictionaryEntries(),
            d.streamIds(),
            d.maxSources(),
            d.retryDelay(),
            d.shutdownTimeout(),
            d.schemes(),
            d.archive(),
            d.alerts(),
            d.analysis());
    server = new CollectorServer(small, InstantSource.system());
    server.start();
    channel = NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
  }

  @AfterEach
  void stop() throws Exception {
    channel.shutdownNow();
    server.stop();
  }

  private double tooLarge() {
    Matcher m =
        Pattern.compile("(?m)^profold_deltas_rejected_total\\{reason=\"too_large\"} (\\S+)$")
            .matcher(server.meters().scrape());
    return m.find() ? Double.parseDouble(m.group(1)) : 0;
  }

  @Test
  void aMessageOverTheLimitIsRefusedByGrpcAndCountedByTheCollector() {
    Delta delta = oversized();
    assertThat(tooLarge()).isZero();

    assertThatThrownBy(
            () ->
                IngestGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .export(delta))
        .isInstanceOf(StatusRuntimeException.class)
        .satisfies(
            e ->
                assertThat(Status.fromThrowable(e).getCode())
                    .isEqualTo(Status.Code.RESOURCE_EXHAUSTED));
    assertThat(tooLarge()).isEqualTo(1);
    assertThat(server.meters().scrape())
        .contains("profold_deltas_rejected_total{reason=\"invalid\"} 0.0\n")
        .as("received, whatever became of it: rejected never exceeds received")
        .contains("profold_deltas_received_total 1.0\n")
        .contains("profold_ingest_received_bytes_total 0.0\n");
  }

  @Test
  void theLogHasTheCollectorsOneLineAndNoStackTraceOfGrpc() {
    Delta delta = oversized();
    JulRecords jul = JulRecords.capture();
    ListAppender<ILoggingEvent> own = new ListAppender<>();
    ch.qos.logback.classic.Logger ownLog =
        (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(OversizedMessages.class);
    own.start();
    ownLog.addAppender(own);
    try {
      for (int i = 0; i < 2; i++) {
        assertThatThrownBy(
                () ->
                    IngestGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(10, TimeUnit.SECONDS)
                        .export(delta))
            .isInstanceOf(StatusRuntimeException.class);
      }
    } finally {
      jul.close();
      ownLog.detachAppender(own);
    }
    assertThat(tooLarge()).as("still counted").isEqualTo(2);
    assertThat(jul.records())
        .as("java.util.logging records with gRPC's oversize error")
        .noneMatch(r -> r.getThrown() instanceof StatusRuntimeException);
    assertThat(own.list).hasSize(1);
    ILoggingEvent line = own.list.get(0);
    assertThat(line.getThrowableProxy()).isNull();
    assertThat(line.getFormattedMessage())
        .contains("larger than limits.max_message_bytes (" + LIMIT + " bytes)")
        .contains("Raise limits.max_message_bytes");
  }

  @Test
  void grpcsOtherRecordsStillPassTheFilter() {
    Filter f = java.util.logging.Logger.getLogger(OversizedMessageLogFilter.LOGGER).getFilter();
    assertThat(f).as("installed by the server").isInstanceOf(OversizedMessageLogFilter.class);
    LogRecord oversize = new LogRecord(Level.WARNING, "Exception processing message");
    oversize.setThrown(
        Status.RESOURCE_EXHAUSTED
            .withDescription("gRPC message exceeds maximum size 65536: 328607")
            .asRuntimeException());
    assertThat(f.isLoggable(oversize)).isFalse();
    LogRecord other = new LogRecord(Level.WARNING, "Exception processing message");
    other.setThrown(Status.INTERNAL.withDescription("broken").asRuntimeException());
    assertThat(f.isLoggable(other)).isTrue();
    LogRecord exhausted = new LogRecord(Level.WARNING, "something else");
    exhausted.setThrown(Status.RESOURCE_EXHAUSTED.withDescription("too many").asRuntimeException());
    assertThat(f.isLoggable(exhausted)).isTrue();
    assertThat(f.isLoggable(new LogRecord(Level.WARNING, "no exception"))).isTrue();
    assertThat(f.isLoggable(new LogRecord(Level.SEVERE, "x"))).isTrue();
  }

  private static Delta oversized() {
    Deltas.Builder big =
        Deltas.source("checkout", "i-1").seq(1).region(1, "main", RegionKind.REGION_KIND_COMPUTE);
    for (int i = 0; i < 5000; i++) {
      big.entry(1, 0.001 * (i + 1));
    }
    Delta delta = big.build();
    assertThat(delta.getSerializedSize()).isGreaterThan(LIMIT);
    return delta;
  }

  @Test
  void theClientLibraryLearnsTheLowerLimitAndItsLaterDeltasArrive() {
    DeltaEncoder encoder =
        new DeltaEncoder(
            SourceIdentity.newBuilder()
                .setService("checkout")
                .setInstance("pod-1")
                .setIncarnationId(3)
                .setProcessStartUnixNanos(Deltas.DEFAULT_PROCESS_START)
                .build());
    int region = encoder.dimension("region", ValueType.VALUE_TYPE_PATH);
    int tenant = encoder.dimension("tenant", ValueType.VALUE_TYPE_INT);
    int time = encoder.measurement("time", ValueType.VALUE_TYPE_DOUBLE, "seconds");
    int main = encoder.pathNode(0, region, "main", RegionKind.REGION_KIND_COMPUTE);
    long now = System.currentTimeMillis() * 1_000_000L;
    try (Exporter e =
        new Exporter(
            channel,
            encoder,
            ExporterConfig.defaults().withBackoff(Duration.ofMillis(10), Duration.ofMillis(100)))) {
      for (int i = 0; i < 2; i++) {
        Delta.Builder d =
            Delta.newBuilder()
                .setIntervalStartUnixNanos(now - (2 - i) * 10_000_000_000L)
                .setIntervalEndUnixNanos(now - (1 - i) * 10_000_000_000L);
        for (int k = 0; k < 3000; k++) { // about 100 KiB
          Aggregate a = new Aggregate();
          a.record(0.001);
          d.addEntries(
              Entry.newBuilder()
                  .addKey(AttributeValue.newBuilder().setAttributeId(region).setPathNodeId(main))
                  .addKey(AttributeValue.newBuilder().setAttributeId(tenant).setIntValue(k))
                  .addMeasurements(
                      dev.profold.proto.v1.Measurement.newBuilder()
                          .setAttributeId(time)
                          .setState(WireStates.toProto(a))));
        }
        e.submit(d);
        assertThat(e.flush(Duration.ofSeconds(30))).isTrue();
      }
      ExporterStats stats = e.stats();
      assertThat(stats.dropped()).isEqualTo(1); // the first delta: refused, then too large
      assertThat(stats.split()).isEqualTo(1); // the second: sent in parts
      assertThat(tooLarge()).isEqualTo(1);
      Matcher count =
          Pattern.compile(
                  "(?m)^profold_region_time_seconds_count\\{[^}]*path=\"main\"[^}]*} (\\S+)$")
              .matcher(server.meters().scrape());
      assertThat(count.find()).isTrue();
      assertThat(Double.parseDouble(count.group(1))).isEqualTo(3000);
    }
  }
}
