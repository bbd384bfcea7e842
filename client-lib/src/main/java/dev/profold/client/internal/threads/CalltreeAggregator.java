package dev.profold.client.internal.threads;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * {@code CALLTREE}: per group, threads whose sets of visited region paths are identical form a
 * cluster; each cluster is merged and labelled {@code thread.cluster -> n}.
 *
 * <p>After Score-P's CALLTREE strategy: two threads share a cluster exactly when, for every call
 * path, both visited it or neither did. Here a region path counts as visited when the thread has a
 * cell in a context on it (any metric but the durations of asynchronous regions, which the thread
 * that ended them records wherever they ran). What a thread records outside any region (path node
 * 0, the root) visits no path. Scoped attributes do not count: a call tree is made of paths, and
 * with a per-request attribute (a tenant, say) no two threads would share a context set (before,
 * clusters were then as many as threads). The entries keep their attributes. Clusters are numbered
 * from 0 in order of their smallest thread id, in each interval anew: a number is a position, not
 * an identity across intervals. The number of clusters ({@link ThreadAggregators#clusters}) is
 * itself a result: it says how many distinct behaviours the group's threads show.
 */
final class CalltreeAggregator implements ThreadAggregator {
  @Override
  public List<AggregatedEntry> aggregate(
      List<ThreadSnapshot> threads, ContextView contexts, int timeMetric) {
    List<AggregatedEntry> out = new ArrayList<>();
    Grouping.byGroup(threads)
        .forEach(
            (group, members) -> {
              List<List<ThreadSnapshot>> clusters =
                  clusters(members, contexts::visits, contexts::pathNode);
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
   * thread id, each cluster's threads in id order; a cell counts as a visit of the region path
   * {@code pathNode} gives for its context when {@code visits} holds for its measurement ({@link
   * ContextView#visits}).
   */
  static List<List<ThreadSnapshot>> clusters(
      List<ThreadSnapshot> members,
      java.util.function.IntPredicate visits,
      java.util.function.IntUnaryOperator pathNode) {
    Map<Set<Integer>, List<ThreadSnapshot>> byVisited = new LinkedHashMap<>();
    for (ThreadSnapshot t : members) {
      Set<Integer> visited = new TreeSet<>();
      for (Cell c : t.cells()) {
        if (visits.test(c.metric())) {
          int node = pathNode.applyAsInt(c.context());
          if (node != 0) { // the root: outside any region, no path visited
            visited.add(node);
          }
        }
      }
      byVisited.computeIfAbsent(visited, v -> new ArrayList<>()).add(t);
    }
    return new ArrayList<>(byVisited.values());
  }
}
