package dev.profold.collector.query;

/**
 * A CalQL query that cannot be parsed or evaluated as written.
 *
 * <p>The message always starts with the 1-based column of the offending text: {@code "at column N:
 * expected X, found Y"}. Callers show it as is; they never need the stack trace.
 */
public final class QueryException extends Exception {
  private static final long serialVersionUID = 1L;

  private final int column;

  /** A failure at {@code column} (1-based) with a complete message. */
  QueryException(int column, String message) {
    super("at column " + column + ": " + message);
    this.column = column;
  }

  /** The "expected X, found Y" failure at {@code column}. */
  static QueryException expected(int column, String expected, String found) {
    return new QueryException(column, "expected " + expected + ", found " + found);
  }

  /** The 1-based column in the query text where the problem starts. */
  public int column() {
    return column;
  }
}
