package dev.profold.collector.query;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The functions of LET, after Caliper's preprocessor. Each adds one attribute to a record when its
 * inputs are present and leaves the record alone otherwise:
 *
 * <ul>
 *   <li>{@code scale(a, s)}: {@code a * s} (floating point);
 *   <li>{@code ratio(a, b[, s])}: {@code s * a / b}, when {@code b} is not 0 ({@code s} defaults to
 *       1);
 *   <li>{@code first(a, b, ...)}: the value of the first of the attributes the record has;
 *   <li>{@code truncate(a[, s])}: {@code a} rounded toward zero to a multiple of {@code s} (default
 *       1); an integer stays an integer when {@code s} is one.
 * </ul>
 *
 * Numeric functions read Long and Double values only.
 */
final class LetFunctions {
  private LetFunctions() {}

  /** One bound LET definition. Immutable. */
  @FunctionalInterface
  interface Derivation {
    /** Adds the derived attribute to {@code record} (a mutable copy) when it can. */
    void apply(Map<String, Object> record);
  }

  static final String NAMES = "scale, ratio, first, truncate";

  /** Binds {@code b}; a {@link QueryException} points at the function or the bad argument. */
  static Derivation bind(LetBinding b) throws QueryException {
    OperatorCall c = b.function();
    String target = b.target();
    int n = c.args().size();
    switch (c.name().toLowerCase(Locale.ROOT)) {
      case "scale" -> {
        arity(c, "scale(attribute, scale)", n == 2);
        String a = c.arg(0);
        double s = c.number(1);
        return r -> {
          if (r.get(a) instanceof Number x) {
            r.put(target, s * x.doubleValue());
          }
        };
      }
      case "ratio" -> {
        arity(c, "ratio(numerator, denominator[, scale])", n == 2 || n == 3);
        String a = c.arg(0);
        String d = c.arg(1);
        double s = n == 3 ? c.number(2) : 1.0;
        return r -> {
          if (r.get(a) instanceof Number x
              && r.get(d) instanceof Number y
              && y.doubleValue() != 0) {
            r.put(target, s * (x.doubleValue() / y.doubleValue()));
          }
        };
      }
      case "first" -> {
        arity(c, "first(attribute, ...)", n >= 1);
        List<String> names = c.args().stream().map(OperatorCall.Argument::text).toList();
        return r -> {
          for (String a : names) {
            Object v = r.get(a);
            if (v != null) {
              r.put(target, v);
              return;
            }
          }
        };
      }
      case "truncate" -> {
        arity(c, "truncate(attribute[, scale])", n == 1 || n == 2);
        String a = c.arg(0);
        double s = n == 2 ? c.number(1) : 1.0;
        if (s == 0) {
          OperatorCall.Argument arg = c.args().get(1);
          throw QueryException.expected(arg.position(), "a non-zero scale", "'" + arg.text() + "'");
        }
        boolean integralScale = s == Math.rint(s);
        return r -> {
          Object v = r.get(a);
          if (integralScale && Math.abs(s) < 0x1p62 && Values.isIntegral(v)) {
            // In whole numbers: through a double, a value above 2^53 would lose its last digits.
            long x = ((Number) v).longValue();
            long step = Math.abs((long) s);
            r.put(target, x - x % step); // % truncates towards zero, as truncate does
            return;
          }
          if (v instanceof Number x) {
            double q = x.doubleValue() / s;
            double t = (q < 0 ? Math.ceil(q) : Math.floor(q)) * s;
            r.put(target, Values.isIntegral(x) && integralScale ? (Object) (long) t : (Object) t);
          }
        };
      }
      default ->
          throw QueryException.expected(
              c.position(), "a LET function (" + NAMES + ")", "'" + c.name() + "'");
    }
  }

  private static void arity(OperatorCall c, String signature, boolean ok) throws QueryException {
    if (!ok) {
      int n = c.args().size();
      throw QueryException.expected(
          c.position(), signature, c.name() + " with " + n + (n == 1 ? " argument" : " arguments"));
    }
  }
}
