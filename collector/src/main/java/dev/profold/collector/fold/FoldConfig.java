package dev.profold.collector.fold;

import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.reduce.ExpHistogram;
import java.time.Duration;
import java.util.List;

/**
 * Settings of the fold.
 *
 * @param intervalNanos window length, > 0
 * @param sourceTtlIntervals intervals of silence after which a source expires, >= 3 (a source must
 *     outlive the windows its last data landed in)
 * @param cardinalityLimit groups the built-in scheme holds before overflowing, > 0
 * @param histogramMaxScale highest resolution kept in the groups' histograms ({@link
 *     ExpHistogram#MIN_SCALE}..{@link ExpHistogram#MAX_SCALE}); finer data is lowered on merge
 * @param schemes the aggregation schemes, in order (names unique)
 * @param maxSources sources tracked at most, > 0: a delta of a new source beyond it is refused
 *     (retryable) until a silent source expires
 */
public record FoldConfig(
    long intervalNanos,
    int sourceTtlIntervals,
    int cardinalityLimit,
    int histogramMaxScale,
    List<SchemeDefinition> schemes,
    int maxSources) {

  /** The default of {@code limits.max_sources}. */
  public static final int DEFAULT_MAX_SOURCES = 10_000;

  /** Settings with {@code schemes} and the default bound on sources. */
  public FoldConfig(
      long intervalNanos,
      int sourceTtlIntervals,
      int cardinalityLimit,
      int histogramMaxScale,
      List<SchemeDefinition> schemes) {
    this(
        intervalNanos,
        sourceTtlIntervals,
        cardinalityLimit,
        histogramMaxScale,
        schemes,
        DEFAULT_MAX_SOURCES);
  }

  /** Settings keeping histograms at full resolution, with the built-in scheme only. */
  public FoldConfig(long intervalNanos, int sourceTtlIntervals, int cardinalityLimit) {
    this(intervalNanos, sourceTtlIntervals, cardinalityLimit, ExpHistogram.MAX_SCALE);
  }

  /**
   * Settings with the built-in scheme only, at {@code intervalNanos} and {@code cardinalityLimit}.
   */
  public FoldConfig(
      long intervalNanos, int sourceTtlIntervals, int cardinalityLimit, int histogramMaxScale) {
    this(
        intervalNanos,
        sourceTtlIntervals,
        cardinalityLimit,
        histogramMaxScale,
        List.of(SchemeDefinition.builtIn(Duration.ofNanos(intervalNanos), cardinalityLimit)));
  }

  public FoldConfig {
    schemes = List.copyOf(schemes);
    if (schemes.stream().map(SchemeDefinition::name).distinct().count() != schemes.size()) {
      throw new IllegalArgumentException("scheme names must be unique");
    }
    if (histogramMaxScale < ExpHistogram.MIN_SCALE || histogramMaxScale > ExpHistogram.MAX_SCALE) {
      throw new IllegalArgumentException(
          "histogram max scale must be within -10..20, was " + histogramMaxScale);
    }
    if (intervalNanos <= 0) {
      throw new IllegalArgumentException("interval must be > 0");
    }
    if (sourceTtlIntervals < 3) {
      throw new IllegalArgumentException("source TTL must be at least 3 intervals");
    }
    if (cardinalityLimit <= 0) {
      throw new IllegalArgumentException("cardinality limit must be > 0");
    }
    if (maxSources <= 0) {
      throw new IllegalArgumentException("max sources must be > 0");
    }
  }
}
