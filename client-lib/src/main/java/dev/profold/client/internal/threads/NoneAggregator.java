package dev.profold.client.internal.threads;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code NONE}: every thread separately, labelled {@code thread -> name}; threads of one group that
 * share a name become {@code name#threadId}.
 */
final class NoneAggregator implements ThreadAggregator {
  @Override
  public List<AggregatedEntry> aggregate(
      List<ThreadSnapshot> threads, ContextView contexts, int timeMetric) {
    List<AggregatedEntry> out = new ArrayList<>();
    Grouping.byGroup(threads)
        .forEach(
            (group, members) -> {
              Map<String, Integer> sameName = new HashMap<>();
              for (ThreadSnapshot t : members) {
                sameName.merge(t.name(), 1, Integer::sum);
              }
              List<Map.Entry<String, ThreadSnapshot>> named = new ArrayList<>();
              for (ThreadSnapshot t : members) {
                String label =
                    sameName.get(t.name()) > 1 ? t.name() + "#" + t.threadId() : t.name();
                named.add(Map.entry(label, t));
              }
              // members are sorted by thread id and the sort is stable: ties stay in id order
              named.sort(Map.Entry.comparingByKey(Comparator.naturalOrder()));
              for (Map.Entry<String, ThreadSnapshot> n : named) {
                Grouping.emitMerged(
                    List.of(n.getValue()),
                    Grouping.labels(group, ThreadAggregators.THREAD, n.getKey()),
                    out);
              }
            });
    return out;
  }
}
