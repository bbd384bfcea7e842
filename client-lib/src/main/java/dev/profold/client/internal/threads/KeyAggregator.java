package dev.profold.client.internal.threads;

import dev.profold.client.Kind;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code KEY}: per group, the initial thread, the slowest and the fastest thread kept apart and the
 * rest merged, labelled {@code thread.role}.
 *
 * <p>After Score-P's KEY strategy: threads are ranked by the time they spent in regions that do
 * work ({@link Kind#COMPUTE}), not in synchronisation or waiting; the one with the most such time
 * is the slowest, the one with the least the fastest. A region's time includes its nested regions',
 * so a COMPUTE region nested in another one the thread recorded time in is not counted again: a
 * thread's work time is that of its outermost COMPUTE regions, at most its wall time (before,
 * {@code handle/parse/validate} counted one second of work three times). The initial thread is kept
 * anyway and takes no part in the ranking. Ties go to the lower thread id. With a single
 * non-initial thread it is the slowest; threads flagged initial are all merged under {@code
 * initial}.
 */
final class KeyAggregator implements ThreadAggregator {
  @Override
  public List<AggregatedEntry> aggregate(
      List<ThreadSnapshot> threads, ContextView contexts, int timeMetric) {
    List<AggregatedEntry> out = new ArrayList<>();
    Map<Integer, Boolean> compute = new HashMap<>();
    Grouping.byGroup(threads)
        .forEach(
            (group, members) -> {
              List<ThreadSnapshot> initial = new ArrayList<>();
              List<ThreadSnapshot> others = new ArrayList<>();
              for (ThreadSnapshot t : members) {
                (t.initial() ? initial : others).add(t);
              }
              double[] time = new double[others.size()];
              for (int i = 0; i < time.length; i++) {
                time[i] = computeTime(others.get(i), contexts, timeMetric, compute);
              }
              // others are in thread id order: strict comparisons give ties to the lower id
              int slow = -1;
              for (int i = 0; i < time.length; i++) {
                if (slow < 0 || Double.compare(time[i], time[slow]) > 0) {
                  slow = i;
                }
              }
              int fast = -1;
              for (int i = 0; i < time.length; i++) {
                if (i != slow && (fast < 0 || Double.compare(time[i], time[fast]) < 0)) {
                  fast = i;
                }
              }
              List<ThreadSnapshot> slowest = new ArrayList<>();
              List<ThreadSnapshot> fastest = new ArrayList<>();
              List<ThreadSnapshot> rest = new ArrayList<>();
              for (int i = 0; i < time.length; i++) {
                (i == slow ? slowest : i == fast ? fastest : rest).add(others.get(i));
              }
              emit(group, ThreadAggregators.ROLE_INITIAL, initial, out);
              emit(group, ThreadAggregators.ROLE_SLOWEST, slowest, out);
              emit(group, ThreadAggregators.ROLE_FASTEST, fastest, out);
              emit(group, ThreadAggregators.ROLE_REST, rest, out);
            });
    return out;
  }

  /**
   * Total of {@code timeMetric} over the thread's cells in COMPUTE contexts that lie in no other
   * such context of the thread (an ancestor of another region path).
   */
  static double computeTime(
      ThreadSnapshot t, ContextView contexts, int timeMetric, Map<Integer, Boolean> memo) {
    Set<Integer> timed = new HashSet<>();
    for (Cell c : t.cells()) {
      if (c.metric() == timeMetric
          && memo.computeIfAbsent(c.context(), x -> contexts.kind(x) == Kind.COMPUTE)) {
        timed.add(c.context());
      }
    }
    double total = 0;
    for (Cell c : t.cells()) {
      if (c.metric() == timeMetric
          && timed.contains(c.context())
          && !nestedInTimed(c.context(), contexts, timed)) {
        total += c.state().sum();
      }
    }
    return total;
  }

  /**
   * Whether an ancestor of {@code context} on another region path (an enclosing region, not the
   * same region with fewer attributes) is in {@code timed}.
   */
  private static boolean nestedInTimed(int context, ContextView contexts, Set<Integer> timed) {
    int node = contexts.pathNode(context);
    for (int p = contexts.parent(context); p >= 0; p = contexts.parent(p)) {
      if (contexts.pathNode(p) != node && timed.contains(p)) {
        return true;
      }
    }
    return false;
  }

  private static void emit(
      String group, String role, List<ThreadSnapshot> threads, List<AggregatedEntry> out) {
    if (!threads.isEmpty()) {
      Grouping.emitMerged(threads, Grouping.labels(group, ThreadAggregators.ROLE, role), out);
    }
  }
}
