package dev.profold.collector.analysis;

import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.sinks.snapshot.CollectorSnapshot;
import dev.profold.sinks.snapshot.OverheadClass;
import dev.profold.sinks.snapshot.SchemeSnapshot;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import dev.profold.sinks.snapshot.SnapshotSource;
import dev.profold.sinks.snapshot.SourceSnapshot;
import dev.profold.sinks.snapshot.ThreadActivitySnapshot;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Derived values from the sources' thread activity (overheads over time) for each thread group
 * their last delta reported:
 *
 * <ul>
 *   <li>{@code thread_class_ratio{service, instance, thread_group, class}}: the share of the
 *       group's thread time in the class;
 *   <li>{@code service_thread_class_ratio{service, thread_group, class}}: the same over all
 *       instances of the service (time-weighted);
 *   <li>{@code thread_cpu_imbalance_ratio{service, instance, thread_group}}: (max - avg) of
 *       per-thread CPU time over the interval's length.
 * </ul>
 *
 * Context, for alert annotations: {@code top_paths} (the call paths of that class with the most
 * time in the newest closed interval with data, compute paths for {@code cpu_wait}, for the thread
 * group of the instance or of the service, from a scheme that groups by thread_group, path and kind
 * when there is one, else from the built-in {@code region} scheme for all thread groups, marked so;
 * see {@link RegionTimes}), {@code top_instances} (service values: the instances with the largest
 * share), {@code io_unobserved} (the {@code io} and {@code idle} values of sources that say how
 * long their I/O events were off: that share of the interval, 0..1, in which I/O waits counted as
 * idle; for a service, weighted by the instances' thread time) and {@code cpu_spread} (imbalance
 * values: per-thread CPU min / avg / max).
 *
 * <p>Computed on each call from one snapshot; thread-safe as its source is.
 */
public final class ThreadActivityValues implements DerivedValues {
  /** Paths and instances named in context. */
  static final int TOP = 3;

  /** Share of an instance's thread group's time in one overhead class. */
  public static final String CLASS_RATIO = "thread_class_ratio";

  /** The same over the instances of a service. */
  public static final String SERVICE_CLASS_RATIO = "service_thread_class_ratio";

  /** (max - avg) per-thread CPU time of a thread group, as a share of the interval. */
  public static final String CPU_IMBALANCE_RATIO = "thread_cpu_imbalance_ratio";

  /** The context entry saying how much of the interval I/O waits went unobserved. */
  static final String IO_UNOBSERVED = "io_unobserved";

  private final SnapshotSource source;

  public ThreadActivityValues(SnapshotSource source) {
    this.source = source;
  }

  @Override
  public List<DerivedValue> current() {
    CollectorSnapshot snapshot = source.snapshot();
    RegionTimes regions = RegionTimes.of(snapshot);
    List<DerivedValue> out = new ArrayList<>();
    Map<List<String>, ServiceShare> services = new LinkedHashMap<>();
    for (SourceSnapshot s : snapshot.sources()) {
      for (ThreadActivitySnapshot a : s.threadActivity()) {
        if (!a.current() || a.lastWallNanos() == 0) {
          continue;
        }
        for (OverheadClass c : OverheadClass.values()) {
          Map<String, String> context = new LinkedHashMap<>();
          context.put("top_paths", regions.top(s.service(), s.instance(), a.group(), pathsKind(c)));
          if (blindSpotOf(c) && a.ioObservationReported()) {
            context.put(IO_UNOBSERVED, share(a.ioUnobservedShare()));
          }
          out.add(
              new DerivedValue(
                  CLASS_RATIO,
                  Map.of(
                      "service", s.service(),
                      "instance", s.instance(),
                      "thread_group", a.group(),
                      "class", c.label()),
                  a.share(c),
                  context));
          services
              .computeIfAbsent(List.of(s.service(), a.group(), c.label()), k -> new ServiceShare())
              .add(s.instance(), a, c);
        }
        out.add(
            new DerivedValue(
                CPU_IMBALANCE_RATIO,
                Map.of("service", s.service(), "instance", s.instance(), "thread_group", a.group()),
                a.imbalance(),
                Map.of(
                    "cpu_spread",
                    String.format(
                        Locale.ROOT,
                        "per-thread CPU min %.3f s, avg %.3f s, max %.3f s over %d threads",
                        a.cpuMinNanos() / 1e9,
                        a.cpuAvgNanos() / 1e9,
                        a.cpuMaxNanos() / 1e9,
                        a.threads()))));
      }
    }
    for (Map.Entry<List<String>, ServiceShare> e : services.entrySet()) {
      String service = e.getKey().get(0);
      String cls = e.getKey().get(2);
      ServiceShare share = e.getValue();
      Map<String, String> context = new LinkedHashMap<>();
      context.put(
          "top_paths",
          regions.top(service, null, e.getKey().get(1), pathsKind(OverheadClass.ofLabel(cls))));
      context.put("top_instances", share.topInstances());
      if (share.reportingWall > 0) {
        context.put(IO_UNOBSERVED, share(share.unobserved / share.reportingWall));
      }
      out.add(
          new DerivedValue(
              SERVICE_CLASS_RATIO,
              Map.of("service", service, "thread_group", e.getKey().get(1), "class", cls),
              share.share(),
              context));
    }
    return List.copyOf(out);
  }

  /**
   * The kind of the regions whose paths explain a share of class {@code c}: its own, but for {@code
   * cpu_wait}, which no region has: the threads wait for a CPU to run their compute paths, so those
   * are what competes for the CPUs.
   */
  private static String pathsKind(OverheadClass c) {
    return c == OverheadClass.CPU_WAIT ? OverheadClass.COMPUTE.label() : c.label();
  }

  /**
   * Whether a share of class {@code c} is changed by I/O waits going unobserved: {@code io} loses
   * them and {@code idle} gains them.
   */
  private static boolean blindSpotOf(OverheadClass c) {
    return c == OverheadClass.IO || c == OverheadClass.IDLE;
  }

  /** A share as context text: a number templates can format ({@code | percent}). */
  private static String share(double value) {
    return String.format(Locale.ROOT, "%.4f", value);
  }

  /** One service's time in a class over its instances. */
  private static final class ServiceShare {
    final Map<String, Double> byInstance = new HashMap<>();
    long part;
    long wall;

    /** Over instances that say how long their I/O went unobserved: weighted share, and weight. */
    double unobserved;

    long reportingWall;

    void add(String instance, ThreadActivitySnapshot a, OverheadClass c) {
      long classNanos = a.last(c);
      long wallNanos = a.lastWallNanos();
      part += classNanos;
      wall += wallNanos;
      byInstance.merge(instance, wallNanos == 0 ? 0 : (double) classNanos / wallNanos, Math::max);
      if (blindSpotOf(c) && a.ioObservationReported()) {
        unobserved += a.ioUnobservedShare() * wallNanos;
        reportingWall += wallNanos;
      }
    }

    double share() {
      return wall == 0 ? 0 : (double) part / wall;
    }

    String topInstances() {
      List<Map.Entry<String, Double>> sorted = new ArrayList<>(byInstance.entrySet());
      sorted.sort(
          Map.Entry.<String, Double>comparingByValue()
              .reversed()
              .thenComparing(Map.Entry.comparingByKey()));
      List<String> parts = new ArrayList<>();
      for (Map.Entry<String, Double> e : sorted.subList(0, Math.min(TOP, sorted.size()))) {
        parts.add(String.format(Locale.ROOT, "%s (%.0f%%)", e.getKey(), e.getValue() * 100));
      }
      return String.join(", ", parts);
    }
  }

  /**
   * Time per (service, instance, thread group, kind, path) in the newest closed interval with data,
   * from the first scheme that groups by service, instance, thread_group, path and kind (other
   * labels, such as a thread's, are summed over); and per (service, instance, kind, path) from the
   * built-in scheme, for thread groups no such scheme covers.
   */
  private static final class RegionTimes {
    private static final List<String> BY_GROUP =
        List.of("service", "instance", "thread_group", "path", SchemeDefinition.KIND);

    private final Map<List<String>, Map<String, Double>> byGroup = new HashMap<>();
    private final Map<List<String>, Map<String, Double>> byKey = new HashMap<>();

    static RegionTimes of(CollectorSnapshot snapshot) {
      RegionTimes r = new RegionTimes();
      boolean grouped = false;
      for (SchemeSnapshot s : snapshot.schemes()) {
        if (s.scheme().equals(SchemeDefinition.BUILT_IN)) {
          r.read(s, false);
        } else if (!grouped && s.labelNames().containsAll(BY_GROUP)) {
          r.read(s, true);
          grouped = true;
        }
      }
      return r;
    }

    private void read(SchemeSnapshot s, boolean withGroup) {
      int service = s.labelNames().indexOf("service");
      int instance = s.labelNames().indexOf("instance");
      int group = s.labelNames().indexOf("thread_group");
      int path = s.labelNames().indexOf("path");
      int kind = s.labelNames().indexOf(SchemeDefinition.KIND);
      if (service < 0 || instance < 0 || path < 0 || kind < 0) {
        return;
      }
      for (SeriesSnapshot x : latestWithData(s)) {
        if (!x.measure().name().equals("time")) {
          continue;
        }
        List<String> v = x.labelValues();
        double t = x.state().sum();
        String p = v.get(path);
        if (withGroup) {
          add(byGroup, List.of(v.get(service), v.get(instance), v.get(group), v.get(kind)), p, t);
          add(byGroup, List.of(v.get(service), "", v.get(group), v.get(kind)), p, t);
        } else {
          add(byKey, List.of(v.get(service), v.get(instance), v.get(kind)), p, t);
          add(byKey, List.of(v.get(service), "", v.get(kind)), p, t);
        }
      }
    }

    /**
     * The series of the newest closed interval that had data: right after a workload starts, or in
     * a quiet moment, the last closed interval can be empty while the thread activity (which comes
     * from the clients' own, later intervals) is not.
     */
    private static List<SeriesSnapshot> latestWithData(SchemeSnapshot s) {
      if (!s.lastInterval().isEmpty()) {
        return s.lastInterval();
      }
      List<dev.profold.sinks.snapshot.IntervalSnapshot> retained = s.retained();
      for (int i = retained.size() - 1; i >= 0; i--) {
        if (!retained.get(i).series().isEmpty()) {
          return retained.get(i).series();
        }
      }
      return List.of();
    }

    private static void add(
        Map<List<String>, Map<String, Double>> to, List<String> key, String path, double seconds) {
      to.computeIfAbsent(key, k -> new HashMap<>()).merge(path, seconds, Double::sum);
    }

    /**
     * The top paths of {@code kind} for the thread group of the instance (or, when {@code instance}
     * is null, of the whole service). Without a scheme that keeps thread groups, or without data of
     * the group in it, the top paths of all the instance's (or service's) thread groups, and the
     * text says so.
     */
    String top(String service, String instance, String group, String kind) {
      String in = instance == null ? "" : instance;
      Map<String, Double> paths = byGroup.getOrDefault(List.of(service, in, group, kind), Map.of());
      String prefix = "";
      if (paths.isEmpty()) {
        paths = byKey.getOrDefault(List.of(service, in, kind), Map.of());
        prefix = "(all thread groups) ";
      }
      if (paths.isEmpty()) {
        return "(no " + kind + " regions in the last intervals)";
      }
      List<Map.Entry<String, Double>> sorted = new ArrayList<>(paths.entrySet());
      sorted.sort(
          Map.Entry.<String, Double>comparingByValue()
              .reversed()
              .thenComparing(Map.Entry.comparingByKey()));
      List<String> parts = new ArrayList<>();
      for (Map.Entry<String, Double> e : sorted.subList(0, Math.min(TOP, sorted.size()))) {
        parts.add(String.format(Locale.ROOT, "%s (%.3f s)", e.getKey(), e.getValue()));
      }
      return prefix + String.join("; ", parts);
    }
  }
}
