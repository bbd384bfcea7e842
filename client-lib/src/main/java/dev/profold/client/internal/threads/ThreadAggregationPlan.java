package dev.profold.client.internal.threads;

import dev.profold.client.ThreadAggregation;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which thread aggregation each thread group gets: a default mode and overrides by group name
 * ({@code http-exec-*}). Aggregates each group with its mode and concatenates the results; since
 * every mode works within a group, this equals running each mode on its own groups. Immutable and
 * thread-safe.
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
    Map<ThreadAggregation, List<ThreadSnapshot>> byMode = new LinkedHashMap<>();
    for (ThreadSnapshot t : threads) {
      byMode.computeIfAbsent(modeOf(t.group()), m -> new ArrayList<>()).add(t);
    }
    List<AggregatedEntry> out = new ArrayList<>();
    for (Map.Entry<ThreadAggregation, List<ThreadSnapshot>> e : byMode.entrySet()) {
      out.addAll(
          ThreadAggregators.forMode(e.getKey()).aggregate(e.getValue(), contexts, timeMetric));
    }
    return out;
  }
}
