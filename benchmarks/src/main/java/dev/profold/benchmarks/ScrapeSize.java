package dev.profold.benchmarks;

import dev.profold.collector.config.CollectorConfig;
import dev.profold.collector.config.ConfigLoader;
import dev.profold.collector.server.CollectorServer;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Dictionary;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.ExportResponse;
import dev.profold.proto.v1.IngestGrpc;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.PathNode;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.reduce.WireStates;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;

/**
 * What a Prometheus scrape of the collector costs when its built-in region scheme is full: the
 * bytes of one {@code /metrics} answer (plain text, gzip as Prometheus asks for it, and the
 * protobuf format Prometheus asks for when it scrapes native histograms), its lines, and the time
 * to answer it, at the default {@code cardinality_limit} of 10000 groups and call paths of a given
 * depth.
 *
 * <p>A real collector (gRPC on Netty, the JDK's HTTP server, default configuration: a 10 s
 * interval; sources kept for 100 intervals without a delta, so that the series stay for the whole
 * run) is fed over gRPC by two instances of one service, each sending {@code groups / 2} call paths
 * of {@code depth} frames (frame names of about 60 characters, as the agent's binary class names
 * and methods are; the paths share their first {@code depth - 2} frames and branch in the last
 * two), each path with one {@code time} measurement of 8 values over three octaves, fed again every
 * 2 s. Once an interval has closed (the interval gauges are in the scrape) it scrapes 3 times to
 * warm up, then {@code scrapes} times in each format, and reports the median and the longest (a
 * scrape after an interval closes also computes that interval's region analysis).
 *
 * <p>Arguments: {@code [groups [depth [scrapes]]]}, defaults 10000, 64 (the agent's default depth),
 * 5.
 */
public final class ScrapeSize {
  private static final int REGION = BenchData.REGION_ATTRIBUTE;
  private static final int TIME = BenchData.TIME_ATTRIBUTE;
  private static final String PROTOBUF =
      "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited";

  /** Set when the measurements are done and the feeder is stopped. */
  private static final java.util.concurrent.atomic.AtomicBoolean stopping =
      new java.util.concurrent.atomic.AtomicBoolean();

  private ScrapeSize() {}

  public static void main(String[] args) throws Exception {
    int groups = args.length > 0 ? Integer.parseInt(args[0]) : 10_000;
    int depth = args.length > 1 ? Integer.parseInt(args[1]) : 64;
    int scrapes = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    if (groups < 2 || groups % 2 != 0 || depth < 2 || scrapes < 1) {
      throw new IllegalArgumentException(
          "usage: ScrapeSize [groups (even, >= 2) [depth (>= 2) [scrapes (>= 1)]]]");
    }
    // Sources kept for 100 intervals without a delta: the series stay for the whole run.
    CollectorConfig config =
        ConfigLoader.parse(
            new StringReader("grpc_port: 0\nhttp_port: 0\nsource_ttl_intervals: 100\n"),
            "scrape-size.yaml");
    CollectorServer server = new CollectorServer(config, InstantSource.system());
    server.start();
    ManagedChannel channel =
        NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort())
            .usePlaintext()
            .maxInboundMessageSize(64 << 20)
            .build();
    try {
      long heapBefore = usedHeapAfterGc();
      IngestGrpc.IngestBlockingStub stub = IngestGrpc.newBlockingStub(channel);
      long[] sequences = new long[2];
      long overflowed = feed(stub, groups / 2, depth, sequences);
      long heapAfter = usedHeapAfterGc(); // the groups' states and labels, before any scrape
      // Fed again every 2 s, as clients would: every interval has data, so the interval gauges
      // stay in the scrape.
      Thread feeder = new Thread(() -> feedOn(stub, groups / 2, depth, sequences), "feeder");
      feeder.setDaemon(true);
      feeder.start();
      String url = "http://127.0.0.1:" + server.httpPort() + "/metrics";
      HttpClient http = HttpClient.newHttpClient();
      long first = waitForIntervalGauges(http, url);

      System.out.printf(
          "groups=%d depth=%d overflowed=%d heap_held=%.1f MiB%n"
              + "  first scrape after the first interval closed: %.0f ms%n",
          groups, depth, overflowed, (heapAfter - heapBefore) / 1048576.0, first / 1e6);
      measure(http, url, "warm-up", null, false, 3);
      measure(http, url, "text", null, false, scrapes);
      measure(http, url, "text+gzip", null, true, scrapes);
      measure(http, url, "protobuf", PROTOBUF, false, scrapes);
      measure(http, url, "protobuf+gzip", PROTOBUF, true, scrapes);
      stopping.set(true);
      feeder.interrupt();
      feeder.join();
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      server.stop();
    }
  }

  /**
   * Exports {@code perInstance} paths of each of the two instances, 1000 to a delta; the entry
   * measurements that overflowed.
   */
  private static long feed(
      IngestGrpc.IngestBlockingStub stub, int perInstance, int depth, long[] sequences) {
    long overflowed = 0;
    for (int instance = 0; instance < 2; instance++) {
      for (int from = 0; from < perInstance; from += 1000) {
        Delta d =
            delta(instance, ++sequences[instance], from, Math.min(perInstance, from + 1000), depth);
        ExportResponse r = stub.withDeadlineAfter(60, TimeUnit.SECONDS).export(d);
        overflowed += r.getEntriesOverflowed();
      }
    }
    return overflowed;
  }

  /** {@link #feed} every 2 s until interrupted. */
  private static void feedOn(
      IngestGrpc.IngestBlockingStub stub, int perInstance, int depth, long[] sequences) {
    try {
      while (true) {
        Thread.sleep(2000);
        feed(stub, perInstance, depth, sequences);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      if (!stopping.get()) { // else the call was cut by the interrupt that stops the feeder
        System.err.println("feeding failed: " + e);
      }
    }
  }

  /**
   * Scrapes until the interval gauges of the region scheme are there (an interval has closed); the
   * nanoseconds that scrape took, which computed the region analysis of that interval.
   */
  private static long waitForIntervalGauges(HttpClient http, String url) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (System.nanoTime() < deadline) {
      long start = System.nanoTime();
      String body =
          http.send(
                  HttpRequest.newBuilder(URI.create(url)).build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      long took = System.nanoTime() - start;
      if (body.contains("profold_region_time_interval_values{")) {
        return took;
      }
      Thread.sleep(500);
    }
    throw new IllegalStateException("no interval closed within 120 s");
  }

  private static void measure(
      HttpClient http, String url, String what, String accept, boolean gzip, int scrapes)
      throws IOException, InterruptedException {
    long[] nanos = new long[scrapes];
    long bytes = 0;
    long decoded = 0;
    long lines = 0;
    for (int i = 0; i < scrapes; i++) {
      HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url));
      if (accept != null) {
        b.header("Accept", accept);
      }
      if (gzip) {
        b.header("Accept-Encoding", "gzip");
      }
      long start = System.nanoTime();
      HttpResponse<byte[]> r = http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
      nanos[i] = System.nanoTime() - start;
      if (r.statusCode() != 200) {
        throw new IllegalStateException(what + ": status " + r.statusCode());
      }
      byte[] body = r.body();
      bytes = body.length;
      byte[] plain = body;
      if (r.headers().firstValue("Content-Encoding").orElse("").equals("gzip")) {
        try (InputStream in = new GZIPInputStream(new java.io.ByteArrayInputStream(body))) {
          plain = in.readAllBytes();
        }
      } else if (gzip) {
        throw new IllegalStateException(what + ": asked for gzip, got none");
      }
      decoded = plain.length;
      lines = 0;
      for (byte c : plain) {
        if (c == '\n') {
          lines++;
        }
      }
      String type = r.headers().firstValue("Content-Type").orElse("");
      if (accept != null && !type.startsWith("application/vnd.google.protobuf")) {
        throw new IllegalStateException(what + ": asked for protobuf, got " + type);
      }
    }
    Arrays.sort(nanos);
    System.out.printf(
        "  %-14s %7.1f MiB on the wire, %7.1f MiB decoded%s, median %5.0f ms (min %.0f, max %.0f)%n",
        what,
        bytes / 1048576.0,
        decoded / 1048576.0,
        accept == null ? String.format(", %d lines", lines) : "",
        nanos[scrapes / 2] / 1e6,
        nanos[0] / 1e6,
        nanos[scrapes - 1] / 1e6);
  }

  private static long usedHeapAfterGc() throws InterruptedException {
    Runtime rt = Runtime.getRuntime();
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(100);
    }
    return rt.totalMemory() - rt.freeMemory();
  }

  /**
   * A self-contained delta of {@code instance}: paths {@code from..to-1} of {@code depth} frames,
   * the first {@code depth - 2} shared, then branch {@code p / 100} and leaf {@code p % 100}.
   */
  private static Delta delta(int instance, long sequence, int from, int to, int depth) {
    long now = System.currentTimeMillis() * 1_000_000L;
    Delta.Builder d =
        Delta.newBuilder()
            .setSequence(sequence)
            .setIntervalStartUnixNanos(now - 1_000_000_000L)
            .setIntervalEndUnixNanos(now)
            .setSource(
                SourceIdentity.newBuilder()
                    .setService("shop")
                    .setInstance("shop-" + instance)
                    .setHost("host-" + instance)
                    .setPid(1000 + instance)
                    .setRuntimeVersion("17")
                    .setSdkVersion("0.1.0")
                    .setIncarnationId(0x5CA9E000L + instance)
                    .setProcessStartUnixNanos(now - 3_600_000_000_000L));
    Dictionary.Builder dict = BenchData.regionAndTime();
    Ids ids = new Ids();
    int parent = 0;
    for (int level = 0; level < depth - 2; level++) {
      parent = node(dict, ids, parent, BenchData.callFrame(level, 0));
    }
    int lastBranch = -1;
    int branchNode = 0;
    for (int p = from; p < to; p++) {
      if (p / 100 != lastBranch) {
        lastBranch = p / 100;
        branchNode = node(dict, ids, parent, BenchData.callFrame(depth - 2, lastBranch));
      }
      int leaf = node(dict, ids, branchNode, BenchData.callFrame(depth - 1, p % 100));
      d.addEntries(
          Entry.newBuilder()
              .addKey(AttributeValue.newBuilder().setAttributeId(REGION).setPathNodeId(leaf))
              .addMeasurements(
                  Measurement.newBuilder()
                      .setAttributeId(TIME)
                      .setState(WireStates.toProto(BenchData.aggregate(p)))));
    }
    return d.setDictionary(dict).build();
  }

  private static int node(Dictionary.Builder dict, Ids ids, int parent, String name) {
    int id = ids.next++;
    dict.putStrings(id, name);
    dict.addPathNodes(
        PathNode.newBuilder()
            .setId(id)
            .setParentId(parent)
            .setAttributeId(REGION)
            .setNameId(id)
            .setKind(RegionKind.REGION_KIND_COMPUTE));
    return id;
  }

  /** The next free dictionary id of one delta. */
  private static final class Ids {
    int next = 1;
  }
}
