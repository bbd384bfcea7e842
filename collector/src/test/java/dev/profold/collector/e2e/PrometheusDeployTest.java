package dev.profold.collector.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The Prometheus side in {@code deploy/prometheus}: the scrape config and the rules load, and the
 * rules' unit tests (recorded shares, alerts firing and not firing, annotations) pass, checked by
 * Prometheus's own {@code promtool}.
 */
class PrometheusDeployTest {
  private static final Path DIR = Path.of("..", "deploy", "prometheus");

  private static void promtool(String... args) throws Exception {
    Path promtool = ExternalTools.find("promtool", "prometheus");
    List<String> command = new java.util.ArrayList<>(List.of(promtool.toString()));
    command.addAll(List.of(args));
    ExternalTools.Result r = ExternalTools.run(command, null, Duration.ofSeconds(60));
    assertThat(r.exitCode()).as("promtool %s:%n%s", String.join(" ", args), r.output()).isZero();
  }

  @Test
  void scrapeConfigIsValid() throws Exception {
    promtool("check", "config", DIR.resolve("prometheus.yml").toString());
  }

  @Test
  void rulesAreValid() throws Exception {
    promtool("check", "rules", DIR.resolve("profold.rules.yml").toString());
  }

  @Test
  void rulesPassTheirUnitTests() throws Exception {
    promtool("test", "rules", DIR.resolve("profold.rules.test.yml").toString());
  }
}
