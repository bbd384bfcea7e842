package dev.profold.collector.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.collector.alert.AlertLoop;
import dev.profold.collector.alert.AlertMetrics;
import dev.profold.collector.alert.AlertRule;
import dev.profold.collector.alert.AlertmanagerSpec;
import dev.profold.collector.alert.Comparison;
import dev.profold.collector.alert.Template;
import dev.profold.collector.analysis.DerivedValue;
import dev.profold.collector.analysis.DerivedValueNames;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.testing.MutableClock;
import dev.profold.collector.testing.ThreadsScheme;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.StringReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The {@code alerts} section: what loads, what is refused and how, and what a reload does. */
class AlertsConfigTest {
  static final String EXAMPLE =
      """
      alerts:
        alertmanager:
          url: http://127.0.0.1:9093
          timeout: 2s
          retries: 5
        external_url: http://collector.example:7764/
        rules:
          - name: LockContention
            expr: thread_class_ratio{class="sync", service="checkout"} > 0.2
            for: 3
            keep_firing_for: 2
            labels: {severity: page}
            annotations:
              summary: "{{ $labels.service }} spends {{ $value | percent }} in SYNC"
              paths: "{{ $context.top_paths }}"
          - name: Imbalance
            expr: thread_cpu_imbalance_ratio >= 0.1
      """;

  @TempDir Path dir;

  private static CollectorConfig parse(String yaml) throws ConfigException {
    return ConfigLoader.parse(new StringReader(yaml), "collector.yaml");
  }

  @Test
  void theExampleRulesOfTheDeployedConfigParse() throws Exception {
    // The alerts block of deploy/collector.yaml, uncommented: its lines start with "# " and end at
    // the first blank line.
    List<String> lines = Files.readAllLines(Path.of("../deploy/collector.yaml"));
    StringBuilder yaml = new StringBuilder();
    boolean in = false;
    for (String line : lines) {
      if (line.equals("# alerts:")) {
        in = true;
      } else if (in && line.isBlank()) {
        break;
      }
      if (in) {
        yaml.append(line.substring(2)).append('\n');
      }
    }
    List<AlertRule> rules = parse(yaml.toString()).alerts().rules();
    assertThat(rules).extracting(AlertRule::name).containsExactly("LockContention", "CpuStarved");
    assertThat(rules.get(1).annotations()).containsKeys("summary", "competing");
  }

  @Test
  void loadsRulesAndAlertmanager() throws Exception {
    CollectorConfig c = parse(EXAMPLE);
    assertThat(c.alerts().alertmanager())
        .isEqualTo(
            new AlertmanagerSpec(URI.create("http://127.0.0.1:9093"), Duration.ofSeconds(2), 5));
    assertThat(c.alerts().alertmanager().alertsEndpoint())
        .isEqualTo(URI.create("http://127.0.0.1:9093/api/v2/alerts"));
    assertThat(c.alerts().externalUrl()).isEqualTo(URI.create("http://collector.example:7764/"));
    List<AlertRule> rules = c.alerts().rules();
    assertThat(rules).extracting(AlertRule::name).containsExactly("LockContention", "Imbalance");
    AlertRule lock = rules.get(0);
    assertThat(lock.expression().valueName()).isEqualTo("thread_class_ratio");
    assertThat(lock.expression().matchers()).hasSize(2);
    assertThat(lock.expression().comparison()).isEqualTo(Comparison.GREATER);
    assertThat(lock.forEvaluations()).isEqualTo(3);
    assertThat(lock.keepFiringFor()).isEqualTo(2);
    assertThat(lock.labels()).containsOnlyKeys("severity");
    assertThat(lock.labels().get("severity").render(new Template.Data(0, Map.of(), Map.of())))
        .isEqualTo("page");
    assertThat(lock.annotations()).containsOnlyKeys("summary", "paths");
    assertThat(
            lock.annotations()
                .get("summary")
                .render(new Template.Data(0.25, Map.of("service", "checkout"), Map.of())))
        .isEqualTo("checkout spends 25% in SYNC");
    // Defaults: for 1, keep_firing_for 0, no labels or annotations; Alertmanager timeout 5s, 3
    // retries.
    assertThat(rules.get(1).forEvaluations()).isEqualTo(1);
    assertThat(rules.get(1).keepFiringFor()).isZero();
    assertThat(rules.get(1).annotations()).isEmpty();
    assertThat(parse("alerts:\n  alertmanager: {url: 'https://am:9093'}\n").alerts().alertmanager())
        .isEqualTo(new AlertmanagerSpec(URI.create("https://am:9093"), Duration.ofSeconds(5), 3));
  }

  @Test
  void withoutTheKeyThereAreNoRulesAndNoAlertmanager() throws Exception {
    assertThat(parse("interval: 5s").alerts().rules()).isEmpty();
    assertThat(parse("interval: 5s").alerts().alertmanager()).isNull();
    assertThat(parse("alerts:\n  rules: []\n").alerts().rules()).isEmpty();
  }

  @ParameterizedTest
  @CsvSource(
      delimiterString = " ~> ",
      quoteCharacter = '`',
      value = {
        "alerts: {rulez: []} ~> collector.yaml: unknown key 'alerts.rulez'; known keys under alerts: alertmanager, external_url, rules",
        "alerts: {rules: [{name: A, expr: 'x > 1', when: 3}]} ~> collector.yaml: unknown key 'alerts.rules[0].when'; known keys under alerts.rules[0]: annotations, expr, for, keep_firing_for, labels, name",
        "alerts: {rules: [{expr: 'x > 1'}]} ~> collector.yaml: alerts.rules[0].name is required: letters, digits and _, starting with a letter, e.g. LockContention",
        "alerts: {rules: [{name: 'lock contention', expr: 'x > 1'}]} ~> collector.yaml: alerts.rules[0].name 'lock contention' is not valid",
        "alerts: {rules: [{name: A}]} ~> collector.yaml: alerts.rules[0].expr ('A') is required, for example: thread_class_ratio{class=\"sync\"} > 0.2",
        "alerts: {rules: [{name: A, expr: 'x > 1'}, {name: B, expr: 'y > 1'}, {name: C, expr: 'r{class=\"sync\"} > 20%'}]} ~> collector.yaml: alerts.rules[2].expr ('C') at column 21: write shares as fractions: 0.2 rather than 20%",
        "alerts: {rules: [{name: A, expr: 'x{service=checkout} > 1'}]} ~> collector.yaml: alerts.rules[0].expr ('A') at column 11: expected a quoted value after service's operator (\"value\" or 'value'), found 'checkout}'",
        "alerts: {rules: [{name: A, expr: 'x > 1', for: 3s}]} ~> collector.yaml: alerts.rules[0] ('A'): 'for' must be a whole number of evaluations in 1..100000, was 3s (rules are evaluated once per interval: 'for: 3' fires after three intervals in a row)",
        "alerts: {rules: [{name: A, expr: 'x > 1', for: 0}]} ~> 'for' must be a whole number of evaluations in 1..100000, was 0",
        "alerts: {rules: [{name: A, expr: 'x > 1', keep_firing_for: 5m}]} ~> collector.yaml: alerts.rules[0] ('A'): 'keep_firing_for' must be a whole number of evaluations in 0..100000, was 5m (rules are evaluated once per interval: 'keep_firing_for: 2' keeps a firing alert firing through two intervals in a row where its condition fails)",
        "alerts: {rules: [{name: A, expr: 'x > 1', keep_firing_for: -1}]} ~> 'keep_firing_for' must be a whole number of evaluations in 0..100000, was -1",
        "alerts: {rules: [{name: A, expr: 'x > 1'}, {name: A, expr: 'y > 1'}]} ~> collector.yaml: alerts.rules[1]: a rule named 'A' is defined twice",
        "alerts: {rules: [{name: A, expr: 'x > 1', labels: {alertname: B}}]} ~> collector.yaml: alerts.rules[0].labels: 'alertname' is set by the collector (the rule's name); remove it",
        "alerts: {rules: [{name: A, expr: 'x > 1', labels: {Severity: page}}]} ~> collector.yaml: alerts.rules[0].labels: 'Severity' is not a label name ([a-z_][a-z0-9_]*, not starting __)",
        "alerts: {rules: [{name: A, expr: 'x > 1', labels: {tier: 1}}]} ~> collector.yaml: alerts.rules[0].labels.tier must be a string (quote it), was 1",
        "alerts: {rules: [{name: A, expr: 'x > 1', labels: {team: 'at {{ $labels.x'}}]} ~> collector.yaml: alerts.rules[0].labels.team at column 4: '{{' is not closed with '}}'",
        "alerts: {rules: [{name: A, expr: 'x > 1', annotations: {summary: '{{ $value | pct }}'}}]} ~> collector.yaml: alerts.rules[0].annotations.summary at column 13: unknown function 'pct'; functions: duration, humanize, percent",
        "alerts: {rules: [{name: A, expr: 'x > 1', annotations: {summary: 'at {{ $labels.x'}}]} ~> collector.yaml: alerts.rules[0].annotations.summary at column 4: '{{' is not closed with '}}'",
        "alerts: {alertmanager: {timeout: 1s}} ~> collector.yaml: alerts.alertmanager.url is required (e.g. http://127.0.0.1:9093); leave out 'alertmanager' to expose alerts as metrics only",
        "alerts: {alertmanager: {url: '127.0.0.1:9093'}} ~> collector.yaml: alerts.alertmanager.url must be an http:// or https:// URL such as http://127.0.0.1:9093, was 127.0.0.1:9093",
        "alerts: {alertmanager: {url: 'http://am:9093', retries: -1}} ~> collector.yaml: alerts.alertmanager.retries must be a whole number in 0..20",
        "alerts: {alertmanager: {url: 'http://am:9093', timeout: 5}} ~> collector.yaml: alerts.alertmanager.timeout must be a duration such as 500ms or 5s, was 5",
        "alerts: {rules: {name: A}} ~> collector.yaml: alerts.rules must be a list of rules, each with a name and an expr",
        "alerts: [] ~> collector.yaml: alerts must be a mapping of keys to values",
      })
  void badSectionsAreRefusedWithWhereAndHow(String yaml, String message) {
    assertThatThrownBy(() -> parse(yaml))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(message);
  }

  @Test
  void aRuleOnRegionValuesWithoutTheRegionSchemeIsRefusedAndWithItAccepted()
      throws ConfigException {
    String rule = "alerts: {rules: [{name: Out, expr: 'instance_outlier > 0'}]}\n";
    String message =
        "collector.yaml: alerts.rules[0].expr ('Out'): instance_outlier is read from the scheme"
            + " 'region' grouped by service, instance, path and kind, and there is none, so the"
            + " rule could never fire; keep '- name: region' (its built-in query) among the"
            + " schemes (docs/imbalance.md)";
    String withoutRegion = "schemes:\n  - name: kinds\n    query: SELECT sum(time) GROUP BY kind\n";
    assertThatThrownBy(() -> parse(withoutRegion + rule)).hasMessage(message);
    String narrowRegion =
        "schemes:\n  - name: region\n    query: SELECT sum(time) GROUP BY service, path\n";
    assertThatThrownBy(() -> parse(narrowRegion + rule)).hasMessage(message);
    assertThat(parse(rule).alerts().rules()).as("the default schemes").hasSize(1);
  }

  @Test
  void aRuleOnRegionValuesIsRefusedWhenTheRegionSchemeHasAnIntervalOfItsOwn()
      throws ConfigException {
    // Rules are evaluated once per collector interval: with the region scheme at 1m and the
    // collector at 10s, 'for: 3' fired after 20-30 s on one interval's value.
    String rule = "alerts: {rules: [{name: Out, expr: 'instance_outlier > 0', for: 3}]}\n";
    String slowRegion = "interval: 10s\nschemes:\n  - name: region\n    interval: 1m\n";
    CollectorConfig c = parse(slowRegion + rule);
    assertThatThrownBy(() -> ConfigLoader.checkRuleIntervals(c, "collector.yaml"))
        .hasMessage(
            "collector.yaml: alerts.rules[0].expr ('Out'): instance_outlier is read from the"
                + " scheme 'region', whose interval (60000 ms) is not the collector's (10000 ms),"
                + " at which rules are evaluated: 'for' would count one interval's value several"
                + " times, or skip some; leave the scheme's interval unset, or make the"
                + " collector's interval (the 'interval' key, or --interval) the same");
    ConfigLoader.checkRuleIntervals(parse(slowRegion), "collector.yaml"); // no such rule
    CollectorConfig same =
        parse("interval: 1m\nschemes:\n  - name: region\n    interval: 1m\n" + rule);
    ConfigLoader.checkRuleIntervals(same, "collector.yaml");
    // As it runs: --interval 10s over the file's 1m makes the mismatch; the reverse mends it.
    assertThatThrownBy(
            () ->
                ConfigLoader.checkRuleIntervals(
                    same.withOverrides(null, null, null, java.time.Duration.ofSeconds(10)),
                    "collector.yaml"))
        .hasMessageContaining("whose interval (60000 ms) is not the collector's (10000 ms)");
    ConfigLoader.checkRuleIntervals(
        c.withOverrides(null, null, null, java.time.Duration.ofMinutes(1)), "collector.yaml");
  }

  @Test
  void aRuleOnPerThreadValuesWithoutASchemeKeepingThemIsRefusedAndWithOneAccepted()
      throws ConfigException {
    String rule =
        "alerts: {rules: [{name: A, expr: 'thread_class_ratio > 0.5'},"
            + " {name: Hot, expr: 'thread_region_imbalance_seconds > 0.1'}]}\n";
    assertThatThrownBy(() -> parse(rule))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "collector.yaml: alerts.rules[1].expr ('Hot'): thread_region_imbalance_seconds comes"
                + " from a scheme that keeps per-thread detail, and no scheme does, so the rule"
                + " could never fire; add one, such as the 'threads' scheme in"
                + " deploy/collector.yaml (grouped by service, instance, thread.group, thread,"
                + " thread.role, path and kind; docs/analysis.md)");
    String byThread =
        "schemes:\n"
            + "  - name: region\n"
            + "  - name: threads\n"
            + "    query: SELECT service, instance, thread.group, thread, path, kind, sum(time)"
            + " GROUP BY service, instance, thread.group, thread, path, kind\n";
    assertThat(parse(byThread + rule).alerts().rules()).hasSize(2);
    CollectorConfig slowThreads = parse(byThread + "    interval: 1m\n" + rule);
    assertThatThrownBy(() -> ConfigLoader.checkRuleIntervals(slowThreads, "collector.yaml"))
        .as("a scheme keeping thread detail at its own interval: 'for' would miscount")
        .hasMessageStartingWith(
            "collector.yaml: alerts.rules[1].expr ('Hot'): thread_region_imbalance_seconds is read"
                + " from the schemes that keep per-thread detail, and the scheme 'threads' has an"
                + " interval (60000 ms) other than the collector's (10000 ms)");
    ConfigLoader.checkRuleIntervals(parse(byThread + rule), "collector.yaml");
    String perThreadTime =
        "schemes:\n"
            + "  - name: sets\n"
            + "    query: SELECT service, instance, thread.group, path, kind, sum(time.per_thread)"
            + " GROUP BY service, instance, thread.group, path, kind\n";
    assertThat(parse(perThreadTime + rule).alerts().rules()).hasSize(2);
    String noKind =
        "schemes:\n"
            + "  - name: threads\n"
            + "    query: SELECT service, instance, thread.group, thread, path, sum(time)"
            + " GROUP BY service, instance, thread.group, thread, path\n";
    assertThatThrownBy(() -> parse(noKind + rule))
        .as("the values are per path and kind")
        .hasMessageContaining("no scheme does");
  }

  @Test
  void aRuleNamingAValueTheCollectorDoesNotDeriveIsRefusedWithTheNames() {
    assertThatThrownBy(
            () ->
                parse(
                    "alerts: {rules: [{name: A, expr: 'thread_class_ratio > 0.5'},"
                        + " {name: Imbalance, expr: 'thread_cpu_imbalance >= 0.1'}]}"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "collector.yaml: alerts.rules[1].expr ('Imbalance'): no derived value is named"
                + " 'thread_cpu_imbalance', so the rule could never fire; the derived values are: "
                + String.join(", ", DerivedValueNames.names())
                + " (docs/analysis.md)");
    assertThat(DerivedValueNames.names())
        .contains("thread_cpu_imbalance_ratio", "instance_outlier", "thread_region_wait_seconds")
        .isSorted();
  }

  @Test
  void aRuleMatchingALabelTheValueNeverHasIsRefusedWithItsLabels() {
    assertThatThrownBy(
            () ->
                parse(
                    "alerts: {rules: [{name: A, expr:"
                        + " 'thread_cpu_imbalance_ratio{service=\"checkout\", class=\"sync\"}"
                        + " > 0.1'}]}"))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "collector.yaml: alerts.rules[0].expr ('A'): thread_cpu_imbalance_ratio has no label"
                + " 'class', so class=\"sync\" tests nothing; its labels are: instance, service,"
                + " thread_group");
    assertThatThrownBy(
            () -> parse("alerts: {rules: [{name: A, expr: 'instance_outlier{path!=\"\"} == 1'}]}"))
        .hasMessageContaining(
            "instance_outlier has no label 'path', so path!=\"\" tests nothing; its labels are:"
                + " instance, service");
  }

  @Test
  void everyDerivedValueWithEachOfItsLabelsMakesAValidRule() throws Exception {
    // The thread_region_* values need a scheme that keeps per-thread detail.
    StringBuilder yaml =
        new StringBuilder(
            "schemes:\n"
                + "  - name: region\n"
                + "  - name: threads\n"
                + "    query: "
                + ThreadsScheme.QUERY
                + "\n"
                + "alerts:\n  rules:\n");
    int n = 0;
    for (String value : DerivedValueNames.names()) {
      for (String label : DerivedValueNames.labelsOf(value)) {
        yaml.append("    - {name: R")
            .append(n++)
            .append(", expr: '")
            .append(value)
            .append('{')
            .append(label)
            .append("=~\".+\"} > 0'}\n");
      }
    }
    assertThat(parse(yaml.toString()).alerts().rules()).hasSize(n).hasSizeGreaterThan(30);
  }

  @Test
  void reloadReplacesRulesKeepingUnchangedOnesAndFlagsAlertmanagerChanges() throws Exception {
    Path file = dir.resolve("collector.yaml");
    Files.writeString(file, EXAMPLE, StandardCharsets.UTF_8);
    CollectorConfig running = ConfigLoader.load(file);
    MutableClock clock = MutableClock.at(Instant.parse("2026-01-01T00:00:01Z"));
    AlertLoop loop =
        new AlertLoop(
            running.alerts().rules(),
            running.interval(),
            clock,
            () ->
                List.of(
                    DerivedValue.of(
                        "thread_cpu_imbalance_ratio", Map.of("service", "checkout"), 0.5)),
            () -> true,
            new AlertMetrics(new SimpleMeterRegistry()));
    clock.advance(Duration.ofSeconds(10));
    loop.tick();
    assertThat(loop.alerts()).extracting(a -> a.rule()).containsExactly("Imbalance");
    ConfigReloader reloader =
        new ConfigReloader(
            file,
            running,
            c -> c,
            (schemes, rules) ->
                new ConfigReloader.Kept(List.of("region"), loop.replaceRules(rules).kept()),
            new CollectorMetrics(new SimpleMeterRegistry()));

    Files.writeString(
        file,
        EXAMPLE
            .replace("url: http://127.0.0.1:9093", "url: http://127.0.0.1:9094")
            .replace("for: 3", "for: 2"),
        StandardCharsets.UTF_8);
    ConfigReloader.Outcome o = reloader.reload();
    assertThat(o.applied()).isTrue();
    assertThat(o.needRestart()).containsExactly("alerts.alertmanager");
    // Imbalance did not change: it is still firing; LockContention changed and starts over.
    assertThat(loop.alerts()).extracting(a -> a.rule()).containsExactly("Imbalance");
    assertThat(loop.rules().get(0).forEvaluations()).isEqualTo(2);
    assertThat(reloader.current().alerts().rules().get(0).forEvaluations()).isEqualTo(2);
    // The running Alertmanager stays until a restart.
    assertThat(reloader.current().alerts().alertmanager().url())
        .isEqualTo(URI.create("http://127.0.0.1:9093"));

    Files.writeString(file, EXAMPLE.replace("for: 3", "for: three"), StandardCharsets.UTF_8);
    ConfigReloader.Outcome refused = reloader.reload();
    assertThat(refused.applied()).isFalse();
    assertThat(refused.error()).contains("alerts.rules[0] ('LockContention'): 'for' must be");
    assertThat(loop.rules().get(0).forEvaluations()).isEqualTo(2);
  }
}
