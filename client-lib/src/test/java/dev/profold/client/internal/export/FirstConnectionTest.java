package dev.profold.client.internal.export;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class FirstConnectionTest {
  private final List<ManagedChannel> channels = new CopyOnWriteArrayList<>();
  private Server server;

  @AfterEach
  void close() {
    channels.forEach(ManagedChannel::shutdownNow);
    if (server != null) {
      server.shutdownNow();
    }
  }

  private ManagedChannel channel(String name) {
    ManagedChannel c = InProcessChannelBuilder.forName(name).directExecutor().build();
    channels.add(c);
    return c;
  }

  /** Waits (bounded) until {@code channel} reaches {@code state}; true if it did. */
  private static boolean reaches(ManagedChannel channel, ConnectivityState state)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline) {
      ConnectivityState now = channel.getState(false);
      if (now == state) {
        return true;
      }
      CountDownLatch changed = new CountDownLatch(1);
      channel.notifyWhenStateChanged(now, changed::countDown);
      changed.await(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
    }
    return false;
  }

  @Test
  void aCollectorThatCannotBeReachedIsReportedAtStartOnce() throws Exception {
    CountDownLatch reported = new CountDownLatch(1);
    List<ConnectivityState> reports = new CopyOnWriteArrayList<>();
    ManagedChannel c = channel("no-collector-here");
    FirstConnection.watch(
        c,
        s -> {
          reports.add(s);
          reported.countDown();
        });
    assertThat(reported.await(10, TimeUnit.SECONDS)).as("reported without any call").isTrue();
    assertThat(reports).containsExactly(ConnectivityState.TRANSIENT_FAILURE);
  }

  @Test
  void aReachableCollectorIsConnectedToAndNothingIsReported() throws Exception {
    server = InProcessServerBuilder.forName("a-collector").directExecutor().build().start();
    List<ConnectivityState> reports = new CopyOnWriteArrayList<>();
    ManagedChannel c = channel("a-collector");
    FirstConnection.watch(c, reports::add);
    assertThat(reaches(c, ConnectivityState.READY)).as("connected at start").isTrue();
    assertThat(reports).isEmpty();
  }
}
