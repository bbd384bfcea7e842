package dev.profold.collector.query.online;

import dev.profold.collector.query.PreAggregated;
import dev.profold.reduce.Aggregate;
import dev.profold.sinks.snapshot.IntervalSnapshot;
import dev.profold.sinks.snapshot.SchemeSnapshot;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import dev.profold.sinks.snapshot.StateSnapshot;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns what a scheme holds into CalQL input records, so that a query runs over the collector's
 * aggregates exactly as over the raw values they summarise. Stateless and thread-safe.
 *
 * <p>One record per distinct tuple of label values (in order of first appearance): each label of
 * the scheme as a string attribute, {@value #COUNT} as the number of values behind the record (the
 * largest count among its measurements' states, which for region entries is the number of region
 * executions), and each measurement name as a {@link PreAggregated} state. The states of a tuple's
 * series across the chosen intervals are merged first, with the same exact merge the fold uses, so
 * {@code count()}, {@code sum}, {@code avg}, {@code variance}, {@code stddev}, {@code min}, {@code
 * max}, {@code histogram} and {@code quantile} come out as they would from the raw values.
 *
 * <p>Details: series with an empty state add nothing, and a tuple left without any value gives no
 * record. A state keeps its histogram only when the histogram accounts for every value (every
 * merged state carried one); otherwise {@code histogram} and {@code quantile} are empty for it
 * rather than wrong. Measurement values are floating point in the collector, so sums, minima and
 * maxima print as floating point. A label or measurement named {@value #COUNT} takes precedence
 * over the record count; a label takes precedence over a measurement of the same name.
 */
public final class SnapshotRecords {
  /** The attribute holding the number of values behind a record (CalQL's {@code count()}). */
  public static final String COUNT = "count";

  private SnapshotRecords() {}

  /**
   * What a query over {@code scheme} and {@code range} reads.
   *
   * @param intervals the retained intervals that were merged, oldest first; empty when cumulative
   * @param records the input records
   */
  public record Selection(List<Interval> intervals, List<Map<String, Object>> records) {
    public Selection {
      intervals = List.copyOf(intervals);
      records = Collections.unmodifiableList(new ArrayList<>(records));
    }
  }

  /**
   * The records of {@code scheme} over {@code range}: its cumulative series when the range has no
   * bound, else the merged series of the retained intervals the range covers ({@link
   * TimeRange#covers}). Their attributes are named as the scheme's query names them ({@code
   * thread.group}, not the label {@code thread_group}), so that its own query reads them.
   */
  public static Selection select(SchemeSnapshot scheme, TimeRange range) {
    if (range.isCumulative()) {
      return new Selection(
          List.of(),
          records(scheme.attributeNames(), scheme.pathLabels(), List.of(scheme.cumulative())));
    }
    List<Interval> covered = new ArrayList<>();
    List<List<SeriesSnapshot>> parts = new ArrayList<>();
    for (IntervalSnapshot i : scheme.retained()) {
      if (range.covers(i)) {
        covered.add(new Interval(i.startUnixNanos(), i.endUnixNanos()));
        parts.add(i.series());
      }
    }
    return new Selection(covered, records(scheme.attributeNames(), scheme.pathLabels(), parts));
  }

  /**
   * Records from series: one per distinct label-value tuple over all {@code parts}, states of the
   * same tuple and measurement merged.
   *
   * @param labelNames the names of the series' label values, in order
   * @throws IllegalArgumentException when a series has a different number of label values
   */
  public static List<Map<String, Object>> records(
      List<String> labelNames, Collection<? extends Collection<SeriesSnapshot>> parts) {
    return records(labelNames, List.of(), parts);
  }

  /**
   * As {@link #records(List, Collection)}, with the labels named in {@code pathLabels} as nested
   * paths (lists of names, split at {@code /}; an empty path leaves the attribute out), so WHERE
   * matches any level, the tree format nests and inclusive operators roll up, as for records read
   * from files.
   */
  public static List<Map<String, Object>> records(
      List<String> labelNames,
      List<String> pathLabels,
      Collection<? extends Collection<SeriesSnapshot>> parts) {
    Map<List<String>, Map<String, Aggregate>> tuples = new LinkedHashMap<>();
    for (Collection<SeriesSnapshot> part : parts) {
      for (SeriesSnapshot s : part) {
        if (s.labelValues().size() != labelNames.size()) {
          throw new IllegalArgumentException(
              "a series has "
                  + s.labelValues().size()
                  + " label values for the "
                  + labelNames.size()
                  + " labels "
                  + labelNames);
        }
        if (s.state().count() == 0) {
          continue;
        }
        mergeInto(
            tuples
                .computeIfAbsent(s.labelValues(), k -> new LinkedHashMap<>())
                .computeIfAbsent(s.measure().name(), k -> new Aggregate()),
            s.state());
      }
    }
    List<Map<String, Object>> out = new ArrayList<>(tuples.size());
    for (Map.Entry<List<String>, Map<String, Aggregate>> t : tuples.entrySet()) {
      Map<String, Object> record = new LinkedHashMap<>();
      List<String> values = t.getKey();
      for (int i = 0; i < labelNames.size(); i++) {
        String v = values.get(i);
        if (!pathLabels.contains(labelNames.get(i))) {
          record.put(labelNames.get(i), v);
        } else if (!v.isEmpty()) {
          record.put(labelNames.get(i), List.of(v.split("/", -1)));
        }
      }
      long count = 0;
      for (Aggregate a : t.getValue().values()) {
        count = Math.max(count, a.count());
      }
      if (!record.containsKey(COUNT) && !t.getValue().containsKey(COUNT)) {
        record.put(COUNT, count);
      }
      for (Map.Entry<String, Aggregate> m : t.getValue().entrySet()) {
        Aggregate a = m.getValue();
        boolean histogram = a.histogram().totalCount() == a.count();
        record.putIfAbsent(m.getKey(), PreAggregated.of(a, false, histogram));
      }
      out.add(Collections.unmodifiableMap(record));
    }
    return Collections.unmodifiableList(out);
  }

  /** Adds {@code s} to {@code target}: moments always, buckets when {@code s} has any. */
  static void mergeInto(Aggregate target, StateSnapshot s) {
    target.mergeMoments(s.count(), s.sum(), s.min(), s.max(), s.sumOfSquares());
    if (s.histogramTotal() > 0) {
      long[] positive = s.positiveCounts();
      long[] negative = s.negativeCounts();
      target
          .histogram()
          .mergeRaw(
              s.scale(),
              s.zeroCount(),
              s.positiveOffset(),
              positive,
              0,
              positive.length,
              s.negativeOffset(),
              negative,
              0,
              negative.length);
    }
  }
}
