package dev.profold.collector.alert;

import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * One alert instance (a rule and one label set) as of an evaluation. Immutable.
 *
 * @param rule the rule's name
 * @param labels the alert's labels: the derived value's, then the rule's (sorted by name; without
 *     {@code alertname})
 * @param annotations rendered annotations, in the rule's order
 * @param state pending, firing or resolved
 * @param value the derived value at the last evaluation where the condition held
 * @param activeAt the first evaluation of the current run where the condition held
 * @param firingSince when it started firing; null while pending
 * @param resolvedAt when it resolved; null unless resolved
 * @param keepFiringSince the first evaluation of the current run where a firing alert's condition
 *     did not hold, while its rule's {@code keep_firing_for} keeps it firing; null otherwise
 */
public record Alert(
    String rule,
    Map<String, String> labels,
    Map<String, String> annotations,
    AlertState state,
    double value,
    Instant activeAt,
    Instant firingSince,
    Instant resolvedAt,
    Instant keepFiringSince) {
  public Alert {
    labels = Collections.unmodifiableMap(new TreeMap<>(labels));
    annotations = Collections.unmodifiableMap(new LinkedHashMap<>(annotations));
  }

  /**
   * A key unique per alert instance: the rule name and the sorted labels, each written with its
   * length, so that no two alerts share one ({@code {path="x, kind=sync"}} and {@code {path="x",
   * kind="sync"}} did, written as the map's text).
   */
  public String identity() {
    StringBuilder key = new StringBuilder().append(rule.length()).append(':').append(rule);
    labels.forEach(
        (k, v) ->
            key.append(k.length()).append(':').append(k).append(v.length()).append(':').append(v));
    return key.toString();
  }
}
