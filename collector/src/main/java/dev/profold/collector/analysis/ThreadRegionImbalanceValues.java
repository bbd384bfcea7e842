package dev.profold.collector.analysis;

import dev.profold.sinks.snapshot.CollectorSnapshot;
import dev.profold.sinks.snapshot.SchemeSnapshot;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import dev.profold.sinks.snapshot.SnapshotSource;
import dev.profold.sinks.snapshot.SourceSnapshot;
import dev.profold.sinks.snapshot.StateSnapshot;
import dev.profold.sinks.snapshot.ThreadActivitySnapshot;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Imbalance and waiting across the threads of a thread group, per call-path node (HPCToolkit's
 * Table 1 over threads instead of instances), from clients that send the {@code SET} thread
 * aggregation: its {@value #MEASURE} measurement holds, per group and node, one value per visiting
 * thread (its total), so the state's count, min, max and sum describe the spread across threads.
 *
 * <p>Read from any scheme grouping by {@code service}, {@code instance}, {@code thread.group},
 * {@code path} and {@code kind} that aggregates {@value #MEASURE} (docs/analysis.md has the one to
 * configure), from its last closed interval. A thread that did not visit the node counts as 0: the
 * group's thread count comes from the source's thread activity when it reports the group (else the
 * visiting threads are all there is). Then, by the node's kind, imb and wait as in {@link
 * RegionImbalance.Category}. Values, for the {@code topNodes} nodes with the most imbalance per
 * thread group: {@code thread_region_imbalance_seconds{service, instance, thread_group, path,
 * kind}}, with context {@code min}, {@code avg}, {@code max}, {@code threads} and {@code wait}.
 *
 * <p>Computed on each call from one snapshot; thread-safe as its source is.
 */
public final class ThreadRegionImbalanceValues implements DerivedValues {
  /** The per-thread measurement of the SET thread aggregation. */
  public static final String MEASURE = "time.per_thread";

  private static final List<String> LABELS =
      List.of("service", "instance", "thread_group", "path", "kind");

  private final SnapshotSource source;
  private final int topNodes;

  public ThreadRegionImbalanceValues(SnapshotSource source, int topNodes) {
    this.source = source;
    this.topNodes = topNodes;
  }

  private record Node(String path, String kind, double min, double avg, double max, int threads) {
    RegionImbalance.Category category() {
      return RegionImbalance.Category.of(kind);
    }

    double imbalance() {
      return category().imbalance(min, avg, max);
    }

    double waiting() {
      return category().waiting(min, avg, max);
    }
  }

  @Override
  public List<DerivedValue> current() {
    CollectorSnapshot snapshot = source.snapshot();
    Map<List<String>, Integer> groupThreads = new HashMap<>();
    for (SourceSnapshot s : snapshot.sources()) {
      for (ThreadActivitySnapshot a : s.threadActivity()) {
        if (a.current()) {
          groupThreads.put(List.of(s.service(), s.instance(), a.group()), a.threads());
        }
      }
    }
    Map<List<String>, List<Node>> byGroup = new LinkedHashMap<>();
    for (SchemeSnapshot scheme : snapshot.schemes()) {
      int[] at = new int[LABELS.size()];
      boolean usable = true;
      for (int k = 0; k < at.length; k++) {
        at[k] = scheme.labelNames().indexOf(LABELS.get(k));
        usable &= at[k] >= 0;
      }
      if (!usable) {
        continue;
      }
      for (SeriesSnapshot x : scheme.lastInterval()) {
        StateSnapshot st = x.state();
        if (!x.measure().name().equals(MEASURE) || st.count() == 0) {
          continue;
        }
        List<String> v = x.labelValues();
        List<String> group = List.of(v.get(at[0]), v.get(at[1]), v.get(at[2]));
        int visitors = (int) Math.min(Integer.MAX_VALUE, st.count());
        int threads = Math.max(visitors, groupThreads.getOrDefault(group, visitors));
        double min = visitors < threads ? 0 : st.min();
        byGroup
            .computeIfAbsent(group, g -> new ArrayList<>())
            .add(new Node(v.get(at[3]), v.get(at[4]), min, st.sum() / threads, st.max(), threads));
      }
    }
    List<DerivedValue> out = new ArrayList<>();
    for (Map.Entry<List<String>, List<Node>> e : byGroup.entrySet()) {
      List<Node> nodes = e.getValue();
      nodes.sort(Comparator.comparingDouble(Node::imbalance).reversed().thenComparing(Node::path));
      for (Node n : nodes.subList(0, Math.min(topNodes, nodes.size()))) {
        List<String> g = e.getKey();
        out.add(
            new DerivedValue(
                "thread_region_imbalance_seconds",
                Map.of(
                    "service", g.get(0),
                    "instance", g.get(1),
                    "thread_group", g.get(2),
                    "path", n.path(),
                    "kind", n.kind()),
                n.imbalance(),
                Map.of(
                    "min", seconds(n.min()),
                    "avg", seconds(n.avg()),
                    "max", seconds(n.max()),
                    "threads", Integer.toString(n.threads()),
                    "wait", seconds(n.waiting()))));
      }
    }
    return List.copyOf(out);
  }

  private static String seconds(double s) {
    return String.format(Locale.ROOT, "%.3f s", s);
  }
}
