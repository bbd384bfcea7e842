package dev.profold.collector.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.fold.FoldConfig;
import dev.profold.collector.fold.FoldEngine;
import dev.profold.collector.fold.FoldWorker;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.testing.Deltas;
import dev.profold.collector.testing.MutableClock;
import dev.profold.proto.v1.Ack;
import dev.profold.proto.v1.AckResult;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.ExportResponse;
import dev.profold.proto.v1.IngestGrpc;
import dev.profold.proto.v1.RegionKind;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Bytes protobuf cannot parse as a Delta (here a string that is not UTF-8, as a buggy non-Java
 * client could send) reach the Ingest service, wrapped as the collector serves it ({@link
 * LenientDeltas}): a rejected ack naming the problem, counted as invalid, and the stream goes on.
 * Before, gRPC failed the call while parsing: the stream ended with UNKNOWN, a stack trace was
 * logged and nothing was counted.
 */
class MalformedDeltaTest {
  private static final long T0 = Deltas.DEFAULT_START + 10_000_000_000L;

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final CollectorMetrics metrics = new CollectorMetrics(registry);
  private final GlobalDictionary dictionary = new GlobalDictionary(10_000);
  private FoldWorker worker;
  private Server server;
  private ManagedChannel channel;

  /** Sends bytes as they are. */
  private static final MethodDescriptor.Marshaller<byte[]> RAW =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
          return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
          throw new UnsupportedOperationException("requests only");
        }
      };

  @BeforeEach
  void start() throws Exception {
    FoldEngine engine =
        new FoldEngine(
            new FoldConfig(10_000_000_000L, 5, 1000),
            dictionary,
            MutableClock.atNanos(T0),
            metrics);
    worker =
        new FoldWorker(engine, metrics, 64 << 20, Duration.ofMillis(50), Duration.ofSeconds(5));
    worker.start();
    IngestService service = new IngestService(dictionary, worker, metrics, Duration.ofMillis(1500));
    String name = InProcessServerBuilder.generateName();
    server =
        InProcessServerBuilder.forName(name)
            .directExecutor()
            .addService(LenientDeltas.wrap(service.bindService()))
            .build()
            .start();
    channel = InProcessChannelBuilder.forName(name).directExecutor().build();
  }

  @AfterEach
  void stop() throws Exception {
    channel.shutdownNow();
    server.shutdownNow();
    worker.shutdown(Duration.ofSeconds(5));
  }

  private double rejectedInvalid() {
    Counter c = registry.find("profold.deltas.rejected").tag("reason", "invalid").counter();
    return c == null ? 0 : c.count();
  }

  /**
   * {@code d}'s bytes with the first occurrence of the 4 ASCII bytes {@code marker} made not UTF-8.
   */
  private static byte[] notUtf8(Delta d, String marker) {
    byte[] bytes = d.toByteArray();
    byte[] m = marker.getBytes(StandardCharsets.US_ASCII);
    for (int i = 0; i + m.length <= bytes.length; i++) {
      if (java.util.Arrays.equals(bytes, i, i + m.length, m, 0, m.length)) {
        bytes[i] = (byte) 0xC3; // a lead byte followed by no continuation byte
        bytes[i + 1] = (byte) 0x28;
        return bytes;
      }
    }
    throw new AssertionError("no " + marker + " in the delta");
  }

  @Test
  void aPushedDeltaThatIsNotProtobufIsRejectedByNameAndTheStreamGoesOn() throws Exception {
    MethodDescriptor<byte[], Ack> push =
        IngestGrpc.getPushMethod().toBuilder(RAW, ProtoUtils.marshaller(Ack.getDefaultInstance()))
            .build();
    LinkedBlockingQueue<Object> answers = new LinkedBlockingQueue<>();
    StreamObserver<byte[]> requests =
        ClientCalls.asyncBidiStreamingCall(
            channel.newCall(push, CallOptions.DEFAULT),
            new StreamObserver<Ack>() {
              @Override
              public void onNext(Ack a) {
                answers.add(a);
              }

              @Override
              public void onError(Throwable t) {
                answers.add(t);
              }

              @Override
              public void onCompleted() {
                answers.add("completed");
              }
            });
    requests.onNext(
        Deltas.source("checkout", "i-1")
            .seq(1)
            .region(1, "main", RegionKind.REGION_KIND_COMPUTE)
            .entry(1, 0.5)
            .build()
            .toByteArray());
    assertThat(((Ack) answers.poll(10, TimeUnit.SECONDS)).getResult())
        .isEqualTo(AckResult.ACK_RESULT_APPLIED);

    requests.onNext(
        notUtf8(
            Deltas.next()
                .seq(2)
                .region(7, 1, "QQQQ", RegionKind.REGION_KIND_IO)
                .entry(7, 0.5)
                .build(),
            "QQQQ"));
    Object second = answers.poll(10, TimeUnit.SECONDS);

    assertThat(second).isInstanceOf(Ack.class);
    Ack rejected = (Ack) second;
    assertThat(rejected.getSequence()).as("read from the bytes").isEqualTo(2);
    assertThat(rejected.getResult()).isEqualTo(AckResult.ACK_RESULT_REJECTED);
    assertThat(rejected.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT.value());
    assertThat(rejected.getStatus().getMessage())
        .startsWith("delta: not a valid profold.v1.Delta (")
        .contains("invalid UTF-8")
        .contains("Strings must be UTF-8");
    assertThat(rejectedInvalid()).isEqualTo(1);

    requests.onNext(
        Deltas.next()
            .seq(3)
            .region(1, "main", RegionKind.REGION_KIND_COMPUTE)
            .entry(1, 0.25)
            .build()
            .toByteArray());
    assertThat(((Ack) answers.poll(10, TimeUnit.SECONDS)).getResult())
        .as("the stream goes on")
        .isEqualTo(AckResult.ACK_RESULT_APPLIED);
    requests.onCompleted();
  }

  @Test
  void anExportedDeltaThatIsNotProtobufIsInvalidArgumentByName() {
    MethodDescriptor<byte[], ExportResponse> export =
        IngestGrpc.getExportMethod().toBuilder(
                RAW, ProtoUtils.marshaller(ExportResponse.getDefaultInstance()))
            .build();
    byte[] bytes =
        notUtf8(
            Deltas.source("evil", "e-1")
                .seq(1)
                .region(1, "main", RegionKind.REGION_KIND_COMPUTE)
                .entry(1, 0.5)
                .build(),
            "evil");

    StatusRuntimeException e =
        catchThrowableOfType(
            StatusRuntimeException.class,
            () -> ClientCalls.blockingUnaryCall(channel, export, CallOptions.DEFAULT, bytes));

    assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(e.getStatus().getDescription())
        .startsWith("delta: not a valid profold.v1.Delta (")
        .contains("invalid UTF-8");
    assertThat(rejectedInvalid()).isEqualTo(1);
  }

  @Test
  void aValidDeltaIsReadAsBeforeAndItsStandInIsNeverSeenAsAProblem() throws Exception {
    Delta d =
        Deltas.source("checkout", "i-1")
            .seq(4)
            .region(1, "main", RegionKind.REGION_KIND_COMPUTE)
            .entry(1, 0.5)
            .build();
    assertThat(LenientDeltas.problem(d)).isNull();
    Delta standIn = LenientDeltas.standIn(d.toByteArray(), "broken");
    assertThat(standIn.getSequence()).isEqualTo(4);
    assertThat(LenientDeltas.problem(standIn)).contains("broken");
  }
}
