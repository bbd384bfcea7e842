package dev.profold.collector.alert;

/**
 * A rule expression or annotation template that does not parse. The message says what is wrong and
 * how to fix it; {@link #column()} is where (1-based, in the text given to the parser).
 */
public final class RuleException extends Exception {
  private static final long serialVersionUID = 1L;

  private final int column;

  RuleException(int column, String message) {
    super(message);
    this.column = column;
  }

  /** 1-based column in the parsed text where the problem is. */
  public int column() {
    return column;
  }
}
