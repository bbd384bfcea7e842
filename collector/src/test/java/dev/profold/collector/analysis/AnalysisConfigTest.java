package dev.profold.collector.analysis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.collector.config.CollectorConfig;
import dev.profold.collector.config.ConfigException;
import dev.profold.collector.config.ConfigLoader;
import dev.profold.collector.config.ConfigReloader;
import dev.profold.collector.telemetry.CollectorMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The {@code analysis} key of the collector config file. */
class AnalysisConfigTest {
  private static CollectorConfig parse(String yaml) throws ConfigException {
    return ConfigLoader.parse(new StringReader(yaml), "collector.yaml");
  }

  @Test
  void defaultsArePapersThresholdsAndTenNodes() throws ConfigException {
    assertThat(parse("interval: 10s\n").analysis()).isEqualTo(new AnalysisSpec(0.001, 0.7, 10));
    assertThat(CollectorConfig.defaults().analysis()).isEqualTo(AnalysisSpec.defaults());
    assertThat(ConfigLoader.knownKeys()).contains("analysis");
  }

  @Test
  void readsEveryKey() throws ConfigException {
    AnalysisSpec a =
        parse(
                """
                analysis:
                  imbalance_runtime_share: 0.01
                  imbalance_leaf_share: 1
                  top_nodes: 25
                """)
            .analysis();
    assertThat(a).isEqualTo(new AnalysisSpec(0.01, 1.0, 25));
    assertThat(parse("analysis:\n  top_nodes: 3\n").analysis())
        .isEqualTo(new AnalysisSpec(0.001, 0.7, 3));
  }

  @Test
  void theSettingSurvivesCommandLineOverridesAndRuleReloads() throws ConfigException {
    CollectorConfig c = parse("analysis:\n  top_nodes: 3\n");
    assertThat(c.withOverrides("0.0.0.0", 1, 2, null).analysis().topNodes()).isEqualTo(3);
    assertThat(c.withAlertRules(List.of()).analysis().topNodes()).isEqualTo(3);
  }

  @Test
  void aReloadThatChangesItNeedsARestart(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("collector.yaml");
    Files.writeString(file, "analysis:\n  top_nodes: 3\n", StandardCharsets.UTF_8);
    CollectorConfig running = ConfigLoader.load(file);
    ConfigReloader reloader =
        new ConfigReloader(
            file,
            running,
            c -> c,
            (schemes, rules) -> new ConfigReloader.Kept(List.of("region"), List.of()),
            new CollectorMetrics(new SimpleMeterRegistry()));
    Files.writeString(file, "analysis:\n  top_nodes: 4\n", StandardCharsets.UTF_8);
    ConfigReloader.Outcome o = reloader.reload();
    assertThat(o.applied()).isTrue();
    assertThat(o.needRestart()).containsExactly("analysis");
    assertThat(reloader.current().analysis().topNodes()).isEqualTo(3);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "analysis: 3" + " | collector.yaml: analysis must be a mapping of keys to values",
        "analysis: {top: 3}"
            + " | collector.yaml: unknown key 'analysis.top'; known keys under analysis:"
            + " imbalance_leaf_share, imbalance_runtime_share, top_nodes",
        "analysis: {imbalance_runtime_share: 0.1%}"
            + " | collector.yaml: analysis.imbalance_runtime_share must be a fraction in 0..1:"
            + " write shares as fractions (0.001 rather than 0.1%), was 0.1%",
        "analysis: {imbalance_leaf_share: 70}"
            + " | collector.yaml: analysis.imbalance_leaf_share must be a number in 0..1, was 70",
        "analysis: {imbalance_leaf_share: high}"
            + " | collector.yaml: analysis.imbalance_leaf_share must be a number in 0..1, was high",
        "analysis: {imbalance_runtime_share: -0.5}"
            + " | collector.yaml: analysis.imbalance_runtime_share must be a number in 0..1, was"
            + " -0.5",
        "analysis: {top_nodes: 0}"
            + " | collector.yaml: analysis.top_nodes must be a whole number in 1..1000 (nodes per"
            + " service exposed for imbalance, and as many for waiting), was 0",
        "analysis: {top_nodes: 2.5}"
            + " | collector.yaml: analysis.top_nodes must be a whole number in 1..1000",
        "analysis: {top_nodes: 1001}"
            + " | collector.yaml: analysis.top_nodes must be a whole number in 1..1000",
      })
  void refusesWithTheKeyAndTheAcceptedValues(String yaml, String message) {
    assertThatThrownBy(() -> parse(yaml))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith(message);
  }
}
