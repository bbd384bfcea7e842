package dev.profold.collector.alert;

/** The comparison at the end of a rule expression: {@code value <op> threshold}. */
public enum Comparison {
  GREATER(">"),
  GREATER_OR_EQUAL(">="),
  LESS("<"),
  LESS_OR_EQUAL("<="),
  EQUAL("=="),
  NOT_EQUAL("!=");

  private final String symbol;

  Comparison(String symbol) {
    this.symbol = symbol;
  }

  /** The operator as written in rules. */
  public String symbol() {
    return symbol;
  }

  /**
   * True when {@code value <op> threshold} holds (exact comparison of doubles; NaN never holds).
   */
  public boolean holds(double value, double threshold) {
    return switch (this) {
      case GREATER -> value > threshold;
      case GREATER_OR_EQUAL -> value >= threshold;
      case LESS -> value < threshold;
      case LESS_OR_EQUAL -> value <= threshold;
      case EQUAL -> value == threshold;
      case NOT_EQUAL -> !Double.isNaN(value) && value != threshold;
    };
  }
}
