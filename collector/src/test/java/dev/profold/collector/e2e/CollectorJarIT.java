package dev.profold.collector.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.proto.v1.Ack;
import dev.profold.proto.v1.AckResult;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.IngestGrpc;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ValueType;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.WireStates;
import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.stub.StreamObserver;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * End to end with the built jar: starts {@code profold.jar collector} on ephemeral ports, pushes
 * deltas with a real gRPC client (Java, and Python built from our .proto), scrapes /metrics over
 * HTTP and checks exact values, lints the exposition with {@code promtool}, and stops the daemon
 * with SIGTERM.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class CollectorJarIT {
  private JarDaemon d;
  private Process daemon;
  private Path jar;
  private Path stderr;
  private int grpcPort;
  private int httpPort;
  private ManagedChannel channel;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeAll
  void startDaemon() throws Exception {
    d = JarDaemon.start("--interval", "60s");
    jar = JarDaemon.jar();
    daemon = d.process;
    stderr = d.stderr;
    grpcPort = d.grpcPort;
    httpPort = d.httpPort;
    channel = d.channel;
  }

  @AfterAll
  void stopDaemon() {
    if (d != null) {
      d.kill();
    }
  }

  private String scrape() throws Exception {
    return d.scrape();
  }

  private static long nowNanos() {
    Instant t = Instant.now();
    return t.getEpochSecond() * 1_000_000_000L + t.getNano();
  }

  @Test
  @Order(2)
  void aClientThatStallsInTheMiddleOfARequestIsDisconnected() throws Exception {
    // The JDK server would otherwise keep a serving thread reading it forever; the daemon sets a
    // request time limit of 10 s (CollectorServer.MAX_REQUEST_SECONDS).
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", httpPort)) {
      s.setSoTimeout(40_000);
      s.getOutputStream().write("GET /metr".getBytes(StandardCharsets.US_ASCII));
      s.getOutputStream().flush();
      int read;
      try {
        read = s.getInputStream().read();
      } catch (java.net.SocketException reset) {
        read = -1; // closed by the server: a reset is as good as an end of stream
      }
      assertThat(read).as("the server closed the stalled connection").isEqualTo(-1);
    }
  }

  @Test
  @Order(1)
  void healthAndReadiness() throws Exception {
    for (String path : List.of("/healthz", "/readyz")) {
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + path)).build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).as(path).isEqualTo(200);
    }
  }

  @Test
  @Order(1)
  void grpcHealthAndReflectionAreOn() throws Exception {
    HealthCheckResponse health =
        HealthGrpc.newBlockingStub(channel)
            .withDeadlineAfter(10, TimeUnit.SECONDS)
            .check(HealthCheckRequest.newBuilder().setService("profold.v1.Ingest").build());
    assertThat(health.getStatus()).isEqualTo(HealthCheckResponse.ServingStatus.SERVING);

    LinkedBlockingQueue<ServerReflectionResponse> answers = new LinkedBlockingQueue<>();
    StreamObserver<ServerReflectionRequest> ask =
        ServerReflectionGrpc.newStub(channel)
            .serverReflectionInfo(
                new StreamObserver<>() {
                  @Override
                  public void onNext(ServerReflectionResponse r) {
                    answers.add(r);
                  }

                  @Override
                  public void onError(Throwable t) {}

                  @Override
                  public void onCompleted() {}
                });
    ask.onNext(ServerReflectionRequest.newBuilder().setListServices("").build());
    ServerReflectionResponse listed = answers.poll(10, TimeUnit.SECONDS);
    ask.onCompleted();
    assertThat(listed).isNotNull();
    assertThat(listed.getListServicesResponse().getServiceList())
        .extracting(s -> s.getName())
        .contains("profold.v1.Ingest", "profold.v1.Query", "grpc.health.v1.Health");
  }

  @Test
  @Order(2)
  void pushedValuesAppearExactlyInMetrics() throws Exception {
    DeltaEncoder enc =
        new DeltaEncoder(
            SourceIdentity.newBuilder()
                .setService("e2e")
                .setInstance("java-1")
                .setIncarnationId(42)
                .setProcessStartUnixNanos(nowNanos() - 1_000_000_000L)
                .build());
    int region = enc.dimension("region", ValueType.VALUE_TYPE_PATH);
    int time = enc.measurement("time", ValueType.VALUE_TYPE_DOUBLE, "seconds");
    int main = enc.pathNode(0, region, "main", RegionKind.REGION_KIND_COMPUTE);
    int query = enc.pathNode(main, region, "db.query", RegionKind.REGION_KIND_IO);
    Aggregate a = new Aggregate();
    for (double v : new double[] {0.25, 0.5, 0.5, 3.0}) {
      a.record(v);
    }
    long end = nowNanos();
    Delta delta =
        enc.prepare(
                Delta.newBuilder()
                    .setSequence(1)
                    .setIntervalStartUnixNanos(end - 1_000_000_000L)
                    .setIntervalEndUnixNanos(end)
                    .addEntries(
                        Entry.newBuilder()
                            .addKey(
                                AttributeValue.newBuilder()
                                    .setAttributeId(region)
                                    .setPathNodeId(query))
                            .addMeasurements(
                                Measurement.newBuilder()
                                    .setAttributeId(time)
                                    .setState(WireStates.toProto(a)))))
            .build();
    LinkedBlockingQueue<Object> acks = new LinkedBlockingQueue<>();
    StreamObserver<Delta> stream =
        IngestGrpc.newStub(channel)
            .push(
                new StreamObserver<>() {
                  @Override
                  public void onNext(Ack ack) {
                    acks.add(ack);
                  }

                  @Override
                  public void onError(Throwable t) {
                    acks.add(t);
                  }

                  @Override
                  public void onCompleted() {
                    acks.add("completed");
                  }
                });
    stream.onNext(delta);
    stream.onNext(delta); // a retry: acked as duplicate, not applied twice
    Object first = acks.poll(10, TimeUnit.SECONDS);
    Object second = acks.poll(10, TimeUnit.SECONDS);
    assertThat(first).isInstanceOf(Ack.class);
    assertThat(((Ack) first).getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);
    assertThat(((Ack) second).getResult()).isEqualTo(AckResult.ACK_RESULT_DUPLICATE);
    stream.onCompleted();
    assertThat(acks.poll(10, TimeUnit.SECONDS)).isEqualTo("completed");

    String metrics = scrape();
    String labels = "instance=\"java-1\",kind=\"io\",path=\"main/db.query\",service=\"e2e\"";
    assertThat(metrics)
        .contains("profold_region_time_seconds_count{" + labels + "} 4\n")
        .contains("profold_region_time_seconds_sum{" + labels + "} 4.25\n")
        // Classic buckets at powers of two: (0.125,0.25] 1, (0.25,0.5] 2, (2,4] 1.
        .contains("profold_region_time_seconds_bucket{" + labels + ",le=\"0.25\"} 1\n")
        .contains("profold_region_time_seconds_bucket{" + labels + ",le=\"0.5\"} 3\n")
        .contains("profold_region_time_seconds_bucket{" + labels + ",le=\"2.0\"} 3\n")
        .contains("profold_region_time_seconds_bucket{" + labels + ",le=\"4.0\"} 4\n")
        .contains("profold_region_time_seconds_bucket{" + labels + ",le=\"+Inf\"} 4\n")
        .contains("profold_deltas_applied_total 1.0\n")
        .contains("profold_deltas_duplicate_total 1.0\n")
        .contains("profold_source_info{host=\"\",instance=\"java-1\"");
  }

  /** Runs {@code profold.jar ARGS...} to its end; returns exit code, stdout and stderr. */
  private ExternalTools.Result jar(List<String> args, Path stderrFile) throws Exception {
    List<String> command = new ArrayList<>(List.of(JarDaemon.javaBin(), "-jar", jar.toString()));
    command.addAll(args);
    // stdout to a file, not a pipe read to its end, so that the timeout applies to a hung run
    Path stdout = Files.createTempFile("profold-jar", ".out");
    try {
      Process p =
          new ProcessBuilder(command)
              .redirectError(stderrFile.toFile())
              .redirectOutput(stdout.toFile())
              .start();
      boolean ended = p.waitFor(60, TimeUnit.SECONDS);
      if (!ended) {
        p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
      String out = new String(Files.readAllBytes(stdout), StandardCharsets.UTF_8);
      assertThat(ended).as("%s ended; it printed:%n%s", args, out).isTrue();
      return new ExternalTools.Result(p.exitValue(), out);
    } finally {
      Files.deleteIfExists(stdout);
    }
  }

  @Test
  @Order(3)
  void queryCommandAgainstTheRunningJar() throws Exception {
    Path err = Files.createTempFile("profold-query", ".err");
    ExternalTools.Result ok =
        jar(
            List.of(
                "query",
                "--collector",
                "127.0.0.1:" + grpcPort,
                "-q",
                "SELECT path, count(), sum(time), max(time) WHERE service=e2e GROUP BY path",
                "--format",
                "json"),
            err);
    assertThat(ok.exitCode()).as("stderr: %s", Files.readString(err)).isZero();
    JsonNode rows = new ObjectMapper().readTree(ok.output());
    assertThat(rows).hasSize(1);
    assertThat(rows.get(0).get("path").textValue()).isEqualTo("main/db.query");
    assertThat(rows.get(0).get("count").longValue()).isEqualTo(4);
    assertThat(rows.get(0).get("sum#time").doubleValue()).isEqualTo(4.25);
    assertThat(rows.get(0).get("max#time").doubleValue()).isEqualTo(3.0);

    ExternalTools.Result unknown =
        jar(List.of("query", "--collector", "127.0.0.1:" + grpcPort, "--scheme", "nope"), err);
    assertThat(unknown.exitCode()).isEqualTo(2);
    assertThat(Files.readString(err))
        .isEqualTo("profold: unknown scheme 'nope'; schemes: region" + System.lineSeparator());

    HttpResponse<String> http200 =
        http.send(
            HttpRequest.newBuilder(
                    URI.create(
                        "http://127.0.0.1:"
                            + httpPort
                            + "/api/v1/query?format=csv&q="
                            + URLEncoder.encode(
                                "SELECT count() WHERE service=e2e", StandardCharsets.UTF_8)))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(http200.statusCode()).isEqualTo(200);
    assertThat(http200.body()).isEqualTo("count\r\n4\r\n");
  }

  @Test
  @Order(3)
  void exposationPassesPromtool() throws Exception {
    Path promtool = ExternalTools.find("promtool", "prometheus");
    Path file = Files.createTempFile("profold-metrics", ".txt");
    Files.writeString(file, scrape());
    ExternalTools.Result r =
        ExternalTools.run(
            List.of(promtool.toString(), "check", "metrics"), file, Duration.ofSeconds(30));
    assertThat(r.exitCode()).as("promtool check metrics output:%n%s", r.output()).isZero();
  }

  @Test
  @Order(4)
  void pythonClientBuiltFromOurProtoPushesAndItsValuesAppear() throws Exception {
    Path python = ExternalTools.pythonWithGrpc();
    Path work = Files.createTempDirectory("profold-py");
    Path include =
        ExternalTools.extractResource("google/rpc/status.proto", work.resolve("include"));
    Path protoRoot = Path.of(System.getProperty("profold.protoRoot", "../proto/src/main/proto"));
    List<String> base =
        List.of(
            python.toString(),
            "src/test/python/profold_push.py",
            "--target",
            "127.0.0.1:" + grpcPort,
            "--proto-root",
            protoRoot.toString(),
            "--include",
            include.toString(),
            "--out-dir",
            work.resolve("gen").toString(),
            "--service",
            "py-service",
            "--instance",
            "py-1");
    ExternalTools.Result ok = ExternalTools.run(base, null, Duration.ofSeconds(60));
    assertThat(ok.exitCode()).as("python client output:%n%s", ok.output()).isZero();
    assertThat(ok.output()).contains("ACK_RESULT_APPLIED");

    List<String> bad = new ArrayList<>(base);
    bad.add("--bad");
    ExternalTools.Result rejected = ExternalTools.run(bad, null, Duration.ofSeconds(60));
    assertThat(rejected.exitCode()).as("python --bad output:%n%s", rejected.output()).isZero();
    assertThat(rejected.output())
        .contains("ACK_RESULT_REJECTED")
        .contains("entries[1].measurements[0].attribute_id");

    String metrics = scrape();
    String labels = "instance=\"py-1\",kind=\"compute\",path=\"main\",service=\"py-service\"";
    assertThat(metrics)
        .contains("profold_region_time_seconds_count{" + labels + "} 4\n")
        .contains("profold_region_time_seconds_sum{" + labels + "} 2.0\n")
        .contains("profold_region_time_seconds_bucket{" + labels + ",le=\"1.0\"} 4\n");
  }

  @Test
  @Order(5)
  void sighupWithoutAConfigFileIsLoggedAndTheDaemonRunsOn() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeFalse(
        Files.readString(stderr).contains("SIGHUP is ignored by this process"),
        "this build runs with SIGHUP ignored (under nohup), which the daemon inherits");
    Process kill = new ProcessBuilder("kill", "-HUP", Long.toString(daemon.pid())).start();
    assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!Files.readString(stderr).contains("nothing to reload")
        && System.nanoTime() < deadline) {
      java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
    }
    assertThat(Files.readString(stderr)).contains("SIGHUP received").contains("nothing to reload");
    assertThat(daemon.isAlive()).isTrue();
    assertThat(scrape()).contains("profold_deltas_applied_total");
  }

  @Test
  @Order(6)
  void sigtermShutsDownCleanly() throws Exception {
    daemon.destroy(); // SIGTERM
    assertThat(daemon.waitFor(30, TimeUnit.SECONDS)).as("stopped within 30 s").isTrue();
    assertThat(daemon.exitValue()).as("128 + SIGTERM, docs/configuration.md").isEqualTo(143);
    assertThat(Files.readString(stderr))
        .contains("shutting down: applying received deltas")
        .contains("stopped")
        .doesNotContain("Exception");
  }
}
