package dev.profold.collector.alert;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One label matcher of a rule expression, as in PromQL: {@code name="v"}, {@code name!="v"}, {@code
 * name=~"regex"}, {@code name!~"regex"}. A label the value does not have matches as the empty
 * string; regular expressions are anchored at both ends (they match the whole value). A regular
 * expression whose matching overflows the stack on a value (Java's engine recurses once per
 * repetition of some groups, and a path label can be thousands of characters long) selects neither
 * way: both {@code =~} and {@code !~} are false for that value, and the first time is logged.
 * Thread-safe.
 */
public final class LabelMatcher {
  private static final Logger log = LoggerFactory.getLogger(LabelMatcher.class);

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
  private final AtomicBoolean overflowLogged = new AtomicBoolean();

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
      case MATCHES -> regex(v) == MATCH;
      case NOT_MATCHES -> regex(v) == NO_MATCH;
    };
  }

  private static final int MATCH = 1;
  private static final int NO_MATCH = 0;
  private static final int UNDECIDED = -1;

  /** Whether the regular expression matches {@code v}: {@link #UNDECIDED} when it overflowed. */
  private int regex(String v) {
    try {
      return pattern.matcher(v).matches() ? MATCH : NO_MATCH;
    } catch (StackOverflowError e) {
      if (overflowLogged.compareAndSet(false, true)) {
        log.warn(
            "alert label matcher {} overflowed the stack matching a value of {} characters; such"
                + " values are selected by neither =~ nor !~. Write the expression without a"
                + " repeated group, such as .*name.* rather than (\\w|/)*name",
            this,
            v.length());
      }
      return UNDECIDED;
    }
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
