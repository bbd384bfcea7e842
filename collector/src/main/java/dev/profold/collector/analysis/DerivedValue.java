package dev.profold.collector.analysis;

import java.util.Map;

/**
 * One value the collector derives when an interval closes, for alert rules to test and for /metrics
 * to show: a name (for example {@code thread_class_ratio}), labels that say what it is about
 * ({@code service}, {@code instance}, {@code thread_group}, {@code class}, ...), the value, and
 * context: text that explains it (for example {@code top_paths}: the call paths that contribute
 * most), for alert annotations.
 *
 * @param name value name, [a-z_][a-z0-9_]*
 * @param labels label name to value; names [a-z_][a-z0-9_]*
 * @param value the value (finite)
 * @param context extra text for annotations, by key; may be empty
 */
public record DerivedValue(
    String name, Map<String, String> labels, double value, Map<String, String> context) {
  public DerivedValue {
    labels = Map.copyOf(labels);
    context = Map.copyOf(context);
  }

  /** A value without context. */
  public static DerivedValue of(String name, Map<String, String> labels, double value) {
    return new DerivedValue(name, labels, value, Map.of());
  }
}
