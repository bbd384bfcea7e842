package dev.profold.client.internal.threads;

import dev.profold.client.ThreadAggregation;
import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The {@link ThreadAggregator} of each {@link ThreadAggregation} mode, and the label names they
 * use.
 *
 * <p>Every aggregator groups threads by {@link ThreadSnapshot#group()} first; every entry's labels
 * start with {@value #GROUP}. Output order is deterministic and independent of the input order:
 * groups by name; within a group by the mode's partition (NONE: thread label; KEY: {@value
 * #ROLE_INITIAL}, {@value #ROLE_SLOWEST}, {@value #ROLE_FASTEST}, {@value #ROLE_REST}; CALLTREE:
 * cluster number); then by context id, metric id, and (SET) the sum before the per-thread entry.
 *
 * <p>The aggregators are stateless and thread-safe and never modify their input.
 */
public final class ThreadAggregators {
  /** Label of the thread group, on every entry. */
  public static final String GROUP = "thread.group";

  /** Label of the thread (NONE). */
  public static final String THREAD = "thread";

  /** Label of a thread's role (KEY). */
  public static final String ROLE = "thread.role";

  /** Label of the cluster number (CALLTREE). */
  public static final String CLUSTER = "thread.cluster";

  /** KEY role of the process's initial thread. */
  public static final String ROLE_INITIAL = "initial";

  /** KEY role of the thread with the most COMPUTE time. */
  public static final String ROLE_SLOWEST = "slowest";

  /** KEY role of the thread with the least COMPUTE time. */
  public static final String ROLE_FASTEST = "fastest";

  /** KEY role of the merge of all other threads. */
  public static final String ROLE_REST = "rest";

  private static final ThreadAggregator NONE = new NoneAggregator();
  private static final ThreadAggregator SUM = new SumAggregator();
  private static final ThreadAggregator SET = new SetAggregator();
  private static final ThreadAggregator KEY = new KeyAggregator();
  private static final ThreadAggregator CALLTREE = new CalltreeAggregator();

  private ThreadAggregators() {}

  /** The aggregator for {@code mode}. */
  public static ThreadAggregator forMode(ThreadAggregation mode) {
    return switch (mode) {
      case NONE -> NONE;
      case SUM -> SUM;
      case SET -> SET;
      case KEY -> KEY;
      case CALLTREE -> CALLTREE;
    };
  }

  /** The wire value announcing {@code mode} in a delta. */
  public static dev.profold.proto.v1.ThreadAggregation toProto(ThreadAggregation mode) {
    return switch (mode) {
      case NONE -> dev.profold.proto.v1.ThreadAggregation.THREAD_AGGREGATION_NONE;
      case SUM -> dev.profold.proto.v1.ThreadAggregation.THREAD_AGGREGATION_SUM;
      case SET -> dev.profold.proto.v1.ThreadAggregation.THREAD_AGGREGATION_SET;
      case KEY -> dev.profold.proto.v1.ThreadAggregation.THREAD_AGGREGATION_KEY;
      case CALLTREE -> dev.profold.proto.v1.ThreadAggregation.THREAD_AGGREGATION_CALLTREE;
    };
  }

  /**
   * CALLTREE's clusters per group: for each group (sorted by name), the clusters in cluster-number
   * order, each as the ascending ids of its threads. The number of clusters of a group is the size
   * of its list; cluster {@code n} is the one whose entries carry {@code thread.cluster -> n}.
   */
  public static SortedMap<String, List<List<Long>>> clusters(
      List<ThreadSnapshot> threads, ContextView contexts) {
    return clusters(threads, contexts::visits, contexts::pathNode);
  }

  /**
   * As {@link #clusters(List, ContextView)} for cells whose context ids stand for their region
   * paths, every cell a visit (tests, and the compression experiment, whose contexts are paths).
   */
  public static SortedMap<String, List<List<Long>>> clusters(List<ThreadSnapshot> threads) {
    return clusters(threads, metric -> true, context -> context);
  }

  private static SortedMap<String, List<List<Long>>> clusters(
      List<ThreadSnapshot> threads,
      java.util.function.IntPredicate visits,
      java.util.function.IntUnaryOperator pathNode) {
    SortedMap<String, List<List<Long>>> out = new TreeMap<>();
    Grouping.byGroup(threads)
        .forEach(
            (group, members) -> {
              List<List<Long>> ids = new ArrayList<>();
              for (List<ThreadSnapshot> cluster :
                  CalltreeAggregator.clusters(members, visits, pathNode)) {
                ids.add(cluster.stream().map(ThreadSnapshot::threadId).toList());
              }
              out.put(group, List.copyOf(ids));
            });
    return out;
  }
}
