package dev.profold.collector.analysis;

import dev.profold.collector.analysis.RegionImbalance.Spread;
import dev.profold.collector.analysis.ServiceProfile.Node;
import dev.profold.collector.fold.FoldEngine;
import dev.profold.sinks.snapshot.CollectorSnapshot;
import dev.profold.sinks.snapshot.SchemeSnapshot;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import dev.profold.sinks.snapshot.SourceSnapshot;
import dev.profold.sinks.snapshot.StateSnapshot;
import dev.profold.sinks.snapshot.ThreadActivitySnapshot;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The time of each region node across the threads of one thread group of one instance, from the
 * last closed interval of a scheme that keeps the thread detail a client's thread aggregation sends
 * (docs/analysis.md has the scheme):
 *
 * <ul>
 *   <li>{@code NONE}: {@code time} per thread ({@code thread} label). Exact: each thread's time at
 *       each node, and each thread's total for the runtime.
 *   <li>{@code SET}: {@value #PER_THREAD}, one value per visiting thread. Exact min, avg and max
 *       per node; which thread it was is not known, and the runtime is {@link
 *       RegionImbalance#runtimeBound}.
 *   <li>{@code KEY}: {@code time} per {@code thread.role} (initial, slowest, fastest, rest). The
 *       rest counts as that many threads of its mean time, so max is at least and min at most the
 *       roles' extremes: imb is a lower bound, exact when the node's slowest and fastest thread are
 *       the group's and the rest are alike. Needs the group's thread count from the thread activity
 *       to size the rest; a group with a rest and no such count is left out.
 * </ul>
 *
 * A group's source is the first of these its series carry, in that order; a group another scheme
 * already gave is not read again. A thread that never visited a node counts as 0 there; the group's
 * thread count is the larger of the thread activity's and the threads the data names.
 *
 * <p>Pure: computed from one snapshot.
 */
final class ThreadGroupSpreads {
  /** The per-thread measurement of the SET thread aggregation. */
  static final String PER_THREAD = "time.per_thread";

  private static final List<String> KEYS = List.of("service", "instance", "thread_group");

  /** The KEY role of the merged threads (the client's {@code thread.role} value). */
  private static final String REST = "rest";

  /** Which thread aggregation a group's data came from. */
  enum Source {
    NONE,
    SET,
    KEY;

    String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /**
   * One thread group's spreads.
   *
   * @param service the service
   * @param instance the instance
   * @param group the thread group
   * @param source where the spreads came from
   * @param threads the threads compared over
   * @param runtime the largest thread total (an upper bound for SET and KEY), seconds
   * @param spreads one per node, sorted by node
   */
  record Group(
      String service,
      String instance,
      String group,
      Source source,
      int threads,
      double runtime,
      List<Spread> spreads) {}

  /** What the schemes hold for one group, per node: member (thread, role; "" for SET) → state. */
  private static final class Raw {
    final Map<Source, Map<Node, Map<String, StateSnapshot>>> bySource = new HashMap<>();

    void add(Source s, Node n, String member, StateSnapshot st) {
      bySource
          .computeIfAbsent(s, k -> new TreeMap<>())
          .computeIfAbsent(n, k -> new TreeMap<>())
          .put(member, st);
    }
  }

  private ThreadGroupSpreads() {}

  /** Every group some scheme keeps thread detail for, in the order the schemes hold them. */
  static List<Group> of(CollectorSnapshot snapshot) {
    return of(snapshot, activeThreads(snapshot));
  }

  /**
   * The threads of each group (service, instance, thread group) in its source's latest thread
   * activity: what {@link #of} reads from the sources, besides the schemes.
   */
  static Map<List<String>, Integer> activeThreads(CollectorSnapshot snapshot) {
    Map<List<String>, Integer> active = new HashMap<>();
    for (SourceSnapshot s : snapshot.sources()) {
      for (ThreadActivitySnapshot a : s.threadActivity()) {
        if (a.current()) {
          active.put(List.of(s.service(), s.instance(), a.group()), a.threads());
        }
      }
    }
    return active;
  }

  /** {@link #of(CollectorSnapshot)} with the {@link #activeThreads} given. */
  static List<Group> of(CollectorSnapshot snapshot, Map<List<String>, Integer> active) {
    Map<List<String>, Raw> groups = new LinkedHashMap<>();
    for (SchemeSnapshot scheme : snapshot.schemes()) {
      read(scheme, groups);
    }
    List<Group> out = new ArrayList<>();
    for (Map.Entry<List<String>, Raw> e : groups.entrySet()) {
      List<String> k = e.getKey();
      int threads = active.getOrDefault(k, 0);
      Group g =
          Guarded.orNull(
              "thread group " + k.get(2) + " of " + k.get(0) + "/" + k.get(1),
              () -> group(k, e.getValue(), threads));
      if (g != null) {
        out.add(g);
      }
    }
    return out;
  }

  /**
   * True when a scheme grouping by {@code labelNames} (Prometheus label names) and reading {@code
   * attributesRead} can give what {@link #read} takes: grouped by {@link #KEYS}, path and kind, and
   * by thread or thread role, or reading {@value #PER_THREAD}.
   */
  static boolean keepsThreadDetail(
      List<String> labelNames, java.util.Collection<String> attributesRead) {
    return labelNames.containsAll(KEYS)
        && labelNames.contains("path")
        && labelNames.contains("kind")
        && (labelNames.contains("thread")
            || labelNames.contains("thread_role")
            || attributesRead.contains(PER_THREAD));
  }

  /** Adds the groups {@code scheme} has thread detail for, unless an earlier scheme had them. */
  private static void read(SchemeSnapshot scheme, Map<List<String>, Raw> groups) {
    List<String> names = scheme.labelNames();
    int[] key = new int[KEYS.size()];
    for (int i = 0; i < key.length; i++) {
      key[i] = names.indexOf(KEYS.get(i));
      if (key[i] < 0) {
        return;
      }
    }
    int path = names.indexOf("path");
    int kind = names.indexOf("kind");
    int thread = names.indexOf("thread");
    int role = names.indexOf("thread_role");
    if (path < 0 || kind < 0) {
      return;
    }
    Map<List<String>, Raw> mine = new LinkedHashMap<>();
    for (SeriesSnapshot x : scheme.lastInterval()) {
      List<String> v = x.labelValues();
      List<String> k = List.of(v.get(key[0]), v.get(key[1]), v.get(key[2]));
      StateSnapshot st = x.state();
      if (k.contains(FoldEngine.OVERFLOW) || groups.containsKey(k) || st.count() == 0) {
        continue;
      }
      Node n = new Node(v.get(path), v.get(kind));
      String m = x.measure().name();
      if (m.equals(PER_THREAD)) {
        mine.computeIfAbsent(k, g -> new Raw()).add(Source.SET, n, "", st);
      } else if (m.equals("time") && thread >= 0 && !v.get(thread).isEmpty()) {
        mine.computeIfAbsent(k, g -> new Raw()).add(Source.NONE, n, v.get(thread), st);
      } else if (m.equals("time") && role >= 0 && !v.get(role).isEmpty()) {
        mine.computeIfAbsent(k, g -> new Raw()).add(Source.KEY, n, v.get(role), st);
      }
    }
    groups.putAll(mine);
  }

  private static Group group(List<String> k, Raw raw, int activeThreads) {
    for (Source s : Source.values()) {
      Map<Node, Map<String, StateSnapshot>> nodes = raw.bySource.get(s);
      if (nodes != null) {
        return switch (s) {
          case NONE -> none(k, nodes, activeThreads);
          case SET -> set(k, nodes, activeThreads);
          case KEY -> key(k, nodes, activeThreads);
        };
      }
    }
    return null;
  }

  private static Group none(
      List<String> k, Map<Node, Map<String, StateSnapshot>> nodes, int activeThreads) {
    TreeSet<String> named = new TreeSet<>();
    nodes.values().forEach(m -> named.addAll(m.keySet()));
    List<String> threads = new ArrayList<>(named);
    List<Node> order = new ArrayList<>(nodes.keySet());
    double[][] seconds = new double[order.size()][threads.size()];
    for (int n = 0; n < order.size(); n++) {
      Map<String, StateSnapshot> row = nodes.get(order.get(n));
      for (int i = 0; i < threads.size(); i++) {
        StateSnapshot st = row.get(threads.get(i));
        seconds[n][i] = st == null ? 0 : ServiceProfile.seconds(st.sum());
      }
    }
    ServiceProfile profile = new ServiceProfile(k.get(2), threads, order, seconds);
    int total = Math.max(activeThreads, threads.size());
    int silent = total - threads.size(); // threads of the group that recorded nothing: 0 everywhere
    List<Spread> spreads =
        RegionImbalance.spreads(profile, silent, silent + " threads without records");
    return new Group(
        k.get(0),
        k.get(1),
        k.get(2),
        Source.NONE,
        total,
        RegionImbalance.runtime(profile),
        spreads);
  }

  private static Group set(
      List<String> k, Map<Node, Map<String, StateSnapshot>> nodes, int activeThreads) {
    long visitors = 0;
    for (Map<String, StateSnapshot> m : nodes.values()) {
      visitors = Math.max(visitors, m.get("").count());
    }
    int total = (int) Math.min(Integer.MAX_VALUE, Math.max(activeThreads, visitors));
    List<Spread> spreads = new ArrayList<>();
    for (Map.Entry<Node, Map<String, StateSnapshot>> e : nodes.entrySet()) {
      StateSnapshot st = e.getValue().get("");
      double min = st.count() < total ? 0 : Math.max(0, st.min());
      spreads.add(
          new Spread(
              e.getKey(),
              min,
              ServiceProfile.seconds(st.sum()) / total,
              Math.max(0, st.max()),
              "",
              ""));
    }
    return new Group(
        k.get(0),
        k.get(1),
        k.get(2),
        Source.SET,
        total,
        RegionImbalance.runtimeBound(spreads),
        spreads);
  }

  private static Group key(
      List<String> k, Map<Node, Map<String, StateSnapshot>> nodes, int activeThreads) {
    TreeSet<String> roles = new TreeSet<>();
    nodes.values().forEach(m -> roles.addAll(m.keySet()));
    boolean hasRest = roles.remove(REST);
    int single = roles.size(); // initial, slowest, fastest: one thread each
    int restThreads = activeThreads - single;
    if (hasRest && restThreads < 1) {
      return null; // the rest cannot be averaged without the group's thread count
    }
    int total = hasRest ? activeThreads : Math.max(activeThreads, single);
    boolean silent = !hasRest && total > single; // threads in no role recorded nothing
    List<Spread> spreads = new ArrayList<>();
    for (Map.Entry<Node, Map<String, StateSnapshot>> e : nodes.entrySet()) {
      Map<String, StateSnapshot> at = e.getValue();
      double sum = 0;
      double max = silent ? 0 : Double.NEGATIVE_INFINITY;
      double min = silent ? 0 : Double.POSITIVE_INFINITY;
      String slowest = silent ? "threads without records" : "";
      String fastest = slowest;
      List<String> members = new ArrayList<>(roles);
      if (hasRest) {
        members.add(REST);
      }
      for (String r : members) {
        StateSnapshot st = at.get(r);
        double s = st == null ? 0 : ServiceProfile.seconds(st.sum());
        sum = ServiceProfile.saturatingSum(sum, s);
        double each = r.equals(REST) ? s / restThreads : s;
        String name = r.equals(REST) ? "rest (mean of " + restThreads + ")" : r;
        if (each > max) {
          max = each;
          slowest = name;
        }
        if (each < min) {
          min = each;
          fastest = name;
        }
      }
      spreads.add(new Spread(e.getKey(), min, sum / total, max, slowest, fastest));
    }
    return new Group(
        k.get(0),
        k.get(1),
        k.get(2),
        Source.KEY,
        total,
        RegionImbalance.runtimeBound(spreads),
        spreads);
  }
}
