package dev.profold.collector.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.collector.testing.Deltas;
import dev.profold.collector.testing.RunningCollector;
import dev.profold.proto.v1.Ack;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.IngestGrpc;
import dev.profold.proto.v1.RegionKind;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * An error that ends the fold thread (out of memory, say) makes the collector say so: unhealthy,
 * not serving, and every delta refused as UNAVAILABLE so that clients keep it. Before, the thread
 * died quietly, /healthz said ok, and deltas were queued and never answered.
 */
class FoldFailureOnServerTest {
  private final HttpClient http = HttpClient.newHttpClient();

  private HttpResponse<String> get(RunningCollector c, String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create(c.httpBase() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static Delta delta(String instance, long seq) {
    return Deltas.source("checkout", instance)
        .seq(seq)
        .region(1, "main", RegionKind.REGION_KIND_COMPUTE)
        .entry(1, 1.0)
        .build();
  }

  @Test
  void aFoldThreadKilledByAnErrorMakesTheCollectorUnhealthyAndRefuseDeltas() throws Exception {
    try (RunningCollector c = RunningCollector.withData()) {
      ManagedChannel channel = NettyChannelBuilder.forTarget(c.grpcTarget()).usePlaintext().build();
      try {
        BlockingQueue<Object> pushed = new LinkedBlockingQueue<>();
        CompletableFuture<Throwable> pushEnd = new CompletableFuture<>();
        StreamObserver<Delta> push =
            IngestGrpc.newStub(channel)
                .push(
                    new StreamObserver<>() {
                      @Override
                      public void onNext(Ack ack) {
                        pushed.add(ack);
                      }

                      @Override
                      public void onError(Throwable t) {
                        pushEnd.complete(t);
                      }

                      @Override
                      public void onCompleted() {
                        pushEnd.complete(null);
                      }
                    });
        push.onNext(delta("i-2", 1));
        assertThat(pushed.poll(10, TimeUnit.SECONDS)).as("the first delta's ack").isNotNull();
        assertThat(get(c, "/metrics").body()).contains("profold_ingest_push_streams 1.0");

        c.server
            .worker()
            .execute(
                () -> {
                  throw new OutOfMemoryError("planted by the test");
                });
        assertThat(c.server.worker().awaitEnd(Duration.ofSeconds(10))).isTrue();

        HttpResponse<String> health = get(c, "/healthz");
        assertThat(health.statusCode()).isEqualTo(503);
        assertThat(health.body()).contains("OutOfMemoryError: planted by the test");
        assertThat(get(c, "/readyz").statusCode()).isEqualTo(503);
        assertThat(
                HealthGrpc.newBlockingStub(channel)
                    .check(HealthCheckRequest.getDefaultInstance())
                    .getStatus())
            .isEqualTo(HealthCheckResponse.ServingStatus.NOT_SERVING);

        // The open Push stream ends with UNAVAILABLE: its client reconnects and resends.
        Throwable end = pushEnd.get(10, TimeUnit.SECONDS);
        assertThat(Status.fromThrowable(end).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(Status.fromThrowable(end).getDescription()).contains("fold thread failed");

        // A new delta is refused as UNAVAILABLE, not queued without an answer.
        assertThatThrownBy(() -> c.push(delta("i-3", 1)))
            .isInstanceOfSatisfying(
                StatusRuntimeException.class,
                e -> {
                  assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAVAILABLE);
                  assertThat(e.getStatus().getDescription())
                      .contains("fold thread failed")
                      .contains("must be restarted");
                });

        String metrics = get(c, "/metrics").body();
        assertThat(metrics).contains("profold_fold_up 0.0");
        assertThat(metrics).contains("profold_ingest_push_streams 0.0");
        assertThat(metrics).contains("profold_ingest_pending_bytes 0.0");
        assertThat(metrics).contains("profold_deltas_rejected_total{reason=\"fold_failed\"} 1.0");
      } finally {
        channel.shutdownNow();
      }
    }
  }

  @Test
  void theDeltasQueuedWhenTheFoldFailsAreNoLongerCountedPending() throws Exception {
    try (RunningCollector c = RunningCollector.withData()) {
      ManagedChannel channel = NettyChannelBuilder.forTarget(c.grpcTarget()).usePlaintext().build();
      java.util.concurrent.CountDownLatch hold = new java.util.concurrent.CountDownLatch(1);
      try {
        // The fold thread held, then made to fail once a delta is queued behind the failure.
        failOnceReleased(c, hold);
        StreamObserver<Delta> push =
            IngestGrpc.newStub(channel)
                .push(
                    new StreamObserver<>() {
                      @Override
                      public void onNext(Ack ack) {}

                      @Override
                      public void onError(Throwable t) {}

                      @Override
                      public void onCompleted() {}
                    });
        push.onNext(delta("i-4", 1));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30); // a hang guard
        while (c.server.metrics().pendingBytes().get() == 0) {
          assertThat(System.nanoTime() - deadline).as("the delta queued within 30 s").isNegative();
          Thread.onSpinWait();
        }
      } finally {
        hold.countDown();
      }
      assertThat(c.server.worker().awaitEnd(Duration.ofSeconds(10))).isTrue();
      // Before: the bytes of the delta the failure dropped stayed counted for good.
      assertThat(c.server.metrics().pendingBytes().get()).isZero();
      channel.shutdownNow();
    }
  }

  @Test
  void callsWaitingForTheFoldThreadWhenItFailsAreAnsweredUnavailable() throws Exception {
    // Their answers were tasks the failure cleared: an Export call and a half-closed Push stream
    // (no longer counted open) waited for ever, or until the client's deadline.
    try (RunningCollector c = RunningCollector.withData()) {
      ManagedChannel channel = NettyChannelBuilder.forTarget(c.grpcTarget()).usePlaintext().build();
      java.util.concurrent.CountDownLatch hold = new java.util.concurrent.CountDownLatch(1);
      try {
        failOnceReleased(c, hold);
        Delta exported = delta("i-5", 1);
        com.google.common.util.concurrent.ListenableFuture<dev.profold.proto.v1.ExportResponse>
            export = IngestGrpc.newFutureStub(channel).export(exported);
        CompletableFuture<Throwable> pushEnd = new CompletableFuture<>();
        StreamObserver<Delta> push =
            IngestGrpc.newStub(channel)
                .push(
                    new StreamObserver<>() {
                      @Override
                      public void onNext(Ack ack) {}

                      @Override
                      public void onError(Throwable t) {
                        pushEnd.complete(t);
                      }

                      @Override
                      public void onCompleted() {
                        pushEnd.complete(null);
                      }
                    });
        Delta pushed = delta("i-6", 1);
        push.onNext(pushed);
        push.onCompleted();
        long both = exported.getSerializedSize() + pushed.getSerializedSize();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30); // a hang guard
        while (c.server.metrics().pendingBytes().get() < both) {
          assertThat(System.nanoTime() - deadline).as("both queued within 30 s").isNegative();
          Thread.onSpinWait();
        }
        hold.countDown(); // the failure, with both deltas queued behind it
        assertThat(c.server.worker().awaitEnd(Duration.ofSeconds(10))).isTrue();

        Throwable exportEnd = catchCause(() -> export.get(10, TimeUnit.SECONDS));
        assertThat(Status.fromThrowable(exportEnd).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
        assertThat(Status.fromThrowable(exportEnd).getDescription()).contains("fold thread failed");
        Throwable streamEnd = pushEnd.get(10, TimeUnit.SECONDS);
        assertThat(Status.fromThrowable(streamEnd).getCode()).isEqualTo(Status.Code.UNAVAILABLE);
      } finally {
        hold.countDown();
        channel.shutdownNow();
      }
    }
  }

  /**
   * Holds the fold thread until {@code hold} opens, then ends it with an error: what is queued
   * meanwhile lies behind the failure.
   */
  private static void failOnceReleased(
      RunningCollector c, java.util.concurrent.CountDownLatch hold) {
    c.server
        .worker()
        .execute(
            () -> {
              try {
                hold.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    c.server
        .worker()
        .execute(
            () -> {
              throw new OutOfMemoryError("planted by the test");
            });
  }

  /** What {@code call} threw, unwrapped from an ExecutionException. */
  private static Throwable catchCause(java.util.concurrent.Callable<?> call) throws Exception {
    try {
      call.call();
    } catch (java.util.concurrent.ExecutionException e) {
      return e.getCause();
    }
    throw new AssertionError("no failure");
  }

  @Test
  void aRunningFoldIsUp() throws Exception {
    try (RunningCollector c = RunningCollector.withData()) {
      assertThat(get(c, "/healthz").body()).isEqualTo("ok\n");
      assertThat(get(c, "/metrics").body()).contains("profold_fold_up 1.0");
    }
  }
}
