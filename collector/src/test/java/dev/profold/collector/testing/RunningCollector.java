package dev.profold.collector.testing;

import dev.profold.collector.config.CollectorConfig;
import dev.profold.collector.server.CollectorServer;
import dev.profold.proto.v1.AckResult;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.ExportResponse;
import dev.profold.proto.v1.IngestGrpc;
import dev.profold.proto.v1.RegionKind;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.util.concurrent.TimeUnit;

/**
 * A real {@link CollectorServer} on ephemeral loopback ports with an injected clock, holding known
 * data: service {@code checkout}, instance {@code i-1}, region {@code main} with time values 1.0
 * and 2.0, region {@code main/db.query} with 0.25 and 0.5 (one delta over the default interval of
 * {@link Deltas}). Close it after use.
 */
public final class RunningCollector implements AutoCloseable {
  /** The clock stands just after the pushed delta's interval. */
  public final MutableClock clock = MutableClock.atNanos(Deltas.DEFAULT_START + 10_000_000_001L);

  public final CollectorServer server;

  private RunningCollector() throws Exception {
    server = new CollectorServer(CollectorConfig.defaults().withOverrides(null, 0, 0, null), clock);
    server.start();
  }

  /** Starts a collector and pushes the known data (see the class comment). */
  public static RunningCollector withData() throws Exception {
    RunningCollector c = new RunningCollector();
    try {
      c.push(
          Deltas.source("checkout", "i-1")
              .seq(1)
              .region(1, "main", RegionKind.REGION_KIND_COMPUTE)
              .region(2, 1, "db.query", RegionKind.REGION_KIND_IO)
              .entry(1, 1.0, 2.0)
              .entry(2, 0.25, 0.5)
              .build());
    } catch (Exception | AssertionError e) {
      c.close();
      throw e;
    }
    return c;
  }

  /** Sends {@code delta} with the unary Export call; returns once it is applied. */
  public void push(Delta delta) {
    push(server.grpcPort(), delta);
  }

  /**
   * Sends {@code delta} to the collector on loopback port {@code grpcPort} with the unary Export
   * call; returns once it is applied.
   */
  public static void push(int grpcPort, Delta delta) {
    ManagedChannel channel =
        NettyChannelBuilder.forAddress("127.0.0.1", grpcPort).usePlaintext().build();
    try {
      ExportResponse r =
          IngestGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS).export(delta);
      if (r.getResult() != AckResult.ACK_RESULT_APPLIED) {
        throw new AssertionError("delta not applied: " + r);
      }
    } finally {
      channel.shutdownNow();
    }
  }

  /** {@code 127.0.0.1:<grpc port>}. */
  public String grpcTarget() {
    return "127.0.0.1:" + server.grpcPort();
  }

  /** {@code http://127.0.0.1:<http port>}. */
  public String httpBase() {
    return "http://127.0.0.1:" + server.httpPort();
  }

  @Override
  public void close() throws InterruptedException {
    server.stop();
  }
}
