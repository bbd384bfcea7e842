package dev.profold.collector.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.collector.alert.AlertRule;
import dev.profold.collector.config.CollectorConfig;
import dev.profold.collector.config.ConfigLoader;
import dev.profold.collector.config.ConfigReloader;
import dev.profold.collector.scheme.SchemeDefinition;
import io.micrometer.core.instrument.Counter;
import java.io.StringReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Config reloads against a real collector: the schemes and the alert rules change together or not
 * at all, and {@link ConfigReloader#current()} is what runs. The fold thread is held through the
 * injected clock, which it reads at every tick, rather than by sleeping.
 */
class ReloadOnServerTest {
  static final String BASE =
      """
      grpc_port: 0
      http_port: 0
      interval: 10s
      alerts:
        rules:
          - name: A
            expr: thread_class_ratio{class="sync"} > 0.2
      """;
  static final String NEXT =
      BASE
          + """
                - name: B
                  expr: thread_class_ratio{class="wait"} > 0.5
            schemes:
              - name: region
              - name: kinds
                query: SELECT sum(time) GROUP BY kind
            """;

  @TempDir Path dir;
  final AtomicBoolean holdFold = new AtomicBoolean();
  final CountDownLatch foldHeld = new CountDownLatch(1);
  final CountDownLatch releaseFold = new CountDownLatch(1);
  final HttpClient http = HttpClient.newHttpClient();
  Path file;
  CollectorConfig running;
  CollectorServer server;

  /** A fixed clock that, once {@link #holdFold} is set, holds the fold thread when it reads it. */
  final InstantSource clock =
      () -> {
        // "profold-fold" is FoldWorker's thread; others (alerts, HTTP) read the clock freely.
        if (holdFold.get() && Thread.currentThread().getName().equals("profold-fold")) {
          foldHeld.countDown();
          try {
            releaseFold.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
        return Instant.parse("2026-01-01T00:00:01Z");
      };

  @BeforeEach
  void start() throws Exception {
    file = dir.resolve("collector.yaml");
    Files.writeString(file, BASE, StandardCharsets.UTF_8);
    running = ConfigLoader.load(file);
    server = new CollectorServer(running, clock);
    server.start();
  }

  @AfterEach
  void stop() throws Exception {
    releaseFold.countDown();
    server.stop();
  }

  /** The schemes the collector runs, as its query API lists them. */
  String liveSchemes() throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(
                    URI.create(
                        "http://127.0.0.1:" + server.httpPort() + "/api/v1/query?scheme=none"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).isEqualTo(404);
    return r.body().replaceAll(".*schemes: ([^\"]*)\".*", "$1").strip();
  }

  List<String> liveRules() {
    return server.alerts().rules().stream().map(AlertRule::name).toList();
  }

  double reloads(String result) {
    Counter c = server.meters().find("profold.config.reloads").tag("result", result).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void rulesThatCannotBeAppliedLeaveTheSchemesAsTheyWere() throws Exception {
    CollectorConfig next = ConfigLoader.parse(new StringReader(NEXT), "collector.yaml");
    AlertRule a = next.alerts().rules().get(0);
    // The loader refuses two rules of one name; the server's own check is what fails here.
    assertThatThrownBy(() -> server.reconfigure(next.schemeDefinitions(), List.of(a, a)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("two rules named A");
    assertThat(liveSchemes()).isEqualTo("region");
    assertThat(liveRules()).containsExactly("A");

    ConfigReloader.Kept kept = server.reconfigure(next.schemeDefinitions(), next.alerts().rules());
    assertThat(kept.schemes()).containsExactly("region");
    assertThat(kept.rules()).containsExactly("A");
    assertThat(liveSchemes()).isEqualTo("region, kinds");
    assertThat(liveRules()).containsExactly("A", "B");
  }

  @Test
  void aReloadTheFoldThreadDoesNotTakeInTimeIsRefusedAndNeverApplied() throws Exception {
    // What the daemon wires, with a timeout the held fold thread cannot meet.
    ConfigReloader reloader =
        new ConfigReloader(
            file,
            running,
            c -> c,
            (schemes, rules) -> server.reconfigure(schemes, rules, Duration.ZERO),
            server.metrics());
    holdFold.set(true);
    foldHeld.await();
    Files.writeString(file, NEXT, StandardCharsets.UTF_8);
    ConfigReloader.Outcome o = settled(reloader);
    assertThat(o.applied()).isFalse();
    assertThat(o.error())
        .contains(
            TimeoutException.class.getName()
                + ": the fold thread did not take the new schemes and rules within 0s; nothing"
                + " was changed");
    assertThat(reloads("error")).isEqualTo(1);
    assertThat(reloader.current()).isEqualTo(running);
    assertThat(liveRules()).containsExactly("A");

    holdFold.set(false);
    releaseFold.countDown();
    // The fold thread goes on with its queue: the abandoned reload is skipped, nothing applied.
    assertThat(liveSchemes()).isEqualTo("region");
    assertThat(liveRules()).containsExactly("A");
    assertThat(reloads("ok")).isZero();
  }

  @Test
  void aReloadAppliesSchemesAndRulesTogether() throws Exception {
    ConfigReloader reloader =
        new ConfigReloader(file, running, c -> c, server::reconfigure, server.metrics());
    Files.writeString(file, NEXT, StandardCharsets.UTF_8);
    ConfigReloader.Outcome o = settled(reloader);
    assertThat(o.applied()).isTrue();
    assertThat(o.kept()).containsExactly("region");
    assertThat(o.started()).containsExactly("kinds");
    assertThat(liveSchemes()).isEqualTo("region, kinds");
    assertThat(liveRules()).containsExactly("A", "B");
    assertThat(reloader.current().schemeDefinitions())
        .extracting(SchemeDefinition::name)
        .containsExactly("region", "kinds");
    assertThat(reloads("ok")).isEqualTo(1);
  }

  @Test
  void aReloadAddingAShortSchemeTicksTheFoldThreadOftenEnoughForIt() throws Exception {
    // The tick was fixed at start (1 s here): a 200 ms scheme's windows closed up to 1 s late.
    ConfigReloader reloader =
        new ConfigReloader(file, running, c -> c, server::reconfigure, server.metrics());
    assertThat(server.foldTick()).isEqualTo(Duration.ofSeconds(1));
    Files.writeString(
        file, NEXT + "  - name: fast\n    query: SELECT count()\n    interval: 200ms\n");
    assertThat(settled(reloader).started()).containsExactly("kinds", "fast");
    assertThat(server.foldTick()).isEqualTo(Duration.ofMillis(20));
  }

  /** The checks a change needs: the first sees it, the second finds it settled and loads it. */
  private static ConfigReloader.Outcome settled(ConfigReloader r) {
    assertThat(r.reloadIfChanged()).as("a change is applied once it has settled").isNull();
    return r.reloadIfChanged();
  }
}
