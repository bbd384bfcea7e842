package dev.profold.collector.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.collector.alert.AlertsSpec;
import dev.profold.collector.analysis.AnalysisSpec;
import dev.profold.collector.scheme.SchemeDefinition;
import java.io.StringReader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConfigLoaderTest {
  private static CollectorConfig parse(String yaml) throws ConfigException {
    return ConfigLoader.parse(new StringReader(yaml), "test.yaml");
  }

  @Test
  void emptyFileGivesTheDefaults() throws Exception {
    assertThat(parse("")).isEqualTo(CollectorConfig.defaults());
  }

  @Test
  void theShippedSampleConfigIsValidAndEqualsTheDefaults() throws Exception {
    assertThat(ConfigLoader.load(Path.of("../deploy/collector.yaml")))
        .isEqualTo(CollectorConfig.defaults());
  }

  @Test
  void everyKeyOverridesItsDefault() throws Exception {
    CollectorConfig c =
        parse(
            """
            listen: 0.0.0.0
            grpc_port: 9000
            http_port: 9001
            interval: 500ms
            source_ttl_intervals: 7
            cardinality_limit: 12
            histogram_max_scale: 5
            retry_delay: 2s
            shutdown_timeout: 1m
            limits:
              max_message_bytes: 64KiB
              max_pending_bytes: 2MiB
              dictionary_entries: 99
              stream_ids: 4321
              max_sources: 3
            schemes:
              - name: region
              - name: by_tenant
                query: SELECT sum(time) WHERE kind=io GROUP BY service, tenant
                interval: 1m
                cardinality_limit: 500
                retention: 60
            """);
    assertThat(c)
        .isEqualTo(
            new CollectorConfig(
                "0.0.0.0",
                9000,
                9001,
                Duration.ofMillis(500),
                7,
                12,
                5,
                64 * 1024,
                2L * 1024 * 1024,
                99,
                4321,
                3,
                Duration.ofSeconds(2),
                Duration.ofMinutes(1),
                List.of(
                    SchemeSpec.builtIn(),
                    new SchemeSpec(
                        "by_tenant",
                        "SELECT sum(time) WHERE kind=io GROUP BY service, tenant",
                        Duration.ofMinutes(1),
                        500,
                        60)),
                ArchiveSpec.off(),
                AlertsSpec.none(),
                AnalysisSpec.defaults()));
    // Settings a scheme leaves out follow the collector's.
    assertThat(c.schemeDefinitions().get(0).interval()).isEqualTo(Duration.ofMillis(500));
    assertThat(c.schemeDefinitions().get(0).cardinalityLimit()).isEqualTo(12);
    assertThat(c.schemeDefinitions().get(1).interval()).isEqualTo(Duration.ofMinutes(1));
  }

  @Test
  void archiveNamesADirectoryAndExistingSchemes() throws Exception {
    CollectorConfig c = parse("archive:\n  directory: data/archive\n  schemes: [region]\n");
    assertThat(c.archive()).isEqualTo(new ArchiveSpec(Path.of("data/archive"), List.of("region")));
    assertThat(c.archive().enabled()).isTrue();
    assertThat(parse("interval: 5s").archive().enabled()).isFalse();
    assertThatThrownBy(() -> parse("archive:\n  directory: d\n  schemes: [nope]\n"))
        .hasMessage("test.yaml: archive.schemes: 'nope' is not a scheme; the schemes are: region");
    assertThatThrownBy(() -> parse("archive:\n  schemes: [region]\n"))
        .hasMessageContaining("archive.directory is required");
  }

  @Test
  void withoutSchemesTheBuiltInOneRuns() throws Exception {
    CollectorConfig c = parse("interval: 5s");
    assertThat(c.schemeDefinitions()).hasSize(1);
    SchemeDefinition d = c.schemeDefinitions().get(0);
    assertThat(d.name()).isEqualTo("region");
    assertThat(d.labelNames()).containsExactly("service", "instance", "path", "kind");
    assertThat(d.interval()).isEqualTo(Duration.ofSeconds(5));
    assertThat(d.retention()).isEqualTo(360);
  }

  @Test
  void badSchemesNameTheSchemeThePositionAndTheFix() {
    assertThatThrownBy(
            () ->
                parse(
                    """
                    schemes:
                      - name: region
                      - name: by_tenant
                        query: SELECT sum(time) GROUP BY tenant WHERE
                    """))
        .isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("test.yaml: schemes[1]: scheme 'by_tenant': query at column ")
        .hasMessageContaining("expected");
    assertThatThrownBy(() -> parse("schemes:\n  - name: x1\n"))
        .hasMessageContaining("schemes[0] ('x1'): 'query' is required");
    assertThatThrownBy(() -> parse("schemes:\n  - name: Bad-Name\n    query: SELECT count()\n"))
        .hasMessageContaining("schemes[0]: scheme name 'Bad-Name' must be lower-case");
    assertThatThrownBy(() -> parse("schemes:\n  - name: deltas\n    query: SELECT count()\n"))
        .hasMessageContaining("the name is taken by the collector's own metrics");
    assertThatThrownBy(
            () ->
                parse(
                    "schemes:\n  - name: region\n  - name: thread\n"
                        + "    query: SELECT sum(time) GROUP BY service\n"))
        .hasMessage(
            "test.yaml: schemes[1]: scheme 'thread': the name is taken by the collector's own"
                + " metrics (profold_thread_groups_evicted_total): the scheme's metrics are named"
                + " profold_thread_<measurement>..., and one named like these would fail every"
                + " /metrics scrape; rename the scheme, for example to 'thread_scheme'");
    assertThatThrownBy(
            () ->
                parse(
                    "schemes:\n  - name: a\n    query: SELECT count()\n"
                        + "  - name: a\n    query: SELECT count()\n"))
        .hasMessageContaining("schemes[1]: a scheme named 'a' is defined twice");
    assertThatThrownBy(
            () -> parse("schemes:\n  - name: a\n    query: SELECT count()\n    keep: 3\n"))
        .hasMessageContaining("unknown key 'schemes[0].keep'");
    assertThatThrownBy(
            () -> parse("schemes:\n  - name: a\n    query: SELECT count()\n    retention: 0\n"))
        .hasMessageContaining("schemes[0]: 'retention' must be in 1..1000000, was 0");
    assertThatThrownBy(
            () -> parse("schemes:\n  - name: a\n    query: SELECT count()\n    interval: 5x\n"))
        .hasMessageContaining("schemes[0]: 'interval' must be a duration");
    assertThatThrownBy(() -> parse("schemes: []"))
        .hasMessageContaining("'schemes' must be a non-empty list");
    assertThatThrownBy(
            () ->
                parse(
                    "schemes:\n  - name: a\n    query: SELECT x GROUP BY x LET y=truncate(x,2)\n"))
        .hasMessageContaining("LET is not supported in schemes");
    assertThatThrownBy(() -> parse("schemes:\n  - name: a\n    query: SELECT *\n"))
        .hasMessageContaining("query must aggregate");
  }

  @Test
  void unknownKeyIsRefusedWithTheKnownOnes() {
    assertThatThrownBy(() -> parse("intervall: 10s"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("test.yaml: unknown key 'intervall'")
        .hasMessageContaining("interval");
    assertThatThrownBy(() -> parse("limits:\n  max_bytes: 1"))
        .hasMessageContaining("unknown key 'limits.max_bytes'")
        .hasMessageContaining("max_message_bytes");
  }

  @Test
  void badValuesSayWhatIsExpected() {
    assertThatThrownBy(() -> parse("interval: 10"))
        .hasMessageContaining("'interval' must be a duration such as 500ms, 10s, 1m or 1h, was 10");
    assertThatThrownBy(() -> parse("interval: 5ms"))
        .hasMessageContaining("'interval' must be at least 100ms");
    assertThatThrownBy(() -> parse("grpc_port: 70000"))
        .hasMessageContaining("'grpc_port' must be in 0..65535, was 70000");
    assertThatThrownBy(() -> parse("grpc_port: abc"))
        .hasMessageContaining("'grpc_port' must be a whole number");
    assertThatThrownBy(() -> parse("source_ttl_intervals: 2"))
        .hasMessageContaining("'source_ttl_intervals' must be in 3..");
    assertThatThrownBy(() -> parse("limits:\n  max_pending_bytes: lots"))
        .hasMessageContaining("'limits.max_pending_bytes' must be a byte size");
    // Named by their path, as the size limits are (it said 'max_sources', a key not at the top).
    assertThatThrownBy(() -> parse("limits:\n  max_sources: 0"))
        .hasMessageContaining("'limits.max_sources' must be in 1..10000000, was 0");
    assertThatThrownBy(() -> parse("limits:\n  dictionary_entries: many"))
        .hasMessageContaining("'limits.dictionary_entries' must be a whole number in 1..");
    assertThatThrownBy(() -> parse("listen: ''"))
        .hasMessageContaining("'listen' must be a non-empty string");
    assertThatThrownBy(() -> parse("- a\n- b")).hasMessageContaining("must be a mapping");
  }

  @Test
  void numbersTooLargeForADurationOrSizeAreRefusedWithTheLimit() {
    // Each once escaped as a NumberFormatException or ArithmeticException (a stack trace, or a
    // reload silently not done), or wrapped around to a small value that was accepted.
    assertThatThrownBy(() -> parse("interval: 99999999999999999999s"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("'interval' must be at most 100000h, was 99999999999999999999s");
    assertThatThrownBy(() -> parse("interval: 3000000h")) // beyond a long of nanoseconds
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("'interval' must be at most 100000h, was 3000000h");
    assertThatThrownBy(() -> parse("shutdown_timeout: 9223372036854775807h"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("'shutdown_timeout' must be at most 100000h");
    assertThatThrownBy(
            () ->
                parse(
                    "schemes:\n  - name: a\n    query: SELECT count()\n    interval: 999999999999m\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("schemes[0]: 'interval' must be at most 100000h");
    assertThatThrownBy(() -> parse("limits:\n  max_pending_bytes: 17179869185GiB")) // 2^64 + 1 GiB
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(
            "'limits.max_pending_bytes' must be in 1024..1099511627776 bytes, was 17179869185GiB");
    assertThatThrownBy(() -> parse("limits:\n  max_pending_bytes: 99999999999999999999"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(
            "'limits.max_pending_bytes' must be in 1024..1099511627776 bytes, was"
                + " 99999999999999999999");
    assertThatThrownBy(
            () ->
                parse("alerts: {alertmanager: {url: 'http://am', timeout: 99999999999999999999s}}"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("alerts.alertmanager.timeout must be");
  }

  @Test
  void yamlSyntaxErrorsCarryLineAndColumn() {
    assertThatThrownBy(() -> parse("interval: 10s\nlisten: [unclosed"))
        .isInstanceOf(ConfigException.class)
        .hasMessageMatching("test\\.yaml:\\d+:\\d+: not valid YAML: .*");
  }

  @Test
  void missingFileIsAClearError() {
    assertThatThrownBy(() -> ConfigLoader.load(Path.of("does-not-exist.yaml")))
        .hasMessage(
            "no such file: does-not-exist.yaml (the config file; check the path given to"
                + " --config)");
  }

  @Test
  void aDirectoryANonUtf8FileASelfReferringAliasAndABadArchivePathEachGetOneLine(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    assertThatThrownBy(() -> ConfigLoader.load(dir))
        .isInstanceOf(ConfigException.class)
        .hasMessageEndingWith(
            "is a directory; --config takes the config file (such as collector.yaml)");
    java.nio.file.Path latin1 = dir.resolve("latin1.yaml");
    java.nio.file.Files.write(
        latin1, new byte[] {'l', 'i', 's', 't', 'e', 'n', ':', ' ', (byte) 0xE9});
    assertThatThrownBy(() -> ConfigLoader.load(latin1))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("not UTF-8 text")
        .hasMessageEndingWith("save the file as UTF-8");
    assertThatThrownBy(() -> parse("listen: &a [[*a]]\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "test.yaml:1: 'listen[0][0]' refers back to a value that contains it (an alias"
                + " inside its own anchor, such as a: &x [*x]); write the values out");
    assertThatThrownBy(() -> parse("archive:\n  directory: \"a\\0b\"\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining("archive.directory is not a valid path");
  }
}
