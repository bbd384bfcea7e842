package dev.profold.client.internal.threads;

import java.util.List;

/**
 * Reduces the per-thread snapshots of one interval to the entries of a delta. Implementations are
 * stateless and thread-safe; they never modify their input's aggregates (they merge into fresh
 * ones), and every strategy preserves the totals: the merge of all non-{@code perThread} output
 * states for a (context, metric) equals the merge of all threads' cells for it.
 */
public interface ThreadAggregator {
  /**
   * Aggregates one interval's snapshots.
   *
   * @param threads the snapshots, one per thread that recorded anything
   * @param contexts context look-ups (kinds for KEY's choice of slowest and fastest thread)
   * @param timeMetric the metric whose totals in COMPUTE contexts rank threads for KEY
   */
  List<AggregatedEntry> aggregate(
      List<ThreadSnapshot> threads, ContextView contexts, int timeMetric);
}
