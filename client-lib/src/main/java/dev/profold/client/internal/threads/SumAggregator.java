package dev.profold.client.internal.threads;

import java.util.ArrayList;
import java.util.List;

/** {@code SUM}: all threads of a group merged into one set of entries. */
final class SumAggregator implements ThreadAggregator {
  @Override
  public List<AggregatedEntry> aggregate(
      List<ThreadSnapshot> threads, ContextView contexts, int timeMetric) {
    List<AggregatedEntry> out = new ArrayList<>();
    Grouping.byGroup(threads)
        .forEach((group, members) -> Grouping.emitMerged(members, Grouping.labels(group), out));
    return out;
  }
}
