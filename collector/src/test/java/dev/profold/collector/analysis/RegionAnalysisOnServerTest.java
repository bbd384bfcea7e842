package dev.profold.collector.analysis;

import static dev.profold.proto.v1.RegionKind.REGION_KIND_COMPUTE;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_IO;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.profold.collector.config.CollectorConfig;
import dev.profold.collector.config.ConfigLoader;
import dev.profold.collector.server.CollectorServer;
import dev.profold.collector.testing.Deltas;
import dev.profold.collector.testing.MutableClock;
import dev.profold.proto.v1.AckResult;
import dev.profold.proto.v1.IngestGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import java.io.StringReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A real collector: 20 instances push deltas over gRPC, one of them with slow I/O; after the
 * interval closes (injected clock) the region analysis is in /metrics and its alert rules fire.
 */
class RegionAnalysisOnServerTest {
  private static final long S = 1_000_000_000L;
  private static final String CONFIG =
      """
      grpc_port: 0
      http_port: 0
      interval: 10s
      analysis:
        top_nodes: 2
      alerts:
        rules:
          - name: InstanceOutlier
            expr: instance_outlier == 1
            annotations:
              paths: "{{ $context.separating_paths }}"
          - name: RegionImbalance
            expr: region_significant_imbalance_ratio{service="checkout"} > 0.1
            annotations:
              slowest: "{{ $context.slowest_instance }}"
      """;

  private final MutableClock clock = MutableClock.atNanos(Deltas.DEFAULT_START + 10 * S + 1);
  private final HttpClient http = HttpClient.newHttpClient();
  private CollectorServer server;

  @BeforeEach
  void start() throws Exception {
    CollectorConfig c = ConfigLoader.parse(new StringReader(CONFIG), "collector.yaml");
    server = new CollectorServer(c, clock);
    server.start();
  }

  @AfterEach
  void stop() throws Exception {
    server.stop();
  }

  private String get(String path) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + path))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(200);
    return r.body();
  }

  /**
   * Pushes one delta per instance {@code checkout-<i>} over gRPC, with {@code times[i]} the time of
   * {@code handle} and of {@code handle/db.io}, then closes the window and evaluates the rules.
   */
  private void pushAndClose(double[][] times) {
    ManagedChannel channel =
        NettyChannelBuilder.forAddress("127.0.0.1", server.grpcPort()).usePlaintext().build();
    try {
      IngestGrpc.IngestBlockingStub stub =
          IngestGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
      for (int i = 0; i < times.length; i++) {
        assertThat(
                stub.export(
                        Deltas.source("checkout", "checkout-" + i)
                            .region(1, "handle", REGION_KIND_COMPUTE)
                            .region(2, 1, "db.io", REGION_KIND_IO)
                            .entry(1, times[i][0])
                            .entry(2, times[i][1])
                            .build())
                    .getResult())
            .isEqualTo(AckResult.ACK_RESULT_APPLIED);
      }
    } finally {
      channel.shutdownNow();
    }
    clock.setNanos(Deltas.DEFAULT_START + 20 * S); // the window closes
    server.alerts().tick();
  }

  @Test
  void theSlowInstanceIsInMetricsAndAlerts() throws Exception {
    double[][] times = new double[20][];
    for (int i = 0; i < 20; i++) {
      double io = i == 4 ? 1.0 : 0.25;
      times[i] = new double[] {0.5 + io, io};
    }
    pushAndClose(times);

    String metrics = get("/metrics");
    assertThat(metrics)
        .contains("profold_instance_outlier{instance=\"checkout-4\",service=\"checkout\"} 1")
        .contains("profold_service_instance_clusters{service=\"checkout\"} 2")
        .contains(
            "profold_region_imbalance_seconds{kind=\"io\",path=\"handle/db.io\",service=\"checkout\"} 0.7125");
    // top_nodes: 2 bounds the series per service
    List<String> imbalance = new ArrayList<>();
    metrics
        .lines()
        .filter(l -> l.startsWith("profold_region_imbalance_seconds{"))
        .forEach(imbalance::add);
    assertThat(imbalance).hasSize(2);
    assertThat(metrics)
        .contains(
            "profold_alert_firing{alert=\"InstanceOutlier\",instance=\"checkout-4\",service=\"checkout\"} 1");

    JsonNode alerts = new ObjectMapper().readTree(get("/api/v1/alerts")).get("alerts");
    List<String> seen = new ArrayList<>();
    for (JsonNode a : alerts) {
      String rule = a.get("alert").asText();
      seen.add(rule + " " + a.get("labels").path("path").asText(""));
      if (rule.equals("InstanceOutlier")) {
        assertThat(a.get("annotations").get("paths").asText())
            .startsWith("handle/db.io (io): 1.000 s vs 0.250 s");
      } else {
        assertThat(a.get("annotations").get("slowest").asText()).isEqualTo("checkout-4");
      }
    }
    // imbalance 0.7125 s of a 1.5 s runtime at db.io and, inherited, at handle
    assertThat(seen)
        .containsExactlyInAnyOrder(
            "InstanceOutlier ", "RegionImbalance handle/db.io", "RegionImbalance handle");
  }

  /** One instance of twenty is slow everywhere (a bad host): an outlier, found by its time. */
  @Test
  void aSlowInstanceEverywhereIsTheOutlier() throws Exception {
    double[][] times = new double[20][];
    for (int i = 0; i < 20; i++) {
      double slow = i == 11 ? 2.0 : 1.0;
      times[i] = new double[] {slow * 0.75, slow * 0.25};
    }
    pushAndClose(times);

    String metrics = get("/metrics");
    assertThat(metrics)
        .contains("profold_instance_outlier{instance=\"checkout-11\",service=\"checkout\"} 1")
        .contains("profold_service_instance_clusters{service=\"checkout\"} 2")
        .doesNotContain("profold_instance_outlier{instance=\"checkout-1\",");
    // planted: max - avg of handle = 1.5 - (19 * 0.75 + 1.5) / 20 = 0.7125
    assertThat(metrics)
        .contains(
            "profold_region_imbalance_seconds{kind=\"compute\",path=\"handle\",service=\"checkout\"} 0.7125");
    JsonNode alerts = new ObjectMapper().readTree(get("/api/v1/alerts")).get("alerts");
    List<String> outliers = new ArrayList<>();
    for (JsonNode a : alerts) {
      if (a.get("alert").asText().equals("InstanceOutlier")) {
        outliers.add(a.get("labels").get("instance").asText());
        assertThat(a.get("annotations").get("paths").asText()).startsWith("handle");
      }
    }
    assertThat(outliers).containsExactly("checkout-11");
  }
}
