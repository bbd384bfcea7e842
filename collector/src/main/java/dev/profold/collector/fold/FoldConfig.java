package dev.profold.collector.fold;

/**
 * Settings of the fold.
 *
 * @param intervalNanos window length, > 0
 * @param sourceTtlIntervals intervals of silence after which a source expires, >= 3 (a source must
 *     outlive the windows its last data landed in)
 * @param cardinalityLimit groups the built-in scheme holds before overflowing, > 0
 */
public record FoldConfig(long intervalNanos, int sourceTtlIntervals, int cardinalityLimit) {
  public FoldConfig {
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
