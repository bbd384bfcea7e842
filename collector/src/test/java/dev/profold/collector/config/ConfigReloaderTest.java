package dev.profold.collector.config;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.alert.AlertRule;
import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.fold.FoldConfig;
import dev.profold.collector.fold.FoldEngine;
import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.testing.MutableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link ConfigReloader} applying a real config file to a real {@link FoldEngine}. */
class ConfigReloaderTest {
  static final String BASE =
      """
      interval: 10s
      schemes:
        - name: region
        - name: kinds
          query: SELECT sum(time) GROUP BY kind
      """;

  @TempDir Path dir;
  Path file;
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  final CollectorMetrics metrics = new CollectorMetrics(registry);
  FoldEngine engine;
  ConfigReloader reloader;

  @BeforeEach
  void start() throws Exception {
    file = dir.resolve("collector.yaml");
    write(BASE);
    CollectorConfig c = ConfigLoader.load(file);
    engine =
        new FoldEngine(
            new FoldConfig(
                c.interval().toNanos(),
                c.sourceTtlIntervals(),
                c.cardinalityLimit(),
                c.histogramMaxScale(),
                c.schemeDefinitions()),
            new GlobalDictionary(1000),
            MutableClock.atNanos(1_700_000_000_000_000_000L),
            metrics);
    reloader = new ConfigReloader(file, c, x -> x, this::apply, metrics);
  }

  /** Applies the schemes to the engine unless {@link #failure} is set (then nothing changes). */
  ConfigReloader.Kept apply(List<SchemeDefinition> schemes, List<AlertRule> rules)
      throws Exception {
    if (failure != null) {
      throw failure;
    }
    return new ConfigReloader.Kept(engine.reconfigure(schemes), List.of());
  }

  Exception failure;

  void write(String yaml) throws Exception {
    Files.writeString(file, yaml, StandardCharsets.UTF_8);
  }

  /** The checks a change needs: the first sees it, the second finds it settled and loads it. */
  static ConfigReloader.Outcome settled(ConfigReloader r) {
    assertThat(r.reloadIfChanged()).as("a change is applied once it has settled").isNull();
    return r.reloadIfChanged();
  }

  double reloads(String result) {
    var c = registry.find("profold.config.reloads").tag("result", result).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void aFileEmptiedWhileBeingWrittenKeepsTheRunningSchemes() throws Exception {
    for (String empty : new String[] {"", "\n  \n", "# being rewritten\n---\n"}) {
      write(empty);
      ConfigReloader.Outcome o = settled(reloader);
      assertThat(o.applied()).as("'%s'", empty).isFalse();
      assertThat(o.error()).contains("holds no settings (being written?)");
      assertThat(engine.schemes())
          .extracting(SchemeDefinition::name)
          .containsExactly("region", "kinds");
    }
    write("{}\n"); // the defaults alone, said so
    assertThat(settled(reloader).applied()).isTrue();
    assertThat(engine.schemes()).extracting(SchemeDefinition::name).containsExactly("region");
  }

  @Test
  void aChangeMadeWhileTheCollectorStartedIsAppliedAtTheFirstCheck() throws Exception {
    byte[] loaded = Files.readAllBytes(file); // what the start read and loaded
    write(BASE + "  - name: late\n    query: SELECT count() GROUP BY kind\n");
    ConfigReloader fromStart =
        new ConfigReloader(
            file,
            ConfigLoader.parse(
                new java.io.StringReader(new String(loaded, StandardCharsets.UTF_8)),
                "collector.yaml"),
            x -> x,
            this::apply,
            metrics,
            loaded);
    // Before: the reloader took the file as it was when it was made as what was running.
    ConfigReloader.Outcome o = settled(fromStart);
    assertThat(o).isNotNull();
    assertThat(o.started()).containsExactly("late");
  }

  @Test
  void anUnchangedFileIsNotReloaded() {
    assertThat(reloader.reloadIfChanged()).isNull();
    assertThat(reloads("ok")).isZero();
  }

  @Test
  void changedSchemesApplyLiveAndUnchangedOnesKeepTheirState() throws Exception {
    write(
        """
        interval: 10s
        schemes:
          - name: region
          - name: kinds
            query: SELECT max(time) GROUP BY kind
          - name: tenants
            query: SELECT sum(time) GROUP BY tenant
        """);
    ConfigReloader.Outcome o = settled(reloader);
    assertThat(o.applied()).isTrue();
    assertThat(o.kept()).containsExactly("region");
    assertThat(o.started()).containsExactly("kinds", "tenants");
    assertThat(o.removed()).isEmpty();
    assertThat(o.needRestart()).isEmpty();
    assertThat(engine.schemes())
        .extracting(SchemeDefinition::name)
        .containsExactly("region", "kinds", "tenants");
    assertThat(reloads("ok")).isEqualTo(1);

    write(BASE.replace("  - name: kinds\n    query: SELECT sum(time) GROUP BY kind\n", ""));
    o = reloader.reload();
    assertThat(o.removed()).containsExactly("kinds", "tenants");
    assertThat(engine.schemes()).extracting(SchemeDefinition::name).containsExactly("region");
  }

  @Test
  void aBrokenFileIsRefusedAndTheRunningSchemesStay() throws Exception {
    write(BASE.replace("GROUP BY kind", "GROUP BY"));
    ConfigReloader.Outcome o = settled(reloader);
    assertThat(o.applied()).isFalse();
    assertThat(o.error()).contains("schemes[1]: scheme 'kinds': query at column");
    assertThat(engine.schemes())
        .extracting(SchemeDefinition::query)
        .containsExactly(SchemeDefinition.BUILT_IN_QUERY, "SELECT sum(time) GROUP BY kind");
    assertThat(reloads("error")).isEqualTo(1);
    assertThat(reloader.reloadIfChanged()).as("the same broken file is not retried").isNull();
  }

  @Test
  void aReloadThatCannotBeAppliedChangesNothingAndTheNextComparesWithWhatRuns() throws Exception {
    String withTenants = BASE + "  - name: tenants\n    query: SELECT sum(time) GROUP BY tenant\n";
    write(withTenants);
    failure = new TimeoutException("the fold thread did not take the new schemes and rules");
    ConfigReloader.Outcome o = settled(reloader);
    assertThat(o.applied()).isFalse();
    assertThat(o.error())
        .isEqualTo(
            "could not apply the new schemes and alert rules (java.util.concurrent."
                + "TimeoutException: the fold thread did not take the new schemes and rules); the"
                + " file is tried again at the next checks, on SIGHUP or when it changes");
    assertThat(reloads("error")).isEqualTo(1);
    assertThat(reloads("ok")).isZero();
    assertThat(reloader.current().schemes())
        .extracting(SchemeSpec::name)
        .containsExactly("region", "kinds");
    assertThat(engine.schemes())
        .extracting(SchemeDefinition::name)
        .containsExactly("region", "kinds");

    // The next checks try the same file again (the fold thread was busy, say): now applied; what
    // it reports is measured against what ran. Before, only a SIGHUP or another edit did.
    failure = null;
    o = settled(reloader);
    assertThat(o.applied()).isTrue();
    assertThat(o.kept()).containsExactly("region", "kinds");
    assertThat(o.started()).containsExactly("tenants");
    assertThat(o.removed()).isEmpty();
    assertThat(reloader.current().schemes())
        .extracting(SchemeSpec::name)
        .containsExactly("region", "kinds", "tenants");
    assertThat(reloads("ok")).isEqualTo(1);
    assertThat(reloader.reloadIfChanged()).as("in force: not tried again").isNull();
  }

  @Test
  void aFileStillChangingBetweenTwoChecksIsNotLoadedUntilItSettles() throws Exception {
    // Written in place and read half-way, at a line boundary, a file can still load: its schemes
    // and rules went, and came back empty a check later.
    write(BASE.replace("  - name: kinds\n    query: SELECT sum(time) GROUP BY kind\n", ""));
    assertThat(reloader.reloadIfChanged()).isNull();
    write(BASE + "  - name: tenants\n    query: SELECT sum(time) GROUP BY tenant\n");
    assertThat(reloader.reloadIfChanged()).as("changed again since the last check").isNull();
    ConfigReloader.Outcome o = reloader.reloadIfChanged();
    assertThat(o.kept()).containsExactly("region", "kinds");
    assertThat(o.started()).containsExactly("tenants");
    assertThat(o.removed()).isEmpty();
  }

  @Test
  void aReloadGivingTheRegionSchemeItsOwnIntervalUnderARegionRuleIsRefused() throws Exception {
    write(
        BASE.replace("  - name: region\n", "  - name: region\n    interval: 1m\n")
            + "alerts: {rules: [{name: Out, expr: 'instance_outlier > 0'}]}\n");
    ConfigReloader.Outcome o = reloader.reload();
    assertThat(o.applied()).isFalse();
    assertThat(o.error())
        .startsWith("collector.yaml: alerts.rules[0].expr ('Out'): instance_outlier is read from")
        .contains("whose interval (60000 ms) is not the collector's (10000 ms)");
  }

  @Test
  void aReloadThatKeepsFailingToApplyIsNotTriedForEver() throws Exception {
    // A fold thread that failed for good: an ERROR and an error count every 4 s, for ever.
    write(BASE + "  - name: tenants\n    query: SELECT sum(time) GROUP BY tenant\n");
    failure = new TimeoutException("the fold thread has stopped");
    for (int i = 1; i < ConfigReloader.MAX_APPLY_ATTEMPTS; i++) {
      assertThat(settled(reloader).error()).contains("tried again at the next checks");
    }
    assertThat(settled(reloader).error())
        .contains("tried " + ConfigReloader.MAX_APPLY_ATTEMPTS + " times in a row");
    assertThat(reloader.reloadIfChanged()).isNull();
    assertThat(reloader.reloadIfChanged()).as("until SIGHUP or a change").isNull();
    assertThat(reloads("error")).isEqualTo(ConfigReloader.MAX_APPLY_ATTEMPTS);
  }

  @Test
  void settingsOtherThanSchemesWaitForARestart() throws Exception {
    write(BASE.replace("interval: 10s", "interval: 30s\nhttp_port: 9999"));
    ConfigReloader.Outcome o = reloader.reload();
    assertThat(o.applied()).isTrue();
    assertThat(o.needRestart()).containsExactly("http_port", "interval");
    // The schemes keep following the running interval, so nothing restarted.
    assertThat(o.kept()).containsExactly("region", "kinds");
    assertThat(engine.schemes().get(0).interval()).isEqualTo(Duration.ofSeconds(10));
    assertThat(reloader.current().interval()).isEqualTo(Duration.ofSeconds(10));
  }
}
