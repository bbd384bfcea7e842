package dev.profold.collector.query;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The key of one group: the values of the key attributes a record has (absent ones are left out, so
 * records without an attribute form their own groups, as in Caliper). Immutable; equal when the
 * attribute/value pairs are equal.
 *
 * @param values key attribute to value, in key order (explicit GROUP BY attributes first)
 */
record GroupKey(Map<String, Object> values) {

  GroupKey {
    values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
  }

  /** The first key attribute whose value is a path, or null: the axis of inclusive operators. */
  String pathAttribute() {
    for (Map.Entry<String, Object> e : values.entrySet()) {
      if (e.getValue() instanceof List<?> l && !l.isEmpty()) {
        return e.getKey();
      }
    }
    return null;
  }

  /** This key with {@code attribute}'s path cut to its first {@code length} elements. */
  GroupKey withPrefix(String attribute, int length) {
    Map<String, Object> m = new LinkedHashMap<>(values);
    List<?> path = (List<?>) values.get(attribute);
    m.put(attribute, List.copyOf(path.subList(0, length)));
    return new GroupKey(m);
  }
}
