package dev.profold.client.internal.threads;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code NONE}: every thread separately, labelled {@code thread -> name}; threads of one group that
 * share a name become {@code name#threadId}, with {@code #threadId} added again in the rare case
 * that this is another thread's own name, so every thread of a group has its own label.
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
              java.util.Set<String> taken = new java.util.HashSet<>();
              for (ThreadSnapshot t : members) {
                if (sameName.get(t.name()) == 1) {
                  taken.add(t.name()); // a thread keeps its own name when it is unique
                }
              }
              List<Map.Entry<String, ThreadSnapshot>> named = new ArrayList<>();
              for (ThreadSnapshot t : members) {
                String label = t.name();
                if (sameName.get(t.name()) > 1) {
                  label = t.name() + "#" + t.threadId();
                  while (!taken.add(label)) {
                    label = label + "#" + t.threadId();
                  }
                }
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
