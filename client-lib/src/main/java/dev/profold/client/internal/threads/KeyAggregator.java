package dev.profold.client.internal.threads;

import dev.profold.client.Kind;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code KEY}: per group, the initial thread, the slowest and the fastest thread kept apart and the
 * rest merged, labelled {@code thread.role}.
 *
 * <p>After Score-P's KEY strategy: threads are ranked by the time they spent in regions that do
 * work ({@link Kind#COMPUTE}), not in synchronisation or waiting; the one with the most such time
 * is the slowest, the one with the least the fastest. A region's time includes its nested regions',
 * so the ranking uses the self time of COMPUTE regions ({@link #computeTime}): at most the thread's
 * wall time, and no wait in a nested region (before, {@code handle/parse/validate} counted one
 * second of work three times). The initial thread is kept anyway and takes no part in the ranking.
 * Ties go to the lower thread id. With a single non-initial thread it is the slowest; threads
 * flagged initial are all merged under {@code initial}.
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
   * The thread's self time in COMPUTE regions: per region path, its time (over the contexts on that
   * path, whatever their attributes) minus the time of the paths nested directly in it, summed over
   * the COMPUTE paths. Region times are inclusive, so this is the time the thread spent in COMPUTE
   * regions themselves, neither twice for nested ones nor for a nested wait. A path whose nested
   * times exceed its own (still open) counts 0. The agent's samples and events ({@link
   * ContextView#selfTimed}) are a frame's own time already: they count whole, and are not taken
   * from the frames around them.
   */
  static double computeTime(
      ThreadSnapshot t, ContextView contexts, int timeMetric, Map<Integer, Boolean> memo) {
    Map<Integer, Double> timeAt = new HashMap<>(); // path node -> inclusive time in this thread
    Map<Integer, Integer> someContext = new HashMap<>(); // path node -> one context on it
    for (Cell c : t.cells()) {
      if (c.metric() == timeMetric) {
        int node = contexts.pathNode(c.context());
        timeAt.merge(node, c.state().sum(), Double::sum);
        someContext.putIfAbsent(node, c.context());
      }
    }
    Map<Integer, Double> nested = new HashMap<>(); // path node -> time of the paths directly in it
    for (Map.Entry<Integer, Double> e : timeAt.entrySet()) {
      int context = someContext.get(e.getKey());
      if (contexts.selfTimed(context)) {
        continue; // the agent's: its enclosing frames' times do not include it
      }
      int up = enclosing(context, e.getKey(), contexts, timeAt);
      if (up != 0) {
        nested.merge(up, e.getValue(), Double::sum);
      }
    }
    double total = 0;
    for (Map.Entry<Integer, Double> e : timeAt.entrySet()) {
      int context = someContext.get(e.getKey());
      if (e.getKey() != 0 && memo.computeIfAbsent(context, x -> contexts.kind(x) == Kind.COMPUTE)) {
        total += Math.max(0, e.getValue() - nested.getOrDefault(e.getKey(), 0.0));
      }
    }
    return total;
  }

  /**
   * The nearest region path enclosing {@code context}'s (path node {@code node}) that has time in
   * {@code timeAt}, or 0 when none does.
   */
  private static int enclosing(
      int context, int node, ContextView contexts, Map<Integer, Double> timeAt) {
    for (int p = contexts.parent(context); p >= 0; p = contexts.parent(p)) {
      int up = contexts.pathNode(p);
      if (up != node && up != 0 && timeAt.containsKey(up)) {
        return up;
      }
    }
    return 0;
  }

  private static void emit(
      String group, String role, List<ThreadSnapshot> threads, List<AggregatedEntry> out) {
    if (!threads.isEmpty()) {
      Grouping.emitMerged(threads, Grouping.labels(group, ThreadAggregators.ROLE, role), out);
    }
  }
}
