package dev.profold.client.internal.export;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import java.util.function.Consumer;

/**
 * Connects a channel at start and reports once when the collector cannot be reached. The exporter
 * opens its stream only when it has a delta to send, an interval after the start, so without this a
 * wrong endpoint or a collector that is down would go unmentioned until then (for a short-lived
 * process, possibly never). Connecting ahead also saves the first delta the connection's setup.
 *
 * <p>Only reports; the exporter still decides when to try again. Thread-safe.
 */
public final class FirstConnection {
  private final ManagedChannel channel;
  private final Consumer<ConnectivityState> unreachable;

  private FirstConnection(ManagedChannel channel, Consumer<ConnectivityState> unreachable) {
    this.channel = channel;
    this.unreachable = unreachable;
  }

  /**
   * Asks {@code channel} to connect now and calls {@code unreachable} (on a gRPC thread, at most
   * once) if the first attempt fails; stops watching once connected or shut down.
   */
  public static void watch(ManagedChannel channel, Consumer<ConnectivityState> unreachable) {
    new FirstConnection(channel, unreachable).await(channel.getState(true));
  }

  private void await(ConnectivityState seen) {
    channel.notifyWhenStateChanged(seen, this::changed);
  }

  private void changed() {
    ConnectivityState now = channel.getState(false);
    switch (now) {
      case READY, SHUTDOWN -> {
        // connected, or the runtime stopped: nothing to report
      }
      case TRANSIENT_FAILURE -> unreachable.accept(now);
      default -> await(now); // IDLE or CONNECTING: not decided yet
    }
  }
}
