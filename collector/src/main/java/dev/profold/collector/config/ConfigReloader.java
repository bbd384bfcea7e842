package dev.profold.collector.config;

import dev.profold.collector.alert.AlertRule;
import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.collector.telemetry.CollectorMetrics;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
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
 * need a restart: a change to them is logged and otherwise ignored.
 *
 * <p>A reload is all or nothing: the {@link Applier} puts the schemes and the rules in force
 * together or leaves both as they were. A file that does not load, or whose schemes and rules
 * cannot be applied, is refused with its error, logged and counted, and the running configuration
 * stays; {@link #current()} is always what is in force.
 *
 * <p>Thread-safe: reloads are serialised.
 */
public final class ConfigReloader {
  private static final Logger log = LoggerFactory.getLogger(ConfigReloader.class);

  /** Puts the schemes and alert rules of a reload in force, both or neither. */
  @FunctionalInterface
  public interface Applier {
    /**
     * Applies {@code schemes} and {@code rules} together.
     *
     * @return the names of the schemes and of the rules that kept their state
     * @throws Exception when they could not be applied; then neither changed
     */
    Kept apply(List<SchemeDefinition> schemes, List<AlertRule> rules) throws Exception;
  }

  /**
   * What kept its state through a reload.
   *
   * @param schemes names of the schemes that kept their state
   * @param rules names of the alert rules that kept their state
   */
  public record Kept(List<String> schemes, List<String> rules) {
    public Kept {
      schemes = List.copyOf(schemes);
      rules = List.copyOf(rules);
    }
  }

  /**
   * What a reload did.
   *
   * @param applied true when the new schemes and alert rules were applied
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
  private final Applier applier;
  private final CollectorMetrics metrics;
  private CollectorConfig current;
  private byte[] lastContent;

  /** The changed content the last {@link #reloadIfChanged} saw, not applied yet; or null. */
  private byte[] settling;

  /**
   * Attempts in a row whose schemes and rules could not be applied; at {@link #MAX_APPLY_ATTEMPTS}
   * the checks stop trying the same file (a fold thread that has failed for good).
   */
  private int applyFailures;

  static final int MAX_APPLY_ATTEMPTS = 5;

  /** The configuration in {@code content}, or the file's if null (its error, say). */
  private CollectorConfig load(byte[] content) throws ConfigException {
    if (content == null) {
      return ConfigLoader.load(file);
    }
    java.nio.charset.CharsetDecoder strict =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
            .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT);
    return ConfigLoader.parse(
        new java.io.InputStreamReader(new java.io.ByteArrayInputStream(content), strict),
        file.toString());
  }

  /** Command-line settings that win over the file, re-applied on every reload. */
  public interface CommandLineOverrides {
    CollectorConfig apply(CollectorConfig fromFile) throws ConfigException;
  }

  /**
   * A reloader of {@code file}, whose running configuration is {@code current} (the file's as
   * loaded at start, with the command-line overrides applied), applying reloads with {@code
   * applier}.
   */
  public ConfigReloader(
      Path file,
      CollectorConfig current,
      CommandLineOverrides overrides,
      Applier applier,
      CollectorMetrics metrics) {
    this(file, current, overrides, applier, metrics, null);
  }

  /**
   * As the other constructor, with {@code loaded} the file's content as read before {@code current}
   * was loaded from it (null: the file now): a change made since then, while the collector started,
   * is applied at the first check rather than taken as the running configuration.
   */
  public ConfigReloader(
      Path file,
      CollectorConfig current,
      CommandLineOverrides overrides,
      Applier applier,
      CollectorMetrics metrics,
      byte[] loaded) {
    this.file = file;
    this.current = current;
    this.overrides = overrides;
    this.applier = applier;
    this.metrics = metrics;
    this.lastContent = loaded != null ? loaded.clone() : read();
  }

  /** Whether {@code content} holds nothing but blank lines, comments and document markers. */
  static boolean noSettings(byte[] content) {
    for (String line : new String(content, StandardCharsets.UTF_8).split("\n", -1)) {
      String l = line.strip();
      if (!l.isEmpty() && !l.startsWith("#") && !l.equals("---") && !l.equals("...")) {
        return false;
      }
    }
    return true;
  }

  /** The running configuration. */
  public synchronized CollectorConfig current() {
    return current;
  }

  /**
   * Reloads when the file's content changed since the last load and has stayed the same since the
   * previous call (a file written in place, read while being written, can be cut at a line and
   * still load: schemes and rules would go and come back empty); null when it did not, or has not
   * settled yet. Called every few seconds, so a change applies at the second call after it.
   */
  public synchronized Outcome reloadIfChanged() {
    byte[] now = read();
    if (now == null || Arrays.equals(now, lastContent)) {
      settling = null;
      return null;
    }
    if (!Arrays.equals(now, settling)) {
      settling = now;
      return null;
    }
    settling = null;
    return reload(now); // what the two checks read, not a third read that may differ again
  }

  /** Loads the file and applies its schemes and alert rules (see the class comment). */
  public synchronized Outcome reload() {
    return reload(read());
  }

  /** {@link #reload()} of {@code content}, the file as read (null: it could not be read). */
  private Outcome reload(byte[] content) {
    lastContent = content;
    if (lastContent != null && noSettings(lastContent)) {
      // An editor or a shell redirection empties the file before writing it: read in between,
      // an empty file would remove every scheme and rule, and their state with them.
      return refused(
          file
              + " holds no settings (being written?); the running configuration stays. A"
              + " configuration of the defaults alone is written {}");
    }
    CollectorConfig next;
    List<SchemeDefinition> schemes;
    try {
      next = overrides.apply(load(content));
      // Schemes follow the running interval and limit: those two change at a restart only.
      CollectorConfig running = current.withSchemes(next.schemes());
      schemes = running.schemeDefinitions();
      ConfigLoader.checkRuleIntervals(
          running.withAlertRules(next.alerts().rules()), file.getFileName().toString());
    } catch (ConfigException | IllegalStateException e) {
      return refused(e.getMessage());
    } catch (RuntimeException e) { // a bug of the loader: the running configuration stays
      return refused("could not read " + file + " (" + e + "); the running configuration stays");
    }
    List<AlertRule> rules = next.alerts().rules();
    Kept kept;
    try {
      kept = applier.apply(schemes, rules);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return refused("interrupted before the new schemes and alert rules were applied");
    } catch (Exception e) {
      boolean again = ++applyFailures < MAX_APPLY_ATTEMPTS;
      if (again) {
        lastContent = null; // not in force: the next checks try it again
      }
      return refused(
          "could not apply the new schemes and alert rules ("
              + e
              + (again
                  ? "); the file is tried again at the next checks, on SIGHUP or when it changes"
                  : "); tried "
                      + MAX_APPLY_ATTEMPTS
                      + " times in a row, it is tried again on SIGHUP or when it changes"));
    }
    applyFailures = 0;
    List<String> before = names(current.schemeDefinitions());
    List<String> after = names(schemes);
    List<String> started = new ArrayList<>(after);
    started.removeAll(kept.schemes());
    List<String> removed = new ArrayList<>(before);
    removed.removeAll(after);
    List<String> rulesBefore = ruleNames(current.alerts().rules());
    List<String> rulesStarted = new ArrayList<>(ruleNames(rules));
    rulesStarted.removeAll(kept.rules());
    List<String> rulesRemoved = new ArrayList<>(rulesBefore);
    rulesRemoved.removeAll(ruleNames(rules));
    List<String> needRestart = restartOnly(current, next);
    current = current.withSchemes(next.schemes()).withAlertRules(rules);
    metrics.configReload(true);
    log.info(
        "config {} reloaded: schemes kept {}, started empty {}, removed {}; alert rules kept {},"
            + " started {}, removed {}",
        file,
        kept.schemes(),
        started,
        removed,
        kept.rules(),
        rulesStarted,
        rulesRemoved);
    if (!needRestart.isEmpty()) {
      log.warn(
          "config {}: {} changed; these settings take effect at the next restart",
          file,
          String.join(", ", needRestart));
    }
    return new Outcome(true, kept.schemes(), started, removed, needRestart, null);
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
    check(out, "limits.stream_ids", a.streamIds(), b.streamIds());
    check(out, "limits.max_sources", a.maxSources(), b.maxSources());
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
