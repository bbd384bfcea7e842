package dev.profold.client.internal.threads;

import dev.profold.reduce.Aggregate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * {@code SET}: the group's merge (as {@code SUM}) plus, per (context, metric), the distribution
 * across threads of each visiting thread's total: one recorded value per thread, so the per-thread
 * aggregate's count is the number of threads that visited, and its min, max and sum of squares
 * describe the spread (Score-P's SET strategy, which keeps sum, min, max, number of visiting
 * threads and sum of squares element-wise).
 */
final class SetAggregator implements ThreadAggregator {
  @Override
  public List<AggregatedEntry> aggregate(
      List<ThreadSnapshot> threads, ContextView contexts, int timeMetric) {
    List<AggregatedEntry> out = new ArrayList<>();
    Grouping.byGroup(threads)
        .forEach(
            (group, members) -> {
              Map<String, String> labels = Grouping.labels(group);
              SortedMap<Long, Aggregate> sums = Grouping.merge(members);
              SortedMap<Long, Aggregate> spread = new TreeMap<>();
              for (ThreadSnapshot t : members) {
                Map<Long, Double> totals = new HashMap<>();
                for (Cell c : t.cells()) {
                  totals.merge(c.key(), c.state().sum(), Double::sum);
                }
                totals.forEach(
                    (k, total) -> spread.computeIfAbsent(k, x -> new Aggregate()).record(total));
              }
              sums.forEach(
                  (k, sum) -> {
                    int context = Grouping.context(k);
                    int metric = Grouping.metric(k);
                    out.add(new AggregatedEntry(context, labels, metric, false, sum));
                    Aggregate perThread = spread.get(k);
                    if (!perThread.isEmpty()) { // empty only when every thread's total overflowed
                      out.add(new AggregatedEntry(context, labels, metric, true, perThread));
                    }
                  });
            });
    return out;
  }
}
