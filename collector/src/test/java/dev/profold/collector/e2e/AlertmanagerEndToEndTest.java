package dev.profold.collector.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.profold.collector.analysis.DerivedValue;
import dev.profold.collector.config.CollectorConfig;
import dev.profold.collector.config.ConfigLoader;
import dev.profold.collector.server.CollectorServer;
import java.io.IOException;
import java.io.StringReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real Alertmanager (Debian {@code prometheus-alertmanager}) receives the collector's alerts: an
 * in-process collector (1 s interval, the system clock: Alertmanager judges {@code endsAt} by its
 * own clock) evaluates a rule over a fake derived-value source that first holds, then stops; the
 * alert shows as active in Alertmanager's {@code GET /api/v2/alerts} with its labels and rendered
 * annotations, and later leaves it (resolved). The collector's exposition, alert series included,
 * passes {@code promtool check metrics} when promtool is there.
 */
class AlertmanagerEndToEndTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final Duration TICK = Duration.ofMillis(200);
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path dir;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  @Test
  void alertArrivesAtAlertmanagerAndResolves() throws Exception {
    Path binary = ExternalTools.find("prometheus-alertmanager", "prometheus-alertmanager");
    int port = LocalHttp.freePort();
    URI am = URI.create("http://127.0.0.1:" + port);
    Process alertmanager = startAlertmanager(binary, port);
    CollectorServer collector = null;
    try {
      awaitUntil(
          "Alertmanager ready",
          () -> LocalHttp.status(http, am.resolve("/-/ready")) == 200,
          alertmanager);

      AtomicReference<List<DerivedValue>> values = new AtomicReference<>(List.of());
      CollectorConfig config =
          ConfigLoader.parse(
              new StringReader(
                  """
                  grpc_port: 0
                  http_port: 0
                  interval: 1s
                  alerts:
                    alertmanager:
                      url: %s
                      timeout: 2s
                      retries: 2
                    rules:
                      - name: LockContention
                        expr: thread_class_ratio{class="sync", service="checkout"} > 0.2
                        for: 2
                        labels: {severity: page}
                        annotations:
                          summary: "{{ $labels.service }} spends {{ $value | percent }} of thread time in SYNC"
                          paths: "{{ $context.top_paths }}"
                  """
                      .formatted(am)),
              "collector.yaml");
      collector = new CollectorServer(config, InstantSource.system(), values::get);
      collector.start();

      values.set(
          List.of(
              new DerivedValue(
                  "thread_class_ratio",
                  Map.of("service", "checkout", "class", "sync", "thread_group", "http"),
                  0.35,
                  Map.of("top_paths", "handle/cart.lock")),
              DerivedValue.of(
                  "thread_class_ratio", Map.of("service", "search", "class", "sync"), 0.9)));
      JsonNode alert =
          awaitAlert(am, a -> a.get("status").get("state").asText().equals("active"), alertmanager);
      JsonNode labels = alert.get("labels");
      assertThat(labels.get("alertname").asText()).isEqualTo("LockContention");
      assertThat(labels.get("service").asText()).isEqualTo("checkout");
      assertThat(labels.get("thread_group").asText()).isEqualTo("http");
      assertThat(labels.get("severity").asText()).isEqualTo("page");
      assertThat(alert.get("annotations").get("summary").asText())
          .isEqualTo("checkout spends 35% of thread time in SYNC");
      assertThat(alert.get("annotations").get("paths").asText()).isEqualTo("handle/cart.lock");
      assertThat(alert.get("generatorURL").asText())
          .isEqualTo("http://127.0.0.1:" + collector.httpPort() + "/api/v1/alerts");
      assertThat(alertsAt(am)).hasSize(1); // search is not selected by the rule
      lintExposition(collector);

      values.set(List.of()); // the value goes: the alert resolves and Alertmanager drops it
      awaitUntil("the alert resolved at Alertmanager", () -> alertsAt(am).isEmpty(), alertmanager);
      // At least one firing notice and the resolve notice. The notifier counts a notice once
      // Alertmanager has answered it, which may be just after Alertmanager shows the change.
      CollectorServer c = collector;
      awaitUntil("the resolve notice counted as sent", () -> sentNotices(c) >= 2, alertmanager);
      assertThat(sentNotices(collector)).isGreaterThanOrEqualTo(2);
    } finally {
      if (collector != null) {
        collector.stop();
      }
      alertmanager.destroy();
      if (!alertmanager.waitFor(10, TimeUnit.SECONDS)) {
        alertmanager.destroyForcibly();
      }
    }
  }

  private Process startAlertmanager(Path binary, int port) throws IOException {
    Path config = dir.resolve("alertmanager.yml");
    Files.writeString(
        config,
        """
        route:
          receiver: nowhere
          group_wait: 1s
        receivers:
          - name: nowhere
        """,
        StandardCharsets.UTF_8);
    Files.createDirectories(dir.resolve("data"));
    return new ProcessBuilder(
            binary.toString(),
            "--config.file=" + config,
            "--storage.path=" + dir.resolve("data"),
            "--web.listen-address=127.0.0.1:" + port,
            "--cluster.listen-address=")
        .redirectErrorStream(true)
        .redirectOutput(dir.resolve("alertmanager.log").toFile())
        .start();
  }

  private JsonNode awaitAlert(URI am, Predicate<JsonNode> ok, Process alertmanager)
      throws Exception {
    AtomicReference<JsonNode> found = new AtomicReference<>();
    awaitUntil(
        "the alert active at Alertmanager",
        () -> {
          for (JsonNode a : alertsAt(am)) {
            if (a.get("labels").get("alertname").asText().equals("LockContention") && ok.test(a)) {
              found.set(a);
              return true;
            }
          }
          return false;
        },
        alertmanager);
    return found.get();
  }

  private List<JsonNode> alertsAt(URI am) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(am.resolve("/api/v2/alerts"))
                .timeout(Duration.ofSeconds(5))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    List<JsonNode> out = new java.util.ArrayList<>();
    JSON.readTree(r.body()).forEach(out::add);
    return out;
  }

  /** Scrapes the collector while the alert fires and lints the text with promtool. */
  private void lintExposition(CollectorServer collector) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + collector.httpPort() + "/metrics"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.body())
        .contains(
            "profold_alert_firing{alert=\"LockContention\",class=\"sync\",service=\"checkout\","
                + "severity=\"page\",thread_group=\"http\"} 1");
    Path promtool = ExternalTools.find("promtool", "prometheus");
    Path file = dir.resolve("metrics.txt");
    Files.writeString(file, r.body(), StandardCharsets.UTF_8);
    ExternalTools.Result lint =
        ExternalTools.run(
            List.of(promtool.toString(), "check", "metrics"), file, Duration.ofSeconds(30));
    assertThat(lint.exitCode()).as("promtool check metrics:%n%s", lint.output()).isZero();
  }

  private static double sentNotices(CollectorServer collector) {
    return collector
        .meters()
        .find("profold.alert.notifications")
        .tag("result", "sent")
        .counter()
        .count();
  }

  @FunctionalInterface
  private interface Check {
    boolean ok() throws Exception;
  }

  /** Polls {@code check} every tick until it holds, for at most {@link #WAIT}. */
  private void awaitUntil(String what, Check check, Process alertmanager) throws Exception {
    long end = System.nanoTime() + WAIT.toNanos();
    while (System.nanoTime() < end) {
      if (!alertmanager.isAlive()) {
        fail("Alertmanager exited (" + alertmanager.exitValue() + "):\n" + log());
      }
      if (check.ok()) {
        return;
      }
      Thread.sleep(TICK.toMillis());
    }
    fail("timed out after " + WAIT + " waiting for " + what + "; Alertmanager log:\n" + log());
  }

  private String log() throws IOException {
    Path log = dir.resolve("alertmanager.log");
    return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "(no log)";
  }
}
