package dev.profold.client.internal.threads;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * {@code CALLTREE}: per group, threads whose sets of visited contexts are identical form a cluster;
 * each cluster is merged and labelled {@code thread.cluster -> n}.
 *
 * <p>After Score-P's CALLTREE strategy: two threads share a cluster exactly when, for every call
 * path, both visited it or neither did. Here a context counts as visited when the thread has a cell
 * for it (any metric but the durations of asynchronous regions, which the thread that ended them
 * records wherever they ran). Clusters are numbered from 0 in order of their smallest thread id;
 * the number of clusters ({@link ThreadAggregators#clusters}) is itself a result: it says how many
 * distinct behaviours the group's threads show.
 */
final class CalltreeAggregator implements ThreadAggregator {
  @Override
  public List<AggregatedEntry> aggregate(
      List<ThreadSnapshot> threads, ContextView contexts, int timeMetric) {
    List<AggregatedEntry> out = new ArrayList<>();
    Grouping.byGroup(threads)
        .forEach(
            (group, members) -> {
              List<List<ThreadSnapshot>> clusters = clusters(members, contexts::visits);
              for (int i = 0; i < clusters.size(); i++) {
                Grouping.emitMerged(
                    clusters.get(i),
                    Grouping.labels(group, ThreadAggregators.CLUSTER, Integer.toString(i)),
                    out);
              }
            });
    return out;
  }

  /**
   * The clusters of one group's threads (given sorted by thread id), in order of their smallest
   * thread id, each cluster's threads in id order; a cell counts as a visit when {@code visits}
   * holds for its measurement ({@link ContextView#visits}).
   */
  static List<List<ThreadSnapshot>> clusters(
      List<ThreadSnapshot> members, java.util.function.IntPredicate visits) {
    Map<Set<Integer>, List<ThreadSnapshot>> byVisited = new LinkedHashMap<>();
    for (ThreadSnapshot t : members) {
      Set<Integer> visited = new TreeSet<>();
      for (Cell c : t.cells()) {
        if (visits.test(c.metric())) {
          visited.add(c.context());
        }
      }
      byVisited.computeIfAbsent(visited, v -> new ArrayList<>()).add(t);
    }
    return new ArrayList<>(byVisited.values());
  }
}
