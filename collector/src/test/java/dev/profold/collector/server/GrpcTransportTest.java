package dev.profold.collector.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.testing.RunningCollector;
import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
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
}
