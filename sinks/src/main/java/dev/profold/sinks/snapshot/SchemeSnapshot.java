package dev.profold.sinks.snapshot;

import java.util.List;

/**
 * What one aggregation scheme holds at one moment: its cumulative series (since each source's
 * incarnation started) and the series of its last closed interval.
 *
 * @param scheme scheme name, used in metric names ({@code profold_<scheme>_...})
 * @param labelNames names of the labels every series carries, in order
 * @param cumulative cumulative state per series
 * @param lastInterval state per series over the last closed interval (only series with data in it)
 * @param lastIntervalEndUnixNanos end of the last closed interval, 0 when none closed yet
 * @param groups number of groups the scheme holds (the cardinality the limit applies to)
 * @param query the scheme's CalQL query, as configured
 * @param intervalNanos the scheme's interval length
 * @param retained the retained closed intervals, oldest first (the last is {@code lastInterval})
 * @param pathLabels the labels whose values are nested paths, names joined with {@code /}
 * @param attributeNames the attribute each label holds, as the query names it ({@code thread.group}
 *     for the label {@code thread_group}), one per label name
 */
public record SchemeSnapshot(
    String scheme,
    List<String> labelNames,
    List<SeriesSnapshot> cumulative,
    List<SeriesSnapshot> lastInterval,
    long lastIntervalEndUnixNanos,
    int groups,
    String query,
    long intervalNanos,
    List<IntervalSnapshot> retained,
    List<String> pathLabels,
    List<String> attributeNames) {
  public SchemeSnapshot {
    labelNames = List.copyOf(labelNames);
    cumulative = List.copyOf(cumulative);
    lastInterval = List.copyOf(lastInterval);
    retained = List.copyOf(retained);
    pathLabels = List.copyOf(pathLabels);
    attributeNames = List.copyOf(attributeNames);
    if (attributeNames.size() != labelNames.size()) {
      throw new IllegalArgumentException(
          attributeNames.size() + " attribute names for the labels " + labelNames);
    }
  }

  /** A snapshot whose labels are named as their attributes (no {@code .} in them). */
  public SchemeSnapshot(
      String scheme,
      List<String> labelNames,
      List<SeriesSnapshot> cumulative,
      List<SeriesSnapshot> lastInterval,
      long lastIntervalEndUnixNanos,
      int groups,
      String query,
      long intervalNanos,
      List<IntervalSnapshot> retained,
      List<String> pathLabels) {
    this(
        scheme,
        labelNames,
        cumulative,
        lastInterval,
        lastIntervalEndUnixNanos,
        groups,
        query,
        intervalNanos,
        retained,
        pathLabels,
        labelNames);
  }
}
