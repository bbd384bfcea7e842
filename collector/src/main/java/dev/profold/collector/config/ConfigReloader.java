package dev.profold.collector.config;

import dev.profold.collector.alert.AlertRule;
import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.collector.telemetry.CollectorMetrics;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reloads the config file while the collector runs (on SIGHUP, or when the file's content changes)
 * and applies what can change live: the schemes and the alert rules. Schemes (and rules) whose
 * definition is unchanged keep their state; new ones start empty; removed ones go. Other settings
 * need a restart: a change to them is logged and otherwise ignored. A file that does not load is
 * refused with its error, counted, and the running configuration stays.
 *
 * <p>Thread-safe: reloads are serialised.
 */
public final class ConfigReloader {
  private static final Logger log = LoggerFactory.getLogger(ConfigReloader.class);

  /** Applies a new scheme list and returns the names of the schemes that kept their state. */
  @FunctionalInterface
  public interface SchemeApplier {
    List<String> apply(List<SchemeDefinition> schemes) throws Exception;
  }

  /** Applies new alert rules and returns the names of the rules that kept their state. */
  @FunctionalInterface
  public interface AlertRulesApplier {
    List<String> apply(List<AlertRule> rules) throws Exception;
  }

  /**
   * What a reload did.
   *
   * @param applied true when the new schemes were applied
   * @param kept schemes that kept their state
   * @param started schemes that started empty (new or changed)
   * @param removed schemes that went
   * @param needRestart top-level settings that changed but need a restart
   * @param error why the file was refused, or null
   */
  public record Outcome(
      boolean applied,
      List<String> kept,
      List<String> started,
      List<String> removed,
      List<String> needRestart,
      String error) {}

  private final Path file;
  private final CommandLineOverrides overrides;
  private final SchemeApplier applier;
  private final AlertRulesApplier alertApplier;
  private final CollectorMetrics metrics;
  private CollectorConfig current;
  private byte[] lastContent;

  /** Command-line settings that win over the file, re-applied on every reload. */
  public interface CommandLineOverrides {
    CollectorConfig apply(CollectorConfig fromFile) throws ConfigException;
  }

  /**
   * A reloader of {@code file}, whose running configuration is {@code current} (the file's as
   * loaded at start, with the command-line overrides applied).
   */
  public ConfigReloader(
      Path file,
      CollectorConfig current,
      CommandLineOverrides overrides,
      SchemeApplier applier,
      CollectorMetrics metrics) {
    this(file, current, overrides, applier, rules -> List.of(), metrics);
  }

  /** As above, also applying the alert rules with {@code alertApplier}. */
  public ConfigReloader(
      Path file,
      CollectorConfig current,
      CommandLineOverrides overrides,
      SchemeApplier applier,
      AlertRulesApplier alertApplier,
      CollectorMetrics metrics) {
    this.file = file;
    this.current = current;
    this.overrides = overrides;
    this.applier = applier;
    this.alertApplier = alertApplier;
    this.metrics = metrics;
    this.lastContent = read();
  }

  /** The running configuration. */
  public synchronized CollectorConfig current() {
    return current;
  }

  /** Reloads when the file's content changed since the last load; null when it did not. */
  public synchronized Outcome reloadIfChanged() {
    byte[] now = read();
    if (now == null || Arrays.equals(now, lastContent)) {
      return null;
    }
    return reload();
  }

  /** Loads the file and applies its schemes (see the class comment). */
  public synchronized Outcome reload() {
    lastContent = read();
    CollectorConfig next;
    List<SchemeDefinition> schemes;
    try {
      next = overrides.apply(ConfigLoader.load(file));
      // Schemes follow the running interval and limit: those two change at a restart only.
      schemes = current.withSchemes(next.schemes()).schemeDefinitions();
    } catch (ConfigException | IllegalStateException e) {
      return refused(e.getMessage());
    }
    List<String> kept;
    try {
      kept = applier.apply(schemes);
    } catch (Exception e) {
      return refused("could not apply the new schemes: " + e);
    }
    List<String> before = names(current.schemeDefinitions());
    List<String> after = names(schemes);
    List<String> started = new ArrayList<>(after);
    started.removeAll(kept);
    List<String> removed = new ArrayList<>(before);
    removed.removeAll(after);
    List<AlertRule> rules = next.alerts().rules();
    List<String> rulesKept;
    try {
      rulesKept = alertApplier.apply(rules);
    } catch (Exception e) {
      return refused("could not apply the new alert rules: " + e);
    }
    List<String> rulesBefore = ruleNames(current.alerts().rules());
    List<String> rulesStarted = new ArrayList<>(ruleNames(rules));
    rulesStarted.removeAll(rulesKept);
    List<String> rulesRemoved = new ArrayList<>(rulesBefore);
    rulesRemoved.removeAll(ruleNames(rules));
    List<String> needRestart = restartOnly(current, next);
    current = current.withSchemes(next.schemes()).withAlertRules(rules);
    metrics.configReload(true);
    log.info(
        "config {} reloaded: schemes kept {}, started empty {}, removed {}; alert rules kept {},"
            + " started {}, removed {}",
        file,
        kept,
        started,
        removed,
        rulesKept,
        rulesStarted,
        rulesRemoved);
    if (!needRestart.isEmpty()) {
      log.warn(
          "config {}: {} changed; these settings take effect at the next restart",
          file,
          String.join(", ", needRestart));
    }
    return new Outcome(true, kept, started, removed, needRestart, null);
  }

  private Outcome refused(String error) {
    metrics.configReload(false);
    log.error("config reload refused, the collector keeps its running configuration: {}", error);
    return new Outcome(false, List.of(), List.of(), List.of(), List.of(), error);
  }

  private byte[] read() {
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      return null;
    }
  }

  private static List<String> ruleNames(List<AlertRule> rules) {
    return rules.stream().map(AlertRule::name).toList();
  }

  private static List<String> names(List<SchemeDefinition> schemes) {
    return schemes.stream().map(SchemeDefinition::name).toList();
  }

  /** Top-level settings (other than schemes) that differ. */
  static List<String> restartOnly(CollectorConfig a, CollectorConfig b) {
    List<String> out = new ArrayList<>();
    check(out, "listen", a.listen(), b.listen());
    check(out, "grpc_port", a.grpcPort(), b.grpcPort());
    check(out, "http_port", a.httpPort(), b.httpPort());
    check(out, "interval", a.interval(), b.interval());
    check(out, "source_ttl_intervals", a.sourceTtlIntervals(), b.sourceTtlIntervals());
    check(out, "cardinality_limit", a.cardinalityLimit(), b.cardinalityLimit());
    check(out, "histogram_max_scale", a.histogramMaxScale(), b.histogramMaxScale());
    check(out, "limits.max_message_bytes", a.maxMessageBytes(), b.maxMessageBytes());
    check(out, "limits.max_pending_bytes", a.maxPendingBytes(), b.maxPendingBytes());
    check(out, "limits.dictionary_entries", a.dictionaryEntries(), b.dictionaryEntries());
    check(out, "retry_delay", a.retryDelay(), b.retryDelay());
    check(out, "shutdown_timeout", a.shutdownTimeout(), b.shutdownTimeout());
    check(out, "archive", a.archive(), b.archive());
    check(out, "alerts.alertmanager", a.alerts().alertmanager(), b.alerts().alertmanager());
    check(out, "alerts.external_url", a.alerts().externalUrl(), b.alerts().externalUrl());
    check(out, "analysis", a.analysis(), b.analysis());
    return out;
  }

  private static void check(List<String> out, String key, Object a, Object b) {
    if (!Objects.equals(a, b)) {
      out.add(key);
    }
  }
}
