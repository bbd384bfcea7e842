package dev.profold.collector.fold;

import dev.profold.reduce.ExpHistogram;

/**
 * Settings of the fold.
 *
 * @param intervalNanos window length, > 0
 * @param sourceTtlIntervals intervals of silence after which a source expires, >= 3 (a source must
 *     outlive the windows its last data landed in)
 * @param cardinalityLimit groups the built-in scheme holds before overflowing, > 0
 * @param histogramMaxScale highest resolution kept in the groups' histograms ({@link
 *     ExpHistogram#MIN_SCALE}..{@link ExpHistogram#MAX_SCALE}); finer data is lowered on merge
 */
public record FoldConfig(
    long intervalNanos, int sourceTtlIntervals, int cardinalityLimit, int histogramMaxScale) {

  /** Settings keeping histograms at full resolution. */
  public FoldConfig(long intervalNanos, int sourceTtlIntervals, int cardinalityLimit) {
    this(intervalNanos, sourceTtlIntervals, cardinalityLimit, ExpHistogram.MAX_SCALE);
  }

  public FoldConfig {
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
  }
}
