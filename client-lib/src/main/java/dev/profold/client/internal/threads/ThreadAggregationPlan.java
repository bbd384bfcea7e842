package dev.profold.client.internal.threads;

import dev.profold.client.ThreadAggregation;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which thread aggregation each thread group gets: a default mode and overrides by group name
 * ({@code http-exec-*}). Aggregates each group with its mode and concatenates the results in group
 * name order; since every mode works within a group, this equals running each mode on its own
 * groups, and the output is ordered by group as a single mode's is. Immutable and thread-safe.
 */
public final class ThreadAggregationPlan {
  private final ThreadAggregation defaultMode;
  private final Map<String, ThreadAggregation> byGroup;

  public ThreadAggregationPlan(
      ThreadAggregation defaultMode, Map<String, ThreadAggregation> byGroup) {
    this.defaultMode = defaultMode;
    this.byGroup = Map.copyOf(byGroup);
  }

  /** The mode of thread group {@code group}. */
  public ThreadAggregation modeOf(String group) {
    return byGroup.getOrDefault(group, defaultMode);
  }

  /** The mode applied to groups without an override (the one a delta reports). */
  public ThreadAggregation defaultMode() {
    return defaultMode;
  }

  /** Aggregates each thread group with its mode; see {@link ThreadAggregator#aggregate}. */
  public List<AggregatedEntry> aggregate(
      List<ThreadSnapshot> threads, ContextView contexts, int timeMetric) {
    if (byGroup.isEmpty()) {
      return ThreadAggregators.forMode(defaultMode).aggregate(threads, contexts, timeMetric);
    }
    // Group by group, in name order, as each mode orders its own output.
    Map<String, List<ThreadSnapshot>> groups = new TreeMap<>();
    for (ThreadSnapshot t : threads) {
      groups.computeIfAbsent(t.group(), g -> new ArrayList<>()).add(t);
    }
    List<AggregatedEntry> out = new ArrayList<>();
    for (Map.Entry<String, List<ThreadSnapshot>> e : groups.entrySet()) {
      out.addAll(
          ThreadAggregators.forMode(modeOf(e.getKey()))
              .aggregate(e.getValue(), contexts, timeMetric));
    }
    return out;
  }
}
