package dev.profold.collector.analysis;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The names of the values the collector derives, each with the label names its values carry
 * (docs/analysis.md): what an alert rule can name and match on. A rule naming a value not here, or
 * matching a label its values never have, would select nothing forever; the config loader refuses
 * it with this list. The producers' tests check that every value they derive is listed here with
 * exactly these labels. Immutable.
 */
public final class DerivedValueNames {
  private static final String SERVICE = "service";
  private static final String INSTANCE = "instance";
  private static final String THREAD_GROUP = "thread_group";
  private static final String CLASS = "class";
  private static final String PATH = "path";
  private static final String KIND = "kind";

  private static final Map<String, Set<String>> LABELS = catalogue();

  private DerivedValueNames() {}

  private static Map<String, Set<String>> catalogue() {
    Map<String, Set<String>> m = new TreeMap<>();
    m.put(ThreadActivityValues.CLASS_RATIO, labels(SERVICE, INSTANCE, THREAD_GROUP, CLASS));
    m.put(ThreadActivityValues.SERVICE_CLASS_RATIO, labels(SERVICE, THREAD_GROUP, CLASS));
    m.put(ThreadActivityValues.CPU_IMBALANCE_RATIO, labels(SERVICE, INSTANCE, THREAD_GROUP));
    for (String n :
        List.of(
            RegionAnalysisValues.IMBALANCE,
            RegionAnalysisValues.IMBALANCE_RATIO,
            RegionAnalysisValues.SIGNIFICANT_IMBALANCE_RATIO,
            RegionAnalysisValues.WAIT)) {
      m.put(n, labels(SERVICE, PATH, KIND));
    }
    m.put(RegionAnalysisValues.CLUSTERS, labels(SERVICE));
    m.put(RegionAnalysisValues.OUTLIER, labels(SERVICE, INSTANCE));
    for (String n :
        List.of(
            ThreadRegionImbalanceValues.IMBALANCE,
            ThreadRegionImbalanceValues.IMBALANCE_RATIO,
            ThreadRegionImbalanceValues.SIGNIFICANT_IMBALANCE_RATIO,
            ThreadRegionImbalanceValues.WAIT)) {
      m.put(n, labels(SERVICE, INSTANCE, THREAD_GROUP, PATH, KIND));
    }
    return Map.copyOf(m);
  }

  private static Set<String> labels(String... names) {
    return Set.of(names);
  }

  /** Every value name, sorted. */
  public static List<String> names() {
    return List.copyOf(new TreeSet<>(LABELS.keySet()));
  }

  /**
   * True when the values named {@code name} come only from a scheme that keeps per-thread detail
   * ({@link #keepsThreadDetail}): the {@code thread_region_*} values.
   */
  public static boolean needsThreadDetail(String name) {
    return name.startsWith("thread_region_");
  }

  /**
   * True when the values named {@code name} are read from the built-in scheme {@code region} (the
   * analysis across a service's instances), which must group by service, instance, path and kind.
   */
  public static boolean needsRegionScheme(String name) {
    return List.of(
            RegionAnalysisValues.IMBALANCE,
            RegionAnalysisValues.IMBALANCE_RATIO,
            RegionAnalysisValues.SIGNIFICANT_IMBALANCE_RATIO,
            RegionAnalysisValues.WAIT,
            RegionAnalysisValues.CLUSTERS,
            RegionAnalysisValues.OUTLIER)
        .contains(name);
  }

  /** True when a scheme grouping by {@code labelNames} keeps what the region values need. */
  public static boolean isRegionScheme(List<String> labelNames) {
    return labelNames.containsAll(List.of(SERVICE, INSTANCE, PATH, KIND));
  }

  /**
   * True when a scheme grouping by {@code labelNames} (Prometheus label names) and reading {@code
   * attributesRead} keeps what the {@code thread_region_*} values are read from: grouped by
   * service, instance, thread group, path and kind, and by thread or thread role, or reading the
   * per-thread time (docs/analysis.md).
   */
  public static boolean keepsThreadDetail(
      List<String> labelNames, java.util.Collection<String> attributesRead) {
    return ThreadGroupSpreads.keepsThreadDetail(labelNames, attributesRead);
  }

  /** True when the collector derives values named {@code name}. */
  public static boolean isKnown(String name) {
    return LABELS.containsKey(name);
  }

  /**
   * The label names of the values named {@code name}, sorted.
   *
   * @throws IllegalArgumentException when no value has that name
   */
  public static List<String> labelsOf(String name) {
    Set<String> l = LABELS.get(name);
    if (l == null) {
      throw new IllegalArgumentException("no derived value is named " + name);
    }
    return List.copyOf(new TreeSet<>(l));
  }
}
