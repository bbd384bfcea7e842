package dev.profold.collector.query;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The registry of aggregation operators: binds an {@link OperatorCall} to its {@link Operator},
 * checking names, argument counts and numeric arguments. Operator names are case-insensitive.
 */
public final class Operators {
  private Operators() {}

  @FunctionalInterface
  private interface Factory {
    Operator create(OperatorCall call) throws QueryException;
  }

  private record Definition(String signature, int minArgs, int maxArgs, Factory factory) {}

  private static final Map<String, Definition> DEFINITIONS = new LinkedHashMap<>();

  static {
    define("count", "count()", 0, 0, c -> new CountOperator());
    define(
        "sum",
        "sum(attribute)",
        1,
        1,
        c -> new ExtremeOrSumOperator(ExtremeOrSumOperator.Statistic.SUM, c.arg(0), false));
    define(
        "min",
        "min(attribute)",
        1,
        1,
        c -> new ExtremeOrSumOperator(ExtremeOrSumOperator.Statistic.MIN, c.arg(0), false));
    define(
        "max",
        "max(attribute)",
        1,
        1,
        c -> new ExtremeOrSumOperator(ExtremeOrSumOperator.Statistic.MAX, c.arg(0), false));
    define("avg", "avg(attribute)", 1, 1, c -> new AvgOperator(c.arg(0)));
    define("variance", "variance(attribute)", 1, 1, c -> new VarianceOperator(c.arg(0)));
    define("stddev", "stddev(attribute)", 1, 1, c -> new StddevOperator(c.arg(0)));
    define(
        "percent_total",
        "percent_total(attribute)",
        1,
        1,
        c -> new PercentTotalOperator(c.arg(0), false));
    define(
        "ratio",
        "ratio(numerator, denominator[, scale])",
        2,
        3,
        c -> new RatioOperator(c.arg(0), c.arg(1), scaleArg(c, 2), false));
    define(
        "scale",
        "scale(attribute, scale)",
        2,
        2,
        c -> new ScaleOperator(c.arg(0), c.number(1), false));
    define("scale_count", "scale_count(scale)", 1, 1, c -> new ScaleCountOperator(c.number(0)));
    define("any", "any(attribute)", 1, 1, c -> new AnyOperator(c.arg(0)));
    define(
        "inclusive_sum",
        "inclusive_sum(attribute)",
        1,
        1,
        c -> new ExtremeOrSumOperator(ExtremeOrSumOperator.Statistic.SUM, c.arg(0), true));
    define(
        "inclusive_percent_total",
        "inclusive_percent_total(attribute)",
        1,
        1,
        c -> new PercentTotalOperator(c.arg(0), true));
    define(
        "inclusive_min",
        "inclusive_min(attribute)",
        1,
        1,
        c -> new ExtremeOrSumOperator(ExtremeOrSumOperator.Statistic.MIN, c.arg(0), true));
    define(
        "inclusive_max",
        "inclusive_max(attribute)",
        1,
        1,
        c -> new ExtremeOrSumOperator(ExtremeOrSumOperator.Statistic.MAX, c.arg(0), true));
    define(
        "inclusive_scale",
        "inclusive_scale(attribute, scale)",
        2,
        2,
        c -> new ScaleOperator(c.arg(0), c.number(1), true));
    define(
        "inclusive_ratio",
        "inclusive_ratio(numerator, denominator[, scale])",
        2,
        3,
        c -> new RatioOperator(c.arg(0), c.arg(1), scaleArg(c, 2), true));
    define("histogram", "histogram(attribute)", 1, 1, c -> new HistogramOperator(c.arg(0)));
    define("quantile", "quantile(attribute, q)", 2, 2, Operators::quantile);
  }

  private static void define(String name, String signature, int min, int max, Factory f) {
    DEFINITIONS.put(name, new Definition(signature, min, max, f));
  }

  private static double scaleArg(OperatorCall c, int i) throws QueryException {
    return c.args().size() > i ? c.number(i) : 1.0;
  }

  private static Operator quantile(OperatorCall c) throws QueryException {
    double q = c.number(1);
    if (q < 0 || q > 1) {
      OperatorCall.Argument a = c.args().get(1);
      throw QueryException.expected(
          a.position(), "a quantile between 0 and 1", "'" + a.text() + "'");
    }
    return new QuantileOperator(c.arg(0), q, c.arg(1));
  }

  /** Whether {@code name} names an operator. */
  public static boolean isOperator(String name) {
    return DEFINITIONS.containsKey(name.toLowerCase(Locale.ROOT));
  }

  /** The operator names, comma-separated, for messages and help. */
  public static String names() {
    return String.join(", ", DEFINITIONS.keySet());
  }

  /** Binds {@code call}; a {@link QueryException} points at the name or the bad argument. */
  public static Operator create(OperatorCall call) throws QueryException {
    Definition d = DEFINITIONS.get(call.name().toLowerCase(Locale.ROOT));
    if (d == null) {
      throw QueryException.expected(
          call.position(), "an operator (" + names() + ")", "'" + call.name() + "'");
    }
    int n = call.args().size();
    if (n < d.minArgs() || n > d.maxArgs()) {
      throw QueryException.expected(
          call.position(),
          d.signature(),
          call.name() + " with " + n + (n == 1 ? " argument" : " arguments"));
    }
    for (OperatorCall.Argument a : call.args()) {
      if (a.text().isEmpty()) {
        throw QueryException.expected(a.position(), "an argument", "an empty one");
      }
    }
    return d.factory().create(call);
  }
}
