package dev.profold.collector.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * A key given twice in one mapping is refused with the file, the line and column of the second, the
 * key's path and the line of the first, rather than the last one silently winning.
 */
class DocumentChecksTest {
  private static CollectorConfig parse(String yaml) throws ConfigException {
    return ConfigLoader.parse(new StringReader(yaml), "collector.yaml");
  }

  @Test
  void numbersYamlWouldReadOtherThanWrittenAreRefused() throws Exception {
    // YAML 1.1: before, grpc_port: 07763 listened on 4083, and retention: 1:00 kept 60.
    assertThatThrownBy(() -> parse("grpc_port: 07763\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "collector.yaml:1:12: 'grpc_port' is 07763, which YAML reads as an octal number;"
                + " write the decimal number without a leading 0, or quote it if it is text");
    assertThatThrownBy(() -> parse("schemes:\n  - name: region\n    retention: 1:00\n"))
        .hasMessageStartingWith(
            "collector.yaml:3:16: 'schemes[0].retention' is 1:00, which YAML reads as a number in"
                + " base 60");
    assertThat(parse("grpc_port: 0\nhttp_port: 7764\n").grpcPort()).isZero();
    assertThat(parse("listen: '010'\n").listen()).as("quoted: text").isEqualTo("010");
  }

  @Test
  void aKeyWithoutAValueIsRefusedNotTakenForTheDefault() {
    // alertmanager: with its url commented out sent alerts nowhere, and listen: ${LISTEN} with the
    // variable unset bound 127.0.0.1, without a word.
    assertThatThrownBy(
            () ->
                parse(
                    """
                    alerts:
                      alertmanager:
                      #  url: http://alertmanager:9093
                    """))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "collector.yaml:2:3: 'alerts.alertmanager' has no value (a key with nothing after it,"
                + " or with all it held commented out; or an unset variable substituted into the"
                + " file); give it one, or remove the key to use the default");
    assertThatThrownBy(() -> parse("listen:\ngrpc_port: 0\n"))
        .hasMessageStartingWith("collector.yaml:1:1: 'listen' has no value");
    assertThatThrownBy(() -> parse("schemes:\n  - name: io\n    cardinality_limit: ~\n"))
        .hasMessageStartingWith("collector.yaml:3:5: 'schemes[0].cardinality_limit' has no value");
  }

  @Test
  void aTopLevelKeyGivenTwiceIsRefused() {
    assertThatThrownBy(() -> parse("interval: 10s\ngrpc_port: 0\ninterval: 1m\n"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "collector.yaml:3:1: 'interval' is given twice (first at line 1); YAML would keep"
                + " only the last, so remove one of them");
  }

  @Test
  void aNestedKeyGivenTwiceIsRefusedWithItsPath() {
    assertThatThrownBy(
            () ->
                parse(
                    """
                    limits:
                      max_message_bytes: 1MiB
                      dictionary_entries: 1000
                      max_message_bytes: 4MiB
                    """))
        .hasMessage(
            "collector.yaml:4:3: 'limits.max_message_bytes' is given twice (first at line 2);"
                + " YAML would keep only the last, so remove one of them");
    assertThatThrownBy(
            () ->
                parse(
                    """
                    schemes:
                      - name: region
                      - name: by_service
                        query: SELECT sum(time) GROUP BY service
                        query: SELECT count() GROUP BY service
                    """))
        .hasMessageStartingWith("collector.yaml:5:5: 'schemes[1].query' is given twice")
        .hasMessageContaining("(first at line 4)");
    assertThatThrownBy(() -> parse("alerts: {rules: [{name: A, name: B, expr: 'x > 1'}]}\n"))
        .hasMessageStartingWith("collector.yaml:1:28: 'alerts.rules[0].name' is given twice");
  }

  @Test
  void theSameKeyInDifferentMappingsAndMergeKeysAreFine() throws Exception {
    CollectorConfig c =
        parse(
            """
            interval: 5s
            schemes:
              - name: region
                interval: 10s
              - &base
                name: by_service
                query: SELECT sum(time) GROUP BY service
              - <<: *base
                name: by_instance
                query: SELECT sum(time) GROUP BY service, instance
            """);
    assertThat(c.interval()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.schemes())
        .extracting(SchemeSpec::name)
        .containsExactly("region", "by_service", "by_instance");
  }
}
