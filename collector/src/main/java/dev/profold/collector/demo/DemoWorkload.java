package dev.profold.collector.demo;

import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.ThreadAggregation;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A synthetic multi-service workload for {@code collector --demo}: a few simulated service
 * instances, each with worker threads running nested regions of different kinds (compute, lock
 * contention, blocking I/O, queue waits), measured with the real clock and pushed to the collector
 * over real gRPC, one delta per interval.
 *
 * <p>Thread-safe; {@link #close()} stops the threads and sends a last delta per instance.
 */
public final class DemoWorkload implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(DemoWorkload.class);

  private final ManagedChannel channel;
  private final List<SimulatedInstance> instances = new ArrayList<>();

  /** Connects to the collector at {@code host:port}; nothing runs before {@link #start()}. */
  public DemoWorkload(String host, int port, Duration interval) {
    this.channel = NettyChannelBuilder.forAddress(host, port).usePlaintext().build();
    ThreadAggregation sum = ThreadAggregation.THREAD_AGGREGATION_SUM;
    instances.add(new SimulatedInstance("checkout", "checkout-0", checkout(), 3, interval, sum));
    instances.add(new SimulatedInstance("checkout", "checkout-1", checkout(), 3, interval, sum));
    instances.add(new SimulatedInstance("inventory", "inventory-0", inventory(), 2, interval, sum));
    // Per thread, with a hot shard on its first worker: what a scheme keeping per-thread detail
    // shows (docs/analysis.md).
    instances.add(
        new SimulatedInstance(
            "search",
            "search-0",
            search(),
            2,
            interval,
            ThreadAggregation.THREAD_AGGREGATION_NONE));
  }

  /** Starts every instance's threads and exporter. */
  public void start() {
    for (SimulatedInstance i : instances) {
      i.start(channel);
    }
    log.info(
        "demo workload started: {} simulated instances pushing to the collector", instances.size());
  }

  @Override
  public void close() {
    for (SimulatedInstance i : instances) {
      i.close();
    }
    channel.shutdown();
  }

  /** HTTP handler: parse, authorise, read the cart under a lock, query the database. */
  private static Step checkout() {
    return Step.region(
        "handle",
        RegionKind.REGION_KIND_COMPUTE,
        Step.compute(150),
        Step.region("auth", RegionKind.REGION_KIND_COMPUTE, Step.compute(80)),
        Step.region("cart.lock", RegionKind.REGION_KIND_SYNC, Step.contendedLock(300)),
        Step.region("db.query", RegionKind.REGION_KIND_IO, Step.io(2_000, 4096)));
  }

  /** Queue consumer: wait for work, apply it, write it out. */
  private static Step inventory() {
    return Step.region(
        "consume",
        RegionKind.REGION_KIND_COMPUTE,
        Step.region("queue.poll", RegionKind.REGION_KIND_WAIT, Step.sleep(3_000)),
        Step.region("apply", RegionKind.REGION_KIND_COMPUTE, Step.compute(400)),
        Step.region("db.write", RegionKind.REGION_KIND_IO, Step.io(1_500, 16_384)));
  }

  /** Search: parse, scan an index (heavy compute), rank. */
  private static Step search() {
    return Step.region(
        "query",
        RegionKind.REGION_KIND_COMPUTE,
        Step.region(
            "index.scan", RegionKind.REGION_KIND_COMPUTE, Step.computeHotFirstWorker(900, 3)),
        Step.region("rank", RegionKind.REGION_KIND_COMPUTE, Step.compute(200)),
        Step.region("respond", RegionKind.REGION_KIND_IO, Step.io(500, 2048)));
  }
}
