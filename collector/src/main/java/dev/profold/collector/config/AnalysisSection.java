package dev.profold.collector.config;

import dev.profold.collector.analysis.AnalysisSpec;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Reads the {@code analysis} section of the config file (docs/imbalance.md). Errors name the key
 * path and the accepted values; the caller prefixes the file name.
 */
final class AnalysisSection {
  private static final Set<String> KEYS =
      Set.of("imbalance_runtime_share", "imbalance_leaf_share", "top_nodes");

  private AnalysisSection() {}

  static AnalysisSpec parse(Object o) throws ConfigException {
    AnalysisSpec d = AnalysisSpec.defaults();
    if (o == null) {
      return d;
    }
    if (!(o instanceof Map<?, ?> raw)) {
      throw new ConfigException("analysis must be a mapping of keys to values");
    }
    Map<String, Object> m = new LinkedHashMap<>();
    for (Map.Entry<?, ?> e : raw.entrySet()) {
      m.put(String.valueOf(e.getKey()), e.getValue());
    }
    for (String k : m.keySet()) {
      if (!KEYS.contains(k)) {
        throw new ConfigException(
            "unknown key 'analysis."
                + k
                + "'; known keys under analysis: "
                + String.join(", ", KEYS.stream().sorted().toList()));
      }
    }
    return new AnalysisSpec(
        share(m, "imbalance_runtime_share", d.imbalanceRuntimeShare()),
        share(m, "imbalance_leaf_share", d.imbalanceLeafShare()),
        topNodes(m.get("top_nodes"), d.topNodes()));
  }

  private static double share(Map<String, Object> m, String key, double dflt)
      throws ConfigException {
    Object v = m.get(key);
    if (v == null) {
      return dflt;
    }
    if (v instanceof String s && s.trim().endsWith("%")) {
      throw new ConfigException(
          "analysis."
              + key
              + " must be a fraction in 0..1: write shares as fractions (0.001 rather than 0.1%),"
              + " was "
              + s);
    }
    if (!(v instanceof Number n) || !(n.doubleValue() >= 0 && n.doubleValue() <= 1)) {
      throw new ConfigException("analysis." + key + " must be a number in 0..1, was " + v);
    }
    return n.doubleValue();
  }

  private static int topNodes(Object v, int dflt) throws ConfigException {
    if (v == null) {
      return dflt;
    }
    if (!(v instanceof Integer n) || n < 1 || n > AnalysisSpec.MAX_TOP_NODES) {
      throw new ConfigException(
          "analysis.top_nodes must be a whole number in 1.."
              + AnalysisSpec.MAX_TOP_NODES
              + " (nodes per service exposed for imbalance, and as many for waiting), was "
              + v);
    }
    return n;
  }
}
