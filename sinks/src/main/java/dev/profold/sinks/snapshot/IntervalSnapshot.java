package dev.profold.sinks.snapshot;

import java.util.List;

/**
 * One closed interval of a scheme, as retained in memory: its bounds and, per group with data in
 * it, the state over the interval.
 *
 * @param startUnixNanos start of the interval (inclusive), nanoseconds since the unix epoch
 * @param endUnixNanos end of the interval (exclusive)
 * @param series state per series over the interval (only series with data in it)
 */
public record IntervalSnapshot(
    long startUnixNanos, long endUnixNanos, List<SeriesSnapshot> series) {
  public IntervalSnapshot {
    series = List.copyOf(series);
  }
}
