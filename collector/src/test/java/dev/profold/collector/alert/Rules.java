package dev.profold.collector.alert;

import java.util.LinkedHashMap;
import java.util.Map;

/** Builds rules for tests. */
final class Rules {
  private Rules() {}

  static AlertRule rule(String name, String expr, int forN) {
    return rule(name, expr, forN, Map.of(), Map.of());
  }

  static AlertRule rule(
      String name,
      String expr,
      int forN,
      Map<String, String> labels,
      Map<String, String> annotations) {
    return rule(name, expr, forN, 0, labels, annotations);
  }

  static AlertRule rule(
      String name,
      String expr,
      int forN,
      int keepFiringFor,
      Map<String, String> labels,
      Map<String, String> annotations) {
    try {
      Map<String, Template> t = new LinkedHashMap<>();
      for (Map.Entry<String, String> e : annotations.entrySet()) {
        t.put(e.getKey(), Template.parse(e.getValue()));
      }
      Map<String, Template> l = new LinkedHashMap<>();
      for (Map.Entry<String, String> e : labels.entrySet()) {
        l.put(e.getKey(), Template.parse(e.getValue()));
      }
      return new AlertRule(name, RuleExpression.parse(expr), forN, keepFiringFor, l, t);
    } catch (RuleException e) {
      throw new IllegalArgumentException(e);
    }
  }
}
