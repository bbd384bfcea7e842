package dev.profold.collector.analysis;

import dev.profold.collector.analysis.RegionImbalance.NodeImbalance;
import dev.profold.sinks.snapshot.CollectorSnapshot;
import dev.profold.sinks.snapshot.SnapshotSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Imbalance and waiting across the threads of a thread group, per region node: HPCToolkit's Table 1
 * and its two significance criteria ({@link RegionImbalance}) over the threads of one group of one
 * instance instead of over instances, from the thread detail the client's thread aggregation sends
 * ({@code NONE}, {@code SET} or {@code KEY}; see {@link ThreadGroupSpreads} for what each gives and
 * how exact it is). The runtime the shares are taken of is the group's largest thread total.
 *
 * <p>Values, per thread group, labels {@code service, instance, thread_group, path, kind}:
 *
 * <ul>
 *   <li>{@value #IMBALANCE}: imb(N), for the {@code top_nodes} nodes with the most;
 *   <li>{@value #IMBALANCE_RATIO}: imb(N) / runtime, same nodes;
 *   <li>{@value #SIGNIFICANT_IMBALANCE_RATIO}: the same, for the {@code top_nodes} significant
 *       nodes with the most imbalance only;
 *   <li>{@value #WAIT}: wait(N), for the {@code top_nodes} nodes with the most (positive only).
 * </ul>
 *
 * Context: {@code min}, {@code avg}, {@code max} (seconds per thread), {@code threads}, {@code
 * wait}, {@code sum_imbalance}, {@code runtime}, {@code significant}, {@code category}, {@code
 * slowest_thread}, {@code fastest_thread} (a thread name for NONE, a role for KEY, empty for SET),
 * {@code source} ({@code none}, {@code set}, {@code key}) and {@code estimate} ({@code exact}, or
 * {@code lower bound} for KEY's imb).
 *
 * <p>Computed from one snapshot, again only when the source hands out another; thread-safe as its
 * source is.
 */
public final class ThreadRegionImbalanceValues implements DerivedValues {
  /** The per-thread measurement of the SET thread aggregation. */
  public static final String MEASURE = ThreadGroupSpreads.PER_THREAD;

  public static final String IMBALANCE = "thread_region_imbalance_seconds";
  public static final String IMBALANCE_RATIO = "thread_region_imbalance_ratio";
  public static final String SIGNIFICANT_IMBALANCE_RATIO =
      "thread_region_significant_imbalance_ratio";
  public static final String WAIT = "thread_region_wait_seconds";

  private final SnapshotSource source;
  private final AnalysisSpec spec;
  // The values of the last inputs seen: the schemes' closed intervals and the groups' thread
  // counts. The fold hands out a new snapshot after every delta, but these change far less often.
  private volatile Computed last = new Computed(null, List.of());

  /**
   * What the values are computed from: each scheme's name, query, last closed interval's end and
   * size (a closed interval does not change), and the thread count of every group.
   */
  private record Inputs(List<List<Object>> intervals, Map<List<String>, Integer> threads) {
    static Inputs of(CollectorSnapshot snapshot) {
      List<List<Object>> intervals = new ArrayList<>();
      for (var s : snapshot.schemes()) {
        intervals.add(
            List.of(s.scheme(), s.query(), s.lastIntervalEndUnixNanos(), s.lastInterval().size()));
      }
      return new Inputs(intervals, ThreadGroupSpreads.activeThreads(snapshot));
    }
  }

  private record Computed(Inputs inputs, List<DerivedValue> values) {}

  public ThreadRegionImbalanceValues(SnapshotSource source, AnalysisSpec spec) {
    this.source = source;
    this.spec = spec;
  }

  @Override
  public List<DerivedValue> current() {
    return values(source.snapshot());
  }

  /** The values and the schemes' family names, from one snapshot (for /metrics). */
  AnalysisExposition.Exposed exposed() {
    CollectorSnapshot snapshot = source.snapshot();
    return new AnalysisExposition.Exposed(
        values(snapshot), RegionAnalysisValues.families(snapshot));
  }

  /**
   * The values for {@code snapshot}: the last ones while their inputs are the same; else computed,
   * one computation at a time (a scrape and an alert evaluation wait for the one under way).
   */
  private synchronized List<DerivedValue> values(CollectorSnapshot snapshot) {
    Inputs inputs = Inputs.of(snapshot);
    Computed c = last;
    if (!inputs.equals(c.inputs())) {
      c = new Computed(inputs, compute(snapshot, inputs.threads()));
      last = c;
    }
    return c.values();
  }

  private List<DerivedValue> compute(
      CollectorSnapshot snapshot, Map<List<String>, Integer> threads) {
    List<DerivedValue> out = new ArrayList<>();
    for (ThreadGroupSpreads.Group g : ThreadGroupSpreads.of(snapshot, threads)) {
      if (g.threads() < 2) {
        // One thread has no spread: its imbalance would read 0 and its whole wait as balanced
        // waiting (a lone consumer's idle wait firing a rule on thread_region_wait_seconds).
        continue;
      }
      Guarded.add(
          "thread group " + g.group() + " of " + g.service() + "/" + g.instance(),
          own -> analyse(g, own),
          out);
    }
    return List.copyOf(out);
  }

  private void analyse(ThreadGroupSpreads.Group g, List<DerivedValue> out) {
    RegionImbalance.Result r =
        RegionImbalance.assess(
            g.spreads(), g.runtime(), spec.imbalanceRuntimeShare(), spec.imbalanceLeafShare());
    for (NodeImbalance n :
        RegionAnalysisValues.top(r.nodes(), NodeImbalance::imbalance, false, spec.topNodes())) {
      Map<String, String> labels = labels(g, n);
      Map<String, String> context = context(g, r, n);
      out.add(new DerivedValue(IMBALANCE, labels, n.imbalance(), context));
      out.add(new DerivedValue(IMBALANCE_RATIO, labels, n.runtimeShare(), context));
    }
    for (NodeImbalance n :
        RegionAnalysisValues.top(
            RegionAnalysisValues.significant(r.nodes()),
            NodeImbalance::imbalance,
            false,
            spec.topNodes())) {
      out.add(
          new DerivedValue(
              SIGNIFICANT_IMBALANCE_RATIO, labels(g, n), n.runtimeShare(), context(g, r, n)));
    }
    for (NodeImbalance n :
        RegionAnalysisValues.top(r.nodes(), NodeImbalance::waiting, true, spec.topNodes())) {
      Map<String, String> context = context(g, r, n);
      if (g.source() == ThreadGroupSpreads.Source.KEY) {
        // wait is min at a sync node, and KEY's min is at least the true one; avg is exact
        context.put(
            "estimate",
            n.category() == RegionImbalance.Category.SYNCHRONIZATION ? "upper bound" : "exact");
      }
      out.add(new DerivedValue(WAIT, labels(g, n), n.waiting(), context));
    }
  }

  private static Map<String, String> labels(ThreadGroupSpreads.Group g, NodeImbalance n) {
    return Map.of(
        "service", g.service(),
        "instance", g.instance(),
        "thread_group", g.group(),
        "path", n.node().path(),
        "kind", n.node().kind());
  }

  private static Map<String, String> context(
      ThreadGroupSpreads.Group g, RegionImbalance.Result r, NodeImbalance n) {
    Map<String, String> c = RegionAnalysisValues.nodeContext(n);
    c.put("threads", Integer.toString(g.threads()));
    c.put("wait", RegionAnalysisValues.number(n.waiting()));
    c.put("runtime", RegionAnalysisValues.number(r.runtime()));
    c.put("slowest_thread", n.slowest());
    c.put("fastest_thread", n.fastest());
    c.put("source", g.source().label());
    c.put("estimate", g.source() == ThreadGroupSpreads.Source.KEY ? "lower bound" : "exact");
    return c;
  }
}
