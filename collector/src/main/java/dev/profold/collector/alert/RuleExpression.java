package dev.profold.collector.alert;

import dev.profold.collector.analysis.DerivedValue;
import java.util.List;

/**
 * The condition of an alert rule: a derived value's name, label matchers, a comparison and a
 * number, for example {@code thread_class_ratio{class="sync", service="checkout"} > 0.2}. Every
 * derived value with that name whose labels satisfy all matchers is a candidate; the condition
 * holds for it when its value compares true. The grammar (docs/alerts.md):
 *
 * <pre>
 * expr    = name [ "{" [ matcher { "," matcher } [ "," ] ] "}" ] cmp number
 * name    = [a-z_][a-z0-9_]*            (also label names)
 * matcher = name ( "=" | "!=" | "=~" | "!~" ) string      string: "..." or '...', \ escapes
 * cmp     = ">" | ">=" | "<" | "<=" | "==" | "!="
 * number  = a finite decimal, optionally signed, optionally with an exponent (1e-3)
 * </pre>
 *
 * Immutable; equal when parsed from equivalent text.
 */
public final class RuleExpression {
  private final String valueName;
  private final List<LabelMatcher> matchers;
  private final Comparison comparison;
  private final double threshold;

  RuleExpression(
      String valueName, List<LabelMatcher> matchers, Comparison comparison, double threshold) {
    this.valueName = valueName;
    this.matchers = List.copyOf(matchers);
    this.comparison = comparison;
    this.threshold = threshold;
  }

  /**
   * Parses {@code text}.
   *
   * @throws RuleException with the column and a message saying what was expected
   */
  public static RuleExpression parse(String text) throws RuleException {
    return new ExpressionParser(text).parse();
  }

  public String valueName() {
    return valueName;
  }

  public List<LabelMatcher> matchers() {
    return matchers;
  }

  public Comparison comparison() {
    return comparison;
  }

  public double threshold() {
    return threshold;
  }

  /** True when {@code v} has this expression's name and satisfies every matcher. */
  public boolean selects(DerivedValue v) {
    if (!v.name().equals(valueName)) {
      return false;
    }
    for (LabelMatcher m : matchers) {
      if (!m.matches(v.labels())) {
        return false;
      }
    }
    return true;
  }

  /** True when the comparison holds for {@code value}. */
  public boolean holds(double value) {
    return comparison.holds(value, threshold);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RuleExpression e
        && e.valueName.equals(valueName)
        && e.matchers.equals(matchers)
        && e.comparison == comparison
        && Double.compare(e.threshold, threshold) == 0;
  }

  @Override
  public int hashCode() {
    return ((valueName.hashCode() * 31 + matchers.hashCode()) * 31 + comparison.hashCode()) * 31
        + Double.hashCode(threshold);
  }

  /** The canonical text (parses to an equal expression). */
  @Override
  public String toString() {
    StringBuilder b = new StringBuilder(valueName);
    if (!matchers.isEmpty()) {
      b.append('{');
      for (int i = 0; i < matchers.size(); i++) {
        b.append(i == 0 ? "" : ", ").append(matchers.get(i));
      }
      b.append('}');
    }
    return b.append(' ').append(comparison.symbol()).append(' ').append(threshold).toString();
  }
}
