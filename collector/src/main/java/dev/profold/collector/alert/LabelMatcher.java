package dev.profold.collector.alert;

import java.util.Map;
import java.util.regex.Pattern;

/**
 * One label matcher of a rule expression, as in PromQL: {@code name="v"}, {@code name!="v"}, {@code
 * name=~"regex"}, {@code name!~"regex"}. A label the value does not have matches as the empty
 * string; regular expressions are anchored at both ends (they match the whole value). Immutable.
 */
public final class LabelMatcher {
  /** How a matcher compares. */
  public enum Op {
    EQUAL("="),
    NOT_EQUAL("!="),
    MATCHES("=~"),
    NOT_MATCHES("!~");

    private final String symbol;

    Op(String symbol) {
      this.symbol = symbol;
    }

    public String symbol() {
      return symbol;
    }
  }

  private final String label;
  private final Op op;
  private final String operand;
  private final Pattern pattern; // null for EQUAL / NOT_EQUAL

  LabelMatcher(String label, Op op, String operand, Pattern pattern) {
    this.label = label;
    this.op = op;
    this.operand = operand;
    this.pattern = pattern;
  }

  public String label() {
    return label;
  }

  public Op op() {
    return op;
  }

  /** The value or regular expression, unquoted. */
  public String operand() {
    return operand;
  }

  /** True when the labels {@code labels} satisfy this matcher. */
  public boolean matches(Map<String, String> labels) {
    String v = labels.getOrDefault(label, "");
    return switch (op) {
      case EQUAL -> v.equals(operand);
      case NOT_EQUAL -> !v.equals(operand);
      case MATCHES -> pattern.matcher(v).matches();
      case NOT_MATCHES -> !pattern.matcher(v).matches();
    };
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof LabelMatcher m
        && m.label.equals(label)
        && m.op == op
        && m.operand.equals(operand);
  }

  @Override
  public int hashCode() {
    return (label.hashCode() * 31 + op.hashCode()) * 31 + operand.hashCode();
  }

  @Override
  public String toString() {
    return label + op.symbol + '"' + operand.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
  }
}
