package dev.profold.collector.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.profold.collector.config.CollectorConfig;
import dev.profold.collector.demo.DemoWorkload;
import dev.profold.collector.server.CollectorServer;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Grafana dashboard in {@code deploy/grafana}: well formed, and every query it runs is valid
 * PromQL that finds data in a real Prometheus scraping a real collector fed by the demo workload
 * (with the shipped recording rules loaded), so a renamed metric or label cannot leave a panel
 * empty unnoticed.
 */
class GrafanaDashboardTest {
  private static final Path DASHBOARD = Path.of("..", "deploy", "grafana", "profold.json");
  private static final Path RULES = Path.of("..", "deploy", "prometheus", "profold.rules.yml");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration WAIT = Duration.ofMinutes(2);

  /**
   * Queries the demo cannot fill, each with why; they must still be valid PromQL, and their metrics
   * documented in docs/metrics.md.
   */
  private static final Map<String, String> EMPTY_IN_THE_DEMO =
      Map.of(
          "profold_alert_firing", "no alert rule fires in the demo",
          "profold_client_export_deltas_merged_total", "the demo sends no export statistics",
          "profold_deltas_rejected_total", "the demo's deltas are all applied");

  @TempDir Path dir;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private static JsonNode dashboard() throws IOException {
    return JSON.readTree(Files.readString(DASHBOARD));
  }

  /** Every panel but rows. */
  private static List<JsonNode> panels(JsonNode dashboard) {
    List<JsonNode> out = new ArrayList<>();
    dashboard
        .get("panels")
        .forEach(
            p -> {
              if (!p.get("type").asText().equals("row")) {
                out.add(p);
              }
            });
    return out;
  }

  /** Each query by panel title and refId, as Prometheus would receive it. */
  private static Map<String, String> queries(JsonNode dashboard) {
    Map<String, String> out = new LinkedHashMap<>();
    for (JsonNode p : panels(dashboard)) {
      for (JsonNode t : p.get("targets")) {
        out.put(
            p.get("title").asText() + " [" + t.get("refId").asText() + "]",
            expand(t.get("expr").asText()));
      }
    }
    return out;
  }

  /** The expression with the dashboard's variables as Grafana would fill them with "All". */
  private static String expand(String expr) {
    return expr.replace("$__rate_interval", "10s")
        .replace("$__range", "30s")
        .replace("$service", ".*")
        .replace("$instance", ".*")
        .replace("$thread_group", ".*");
  }

  @Test
  void panelsAreWellFormedAndUseTheDashboardsDataSource() throws Exception {
    JsonNode d = dashboard();
    assertThat(d.get("uid").asText()).isEqualTo("profold-overview");
    assertThat(d.get("title").asText()).isEqualTo("Profold");
    List<Integer> ids = new ArrayList<>();
    List<int[]> cells = new ArrayList<>();
    for (JsonNode p : d.get("panels")) {
      ids.add(p.get("id").asInt());
      JsonNode g = p.get("gridPos");
      int x = g.get("x").asInt();
      int w = g.get("w").asInt();
      assertThat(x + w).as("%s within 24 columns", p.get("title")).isLessThanOrEqualTo(24);
      int[] cell = {x, g.get("y").asInt(), w, g.get("h").asInt()};
      for (int[] o : cells) {
        boolean overlap =
            cell[0] < o[0] + o[2]
                && o[0] < cell[0] + cell[2]
                && cell[1] < o[1] + o[3]
                && o[1] < cell[1] + cell[3];
        assertThat(overlap).as("%s overlaps another panel", p.get("title")).isFalse();
      }
      cells.add(cell);
    }
    assertThat(ids).doesNotHaveDuplicates();
    for (JsonNode p : panels(d)) {
      assertThat(p.get("datasource").get("uid").asText())
          .as("%s", p.get("title"))
          .isEqualTo("${datasource}");
      assertThat(p.get("description").asText())
          .as("%s says what it shows", p.get("title"))
          .isNotBlank();
      assertThat(p.get("targets")).as("%s", p.get("title")).isNotEmpty();
    }
    String documented = Files.readString(Path.of("..", "docs", "metrics.md"));
    Pattern name = Pattern.compile("profold_[a-z0-9_]+");
    for (String q : queries(d).values()) {
      Matcher m = name.matcher(q);
      while (m.find()) {
        String metric = m.group().replaceAll("_(bucket|sum|count)$", "");
        assertThat(documented)
            .as("%s documented in docs/metrics.md", metric)
            .containsPattern(Pattern.quote(metric) + "(?![a-z0-9_])");
      }
    }
  }

  @Test
  void everyQueryFindsDataInARealPrometheusScrapingTheDemo() throws Exception {
    Path prometheus = ExternalTools.find("prometheus", "prometheus");
    JsonNode d = dashboard();
    CollectorServer collector =
        new CollectorServer(
            CollectorConfig.defaults().withOverrides(null, 0, 0, Duration.ofSeconds(1)),
            InstantSource.system());
    collector.start();
    Process server = null;
    try (DemoWorkload demo =
        new DemoWorkload("127.0.0.1", collector.grpcPort(), Duration.ofSeconds(1))) {
      demo.start();
      int port = LocalHttp.freePort();
      server = startPrometheus(prometheus, port, collector.httpPort());
      URI api = URI.create("http://127.0.0.1:" + port);
      Process p = server;
      awaitUntil(
          "Prometheus ready", () -> LocalHttp.status(http, api.resolve("/-/ready")) == 200, p);

      Map<String, String> waiting = new LinkedHashMap<>(queries(d));
      long end = System.nanoTime() + WAIT.toNanos();
      while (!waiting.isEmpty() && System.nanoTime() < end) {
        for (var it = waiting.entrySet().iterator(); it.hasNext(); ) {
          Map.Entry<String, String> q = it.next();
          JsonNode r = query(api, q.getValue());
          assertThat(r.get("status").asText())
              .as("%s is valid PromQL: %s (%s)", q.getKey(), q.getValue(), r)
              .isEqualTo("success");
          boolean mayBeEmpty = EMPTY_IN_THE_DEMO.keySet().stream().anyMatch(q.getValue()::contains);
          if (mayBeEmpty || !r.get("data").get("result").isEmpty()) {
            it.remove();
          }
        }
        if (!server.isAlive()) {
          fail("Prometheus exited:\n" + Files.readString(dir.resolve("prometheus.log")));
        }
        TimeUnit.MILLISECONDS.sleep(500); // a poll tick
      }
      assertThat(waiting).as("queries still without data after %s", WAIT).isEmpty();

      for (JsonNode v : d.get("templating").get("list")) {
        if (!v.get("type").asText().equals("query")) {
          continue;
        }
        Matcher m =
            Pattern.compile("label_values\\((.+), (\\w+)\\)").matcher(v.get("definition").asText());
        assertThat(m.matches()).as("variable %s", v.get("name")).isTrue();
        JsonNode series =
            get(
                api,
                "/api/v1/series?match[]="
                    + URLEncoder.encode(expand(m.group(1)), StandardCharsets.UTF_8));
        assertThat(series.get("data"))
            .as("variable %s finds series", v.get("name"))
            .anySatisfy(s -> assertThat(s.has(m.group(2))).isTrue());
      }
    } finally {
      if (server != null) {
        server.destroy();
        if (!server.waitFor(10, TimeUnit.SECONDS)) {
          server.destroyForcibly();
        }
      }
      collector.stop();
    }
  }

  private Process startPrometheus(Path binary, int port, int collectorPort) throws IOException {
    Path config = dir.resolve("prometheus.yml");
    Files.writeString(
        config,
        """
        global:
          scrape_interval: 1s
          evaluation_interval: 1s
        rule_files: [%s]
        scrape_configs:
          - job_name: profold-collector
            honor_labels: true
            static_configs:
              - targets: ["127.0.0.1:%d"]
        """
            .formatted(RULES.toAbsolutePath().normalize(), collectorPort),
        StandardCharsets.UTF_8);
    return new ProcessBuilder(
            binary.toString(),
            "--config.file=" + config,
            "--storage.tsdb.path=" + dir.resolve("data"),
            "--web.listen-address=127.0.0.1:" + port)
        .redirectErrorStream(true)
        .redirectOutput(dir.resolve("prometheus.log").toFile())
        .start();
  }

  private JsonNode query(URI api, String expr) throws Exception {
    return get(api, "/api/v1/query?query=" + URLEncoder.encode(expr, StandardCharsets.UTF_8));
  }

  private JsonNode get(URI api, String pathAndQuery) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create(api + pathAndQuery))
                .timeout(Duration.ofSeconds(10))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    return JSON.readTree(r.body());
  }

  private interface Check {
    boolean ok() throws Exception;
  }

  private void awaitUntil(String what, Check check, Process process) throws Exception {
    long end = System.nanoTime() + WAIT.toNanos();
    while (System.nanoTime() < end) {
      if (!process.isAlive()) {
        fail("Prometheus exited:\n" + Files.readString(dir.resolve("prometheus.log")));
      }
      if (check.ok()) {
        return;
      }
      TimeUnit.MILLISECONDS.sleep(200);
    }
    fail("timed out waiting for " + what + ":\n" + Files.readString(dir.resolve("prometheus.log")));
  }
}
