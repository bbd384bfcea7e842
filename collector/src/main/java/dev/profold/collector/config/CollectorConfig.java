package dev.profold.collector.config;

import dev.profold.collector.alert.AlertRule;
import dev.profold.collector.alert.AlertsSpec;
import dev.profold.collector.analysis.AnalysisSpec;
import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.collector.scheme.SchemeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Every setting of the collector daemon, with the embedded defaults in {@link #defaults()}.
 * docs/configuration.md documents each one; {@link ConfigLoader} reads them from YAML.
 *
 * @param listen address both servers bind to
 * @param grpcPort gRPC port (0 picks a free one)
 * @param httpPort HTTP port for /metrics, /healthz, /readyz (0 picks a free one)
 * @param interval length of the aggregation windows
 * @param sourceTtlIntervals intervals of silence after which a source expires (>= 3)
 * @param cardinalityLimit groups the built-in scheme holds before overflowing
 * @param histogramMaxScale highest resolution of the groups' exponential histograms (3: 8 buckets
 *     per power of two, about 4% relative error, Prometheus's default native schema)
 * @param maxMessageBytes largest gRPC message accepted
 * @param maxPendingBytes received bytes waiting to be folded before ingest answers
 *     RESOURCE_EXHAUSTED
 * @param dictionaryEntries strings, attributes and path nodes the collector interns at most
 * @param streamIds ids of definitions all open streams map together at most
 * @param maxSources sources (service instances) the collector tracks at most; a delta of a new one
 *     beyond it is refused, to be resent, until a silent source expires
 * @param retryDelay delay suggested to clients in RetryInfo when overloaded or shutting down
 * @param shutdownTimeout how long a clean shutdown waits for the fold to drain
 * @param schemes the aggregation schemes (by default the built-in {@code region} scheme)
 * @param archive where closed intervals are archived (off by default)
 * @param alerts alert rules and where alerts go (none by default)
 * @param analysis thresholds and bounds of the region analysis (imbalance, instance clusters)
 */
public record CollectorConfig(
    String listen,
    int grpcPort,
    int httpPort,
    Duration interval,
    int sourceTtlIntervals,
    int cardinalityLimit,
    int histogramMaxScale,
    int maxMessageBytes,
    long maxPendingBytes,
    int dictionaryEntries,
    int streamIds,
    int maxSources,
    Duration retryDelay,
    Duration shutdownTimeout,
    List<SchemeSpec> schemes,
    ArchiveSpec archive,
    AlertsSpec alerts,
    AnalysisSpec analysis) {

  public static final int DEFAULT_GRPC_PORT = 7763;
  public static final int DEFAULT_HTTP_PORT = 7764;
  public static final int DEFAULT_HISTOGRAM_MAX_SCALE = 3;
  public static final int DEFAULT_MAX_SOURCES =
      dev.profold.collector.fold.FoldConfig.DEFAULT_MAX_SOURCES;

  /** The embedded defaults. */
  public static CollectorConfig defaults() {
    return new CollectorConfig(
        "127.0.0.1",
        DEFAULT_GRPC_PORT,
        DEFAULT_HTTP_PORT,
        Duration.ofSeconds(10),
        5,
        10_000,
        DEFAULT_HISTOGRAM_MAX_SCALE,
        16 * 1024 * 1024,
        64L * 1024 * 1024,
        1_000_000,
        GlobalDictionary.DEFAULT_STREAM_IDS,
        DEFAULT_MAX_SOURCES,
        Duration.ofSeconds(1),
        Duration.ofSeconds(10),
        List.of(SchemeSpec.builtIn()),
        ArchiveSpec.off(),
        AlertsSpec.none(),
        AnalysisSpec.defaults());
  }

  public CollectorConfig {
    schemes = List.copyOf(schemes);
  }

  /** This configuration with {@code schemes} instead of its own. */
  public CollectorConfig withSchemes(List<SchemeSpec> schemes) {
    return with(listen, grpcPort, httpPort, interval, schemes, alerts);
  }

  /** This configuration with alert rules {@code rules} instead of its own (reload). */
  public CollectorConfig withAlertRules(List<AlertRule> rules) {
    return with(
        listen,
        grpcPort,
        httpPort,
        interval,
        schemes,
        new AlertsSpec(alerts.alertmanager(), alerts.externalUrl(), rules));
  }

  /**
   * The schemes, built with this configuration's interval and cardinality limit.
   *
   * @throws IllegalStateException when one does not build (a loaded config was checked already)
   */
  public List<SchemeDefinition> schemeDefinitions() {
    List<SchemeDefinition> out = new ArrayList<>();
    for (SchemeSpec s : schemes) {
      try {
        out.add(s.compile(interval, cardinalityLimit));
      } catch (SchemeException e) {
        throw new IllegalStateException(e.getMessage(), e);
      }
    }
    return out;
  }

  /**
   * This configuration with the command-line overrides applied (they win over the file); a null
   * argument keeps the setting.
   */
  public CollectorConfig withOverrides(
      String listen, Integer grpcPort, Integer httpPort, Duration interval) {
    return with(
        listen != null ? listen : this.listen,
        grpcPort != null ? grpcPort : this.grpcPort,
        httpPort != null ? httpPort : this.httpPort,
        interval != null ? interval : this.interval,
        schemes,
        alerts);
  }

  /** A copy with the settings that can change after loading replaced. */
  private CollectorConfig with(
      String listen,
      int grpcPort,
      int httpPort,
      Duration interval,
      List<SchemeSpec> schemes,
      AlertsSpec alerts) {
    return new CollectorConfig(
        listen,
        grpcPort,
        httpPort,
        interval,
        sourceTtlIntervals,
        cardinalityLimit,
        histogramMaxScale,
        maxMessageBytes,
        maxPendingBytes,
        dictionaryEntries,
        streamIds,
        maxSources,
        retryDelay,
        shutdownTimeout,
        schemes,
        archive,
        alerts,
        analysis);
  }
}
