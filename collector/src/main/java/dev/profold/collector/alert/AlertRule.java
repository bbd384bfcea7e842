package dev.profold.collector.alert;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * One alert rule as loaded from the config: it fires for every label set of the derived values its
 * {@code expression} selects once the condition held for {@code forEvaluations} consecutive
 * evaluations (one per interval), and, once firing, keeps firing through {@code keepFiringFor}
 * evaluations in a row where it does not hold before it resolves. Immutable; two rules are equal
 * when their definitions are, which is what a config reload uses to keep a rule's state.
 *
 * @param name the alert name ({@code alertname} at Alertmanager, {@code alert} in /metrics)
 * @param expression the condition
 * @param forEvaluations consecutive evaluations the condition must hold before firing (>= 1)
 * @param keepFiringFor evaluations in a row a firing alert's condition may fail (or its value be
 *     missing) while it still fires (>= 0; 0: it resolves at the first)
 * @param labels extra labels of every alert of this rule, as templates rendered once when the alert
 *     becomes pending (they win over the value's labels)
 * @param annotations annotation templates by name, in config order
 */
public record AlertRule(
    String name,
    RuleExpression expression,
    int forEvaluations,
    int keepFiringFor,
    Map<String, Template> labels,
    Map<String, Template> annotations) {

  /** Label names an alert reserves for itself. */
  public static final java.util.Set<String> RESERVED_LABELS =
      java.util.Set.of("alert", "alertname");

  public AlertRule {
    if (forEvaluations < 1) {
      throw new IllegalArgumentException("forEvaluations must be at least 1: " + forEvaluations);
    }
    if (keepFiringFor < 0) {
      throw new IllegalArgumentException("keepFiringFor must be at least 0: " + keepFiringFor);
    }
    labels = Collections.unmodifiableMap(new TreeMap<>(labels));
    annotations = Collections.unmodifiableMap(new LinkedHashMap<>(annotations));
  }
}
