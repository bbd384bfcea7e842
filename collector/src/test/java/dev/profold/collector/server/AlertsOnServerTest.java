package dev.profold.collector.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.profold.collector.analysis.DerivedValue;
import dev.profold.collector.config.CollectorConfig;
import dev.profold.collector.config.ConfigLoader;
import dev.profold.collector.testing.MutableClock;
import java.io.StringReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A real collector with alert rules over a fake derived-value source: the alerts' states reach
 * /metrics and /api/v1/alerts as the injected clock crosses interval boundaries.
 */
class AlertsOnServerTest {
  private static final String CONFIG =
      """
      grpc_port: 0
      http_port: 0
      interval: 10s
      alerts:
        rules:
          - name: LockContention
            expr: thread_class_ratio{class="sync"} > 0.2
            for: 2
            labels: {severity: page}
            annotations:
              summary: "{{ $labels.service }} spends {{ $value | percent }} of thread time in SYNC"
              paths: "{{ $context.top_paths }}"
      """;
  private static final String SERIES =
      "{alert=\"LockContention\",class=\"sync\",service=\"checkout\",severity=\"page\"} 1";

  private final MutableClock clock = MutableClock.at(Instant.parse("2026-01-01T00:00:01Z"));
  private final AtomicReference<List<DerivedValue>> values = new AtomicReference<>(List.of());
  private final HttpClient http = HttpClient.newHttpClient();
  private CollectorServer server;

  @BeforeEach
  void start() throws Exception {
    startWith(CONFIG);
  }

  private void startWith(String config) throws Exception {
    CollectorConfig c = ConfigLoader.parse(new StringReader(config), "collector.yaml");
    server = new CollectorServer(c, clock, values::get);
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

  private void nextInterval() {
    clock.advance(Duration.ofSeconds(10));
    server.alerts().tick(); // or the loop's own thread did it first: either way it is done
  }

  @Test
  void pendingFiringAndResolvedShowInMetricsAndTheAlertsApi() throws Exception {
    values.set(
        List.of(
            new DerivedValue(
                "thread_class_ratio",
                Map.of("service", "checkout", "class", "sync"),
                0.31,
                Map.of("top_paths", "handle/cart.lock"))));
    nextInterval();
    String metrics = get("/metrics");
    assertThat(metrics)
        .contains("profold_alert_pending" + SERIES)
        .doesNotContain("profold_alert_firing{");
    assertThat(metrics).contains("profold_alert_rules 1");

    nextInterval();
    metrics = get("/metrics");
    assertThat(metrics)
        .contains("profold_alert_firing" + SERIES)
        .doesNotContain("profold_alert_pending{");
    assertThat(metrics).contains("profold_alert_evaluations_total 2");
    assertThat(metrics).contains("profold_alert_notifications_total{result=\"sent\"} 0");
    JsonNode alerts = new ObjectMapper().readTree(get("/api/v1/alerts")).get("alerts");
    assertThat(alerts).hasSize(1);
    assertThat(alerts.get(0).get("state").asText()).isEqualTo("firing");
    assertThat(alerts.get(0).get("annotations").get("summary").asText())
        .isEqualTo("checkout spends 31% of thread time in SYNC");
    assertThat(alerts.get(0).get("annotations").get("paths").asText())
        .isEqualTo("handle/cart.lock");
    assertThat(alerts.get(0).get("activeAt").asText()).isEqualTo("2026-01-01T00:00:10Z");
    assertThat(alerts.get(0).get("firingSince").asText()).isEqualTo("2026-01-01T00:00:20Z");

    values.set(List.of());
    nextInterval();
    metrics = get("/metrics");
    assertThat(metrics)
        .doesNotContain("profold_alert_firing{")
        .doesNotContain("profold_alert_pending{");
    assertThat(new ObjectMapper().readTree(get("/api/v1/alerts")).get("alerts")).isEmpty();
  }

  @Test
  void anAlertKeptFiringShowsSoInMetricsAndTheAlertsApi() throws Exception {
    server.stop();
    startWith(CONFIG.replace("for: 2", "for: 1\n      keep_firing_for: 1"));
    values.set(
        List.of(
            DerivedValue.of(
                "thread_class_ratio", Map.of("service", "checkout", "class", "sync"), 0.31)));
    nextInterval(); // firing at 00:00:10
    values.set(List.of());
    nextInterval(); // its value gone at 00:00:20: kept firing for one evaluation

    assertThat(get("/metrics")).contains("profold_alert_firing" + SERIES);
    JsonNode alerts = new ObjectMapper().readTree(get("/api/v1/alerts")).get("alerts");
    assertThat(alerts).hasSize(1);
    assertThat(alerts.get(0).get("state").asText()).isEqualTo("firing");
    assertThat(alerts.get(0).get("keepFiringSince").asText()).isEqualTo("2026-01-01T00:00:20Z");
    assertThat(alerts.get(0).get("value").asDouble()).isEqualTo(0.31);

    nextInterval(); // the second evaluation without it: resolved
    assertThat(get("/metrics")).doesNotContain("profold_alert_firing{");
    assertThat(new ObjectMapper().readTree(get("/api/v1/alerts")).get("alerts")).isEmpty();
  }
}
