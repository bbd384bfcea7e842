package dev.profold.collector.query;

import java.util.List;
import java.util.stream.Collectors;

/**
 * A function-style call in a query, {@code name(arg, ...)}: an aggregation operator in SELECT /
 * AGGREGATE / ORDER BY or a derivation in LET. Immutable.
 *
 * @param name the function name as written
 * @param args the arguments as written (attribute names or numbers)
 * @param position 1-based column of the name in the query text
 */
public record OperatorCall(String name, List<Argument> args, int position) {

  /** Copies the argument list. */
  public OperatorCall {
    args = List.copyOf(args);
  }

  /**
   * One argument of a call.
   *
   * @param text the argument as written
   * @param position 1-based column of the argument in the query text
   */
  public record Argument(String text, int position) {}

  /** The text of argument {@code i}. */
  public String arg(int i) {
    return args.get(i).text();
  }

  /** Argument {@code i} as a finite number, or a {@link QueryException} at its column. */
  public double number(int i) throws QueryException {
    Argument a = args.get(i);
    try {
      double d = Double.parseDouble(a.text());
      if (Double.isFinite(d)) {
        return d;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw QueryException.expected(a.position(), "a number", "'" + a.text() + "'");
  }

  @Override
  public String toString() {
    return name
        + args.stream().map(a -> Lexer.quote(a.text())).collect(Collectors.joining(",", "(", ")"));
  }
}
