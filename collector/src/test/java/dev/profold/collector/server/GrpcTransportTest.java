package dev.profold.collector.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.collector.config.CollectorConfig;
import dev.profold.collector.testing.Deltas;
import dev.profold.collector.testing.MutableClock;
import dev.profold.collector.testing.RunningCollector;
import dev.profold.proto.v1.AttributeKind;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.IngestGrpc;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.ValueType;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The gRPC server's connection settings (GrpcTransport) hold on a running collector. */
class GrpcTransportTest {
  /**
   * Opens a health Watch stream, waits for its first answer (so that the stream exists on the
   * server) and cancels it, which sends RST_STREAM; false once the connection has failed it.
   */
  private static boolean openAndReset(ManagedChannel channel) throws InterruptedException {
    ClientCall<HealthCheckRequest, HealthCheckResponse> call =
        channel.newCall(HealthGrpc.getWatchMethod(), CallOptions.DEFAULT);
    CompletableFuture<Boolean> answered = new CompletableFuture<>();
    call.start(
        new ClientCall.Listener<>() {
          @Override
          public void onMessage(HealthCheckResponse message) {
            answered.complete(true);
          }

          @Override
          public void onClose(Status status, Metadata trailers) {
            answered.complete(false);
          }
        },
        new Metadata());
    call.sendMessage(HealthCheckRequest.getDefaultInstance());
    call.halfClose();
    call.request(1);
    boolean ok;
    try {
      ok = answered.get(10, TimeUnit.SECONDS);
    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
      ok = false;
    }
    call.cancel("reset by the test", null);
    return ok;
  }

  @Test
  void aClientResettingStreamsFasterThanTheLimitLosesItsConnection() throws Exception {
    // HTTP/2 rapid reset: gRPC leaves the check off by default, and a client could make the
    // server set up and tear down streams without end on one connection.
    try (RunningCollector c = RunningCollector.withData()) {
      ManagedChannel channel = NettyChannelBuilder.forTarget(c.grpcTarget()).usePlaintext().build();
      try {
        assertThat(openAndReset(channel)).as("the first stream").isTrue();
        assertThat(channel.getState(false)).isEqualTo(ConnectivityState.READY);
        CountDownLatch leftReady = new CountDownLatch(1);
        channel.notifyWhenStateChanged(ConnectivityState.READY, leftReady::countDown);

        int resets = 1;
        while (resets <= GrpcTransport.MAX_RESETS + 50 && openAndReset(channel)) {
          resets++;
        }

        assertThat(leftReady.await(10, TimeUnit.SECONDS))
            .as("the server closed the connection after %d resets", resets)
            .isTrue();
        assertThat(resets).isGreaterThan(GrpcTransport.MAX_RESETS / 2);
      } finally {
        channel.shutdownNow();
      }
    }
  }

  @Test
  void aRefusalQuotingAHugeNameReachesTheClientAsInvalidArgument() throws Exception {
    // Before: the status message quoted the whole name, beyond the client's 8 KiB limit of
    // metadata, and the client saw the call fail as INTERNAL instead of the field at fault.
    try (RunningCollector c = RunningCollector.withData()) {
      ManagedChannel channel = NettyChannelBuilder.forTarget(c.grpcTarget()).usePlaintext().build();
      try {
        Delta delta =
            Deltas.source("checkout", "huge-name")
                .seq(1)
                .attribute(
                    50,
                    "n".repeat(100_000),
                    ValueType.VALUE_TYPE_DOUBLE,
                    AttributeKind.ATTRIBUTE_KIND_MEASUREMENT,
                    "")
                .build();
        assertThatThrownBy(
                () ->
                    IngestGrpc.newBlockingStub(channel)
                        .withDeadlineAfter(10, TimeUnit.SECONDS)
                        .export(delta))
            .isInstanceOfSatisfying(
                StatusRuntimeException.class,
                e -> {
                  assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
                  assertThat(e.getStatus().getDescription())
                      .startsWith("dictionary.attributes[")
                      .contains("characters left out")
                      .endsWith("at most 128 characters)")
                      .hasSizeLessThanOrEqualTo(512);
                });
      } finally {
        channel.shutdownNow();
      }
    }
  }

  /** The call threads alive now that were not alive at {@code before}. */
  private static List<Thread> newCallThreads(Set<Long> before) {
    return newThreads(before, GrpcTransport::isCallThread);
  }

  /** The threads {@code kind} accepts alive now that were not alive at {@code before}. */
  private static List<Thread> newThreads(
      Set<Long> before, java.util.function.Predicate<Thread> kind) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(kind)
        .filter(t -> !before.contains(t.getId()))
        .collect(Collectors.toList());
  }

  @Test
  void callsRunOnTheServersOwnBoundedThreadsWhichEndWithIt() throws Exception {
    // gRPC's default executor starts a thread per call event that finds none free: a burst of
    // deltas from many clients made as many threads.
    Set<Long> before =
        Thread.getAllStackTraces().keySet().stream().map(Thread::getId).collect(Collectors.toSet());
    MutableClock clock = MutableClock.atNanos(Deltas.DEFAULT_START + 10_000_000_001L);
    CollectorServer server =
        new CollectorServer(CollectorConfig.defaults().withOverrides(null, 0, 0, null), clock);
    server.start();
    List<Thread> threads;
    try {
      int clients = 4 * GrpcTransport.callThreads();
      ExecutorService senders = Executors.newFixedThreadPool(clients);
      try {
        List<Future<?>> sent = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
          String instance = "i-" + i;
          sent.add(
              senders.submit(
                  () -> {
                    RunningCollector.push(
                        server.grpcPort(),
                        Deltas.source("checkout", instance)
                            .seq(1)
                            .region(1, "main", RegionKind.REGION_KIND_COMPUTE)
                            .entry(1, 1.0)
                            .build());
                    return null;
                  }));
        }
        for (Future<?> f : sent) {
          f.get(30, TimeUnit.SECONDS); // applied, or the push's assertion fails here
        }
      } finally {
        senders.shutdownNow();
      }
      threads = new ArrayList<>(newCallThreads(before));
      assertThat(threads)
          .as("threads of this collector named profold-grpc-call-N")
          .isNotEmpty()
          .hasSizeLessThanOrEqualTo(GrpcTransport.callThreads());
      // A health check (a supervisor's probe) runs on threads of its own, not behind deltas (gRPC
      // also looks up every call's method there, before handing an Ingest call to its threads).
      ManagedChannel channel =
          NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
      try {
        assertThat(
                HealthGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(10, TimeUnit.SECONDS)
                    .check(HealthCheckRequest.getDefaultInstance())
                    .getStatus())
            .isEqualTo(HealthCheckResponse.ServingStatus.SERVING);
      } finally {
        channel.shutdownNow();
      }
      List<Thread> control = newThreads(before, GrpcTransport::isControlThread);
      assertThat(control).isNotEmpty().hasSizeLessThanOrEqualTo(GrpcTransport.CONTROL_THREADS);
      threads.addAll(control);
      HttpResponse<String> scrape =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(
                          URI.create("http://127.0.0.1:" + server.httpPort() + "/metrics"))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(scrape.body()).contains("profold_ingest_call_events_queued 0.0");
    } finally {
      server.stop();
    }
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(10));
      assertThat(t.isAlive()).as("%s after the collector stopped", t.getName()).isFalse();
    }
  }
}
