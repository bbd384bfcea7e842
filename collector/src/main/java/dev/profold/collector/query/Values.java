package dev.profold.collector.query;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;

/**
 * The value model of query records and results, in one place.
 *
 * <p>A record maps attribute labels to {@link String}, {@link Long}, {@link Double}, {@link
 * Boolean}, a {@code List<String>} (a nested path, outermost element first) or a {@link
 * PreAggregated} state. Results add {@link HistogramView}. Other integral numbers are read as Long,
 * other numbers as Double.
 */
final class Values {
  private Values() {}

  /** Whether {@code v} is a number that counts as an integer (Long, Integer, Short, Byte). */
  static boolean isIntegral(Object v) {
    return v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte;
  }

  /** Brings a value from an API caller into the model: small integers to Long, paths to lists. */
  static Object normalize(Object v) {
    if (v instanceof Integer || v instanceof Short || v instanceof Byte) {
      return ((Number) v).longValue();
    }
    if (v instanceof Float f) {
      return f.doubleValue();
    }
    if (v instanceof List<?> list) {
      return path(list);
    }
    return v;
  }

  /** An immutable path from any list, elements as text. */
  static List<String> path(List<?> list) {
    List<String> out = new ArrayList<>(list.size());
    for (Object o : list) {
      out.add(String.valueOf(o));
    }
    return List.copyOf(out);
  }

  /** The path as printed: elements joined by {@code /}. */
  static String pathText(List<?> path) {
    StringBuilder sb = new StringBuilder();
    for (Object o : path) {
      if (sb.length() > 0) {
        sb.append('/');
      }
      sb.append(o);
    }
    return sb.toString();
  }

  /** A value as printed in table, CSV and tree output; null prints as the empty string. */
  static String text(Object v) {
    if (v == null) {
      return "";
    }
    if (v instanceof Double d) {
      return number(d);
    }
    if (v instanceof List<?> list) {
      return pathText(list);
    }
    return v.toString();
  }

  /**
   * A double as printed: integers without a fraction, others rounded to six decimals (trailing
   * zeros dropped), tiny and huge magnitudes with seven significant digits, {@code inf}, {@code
   * -inf} and {@code nan} for the non-finite values.
   */
  static String number(double d) {
    if (Double.isNaN(d)) {
      return "nan";
    }
    if (Double.isInfinite(d)) {
      return d > 0 ? "inf" : "-inf";
    }
    if (d == 0) {
      return "0";
    }
    double abs = Math.abs(d);
    if (d == Math.rint(d) && abs < 1e15) {
      return Long.toString((long) d);
    }
    if (abs >= 1e-4 && abs < 1e15) {
      return new BigDecimal(d)
          .setScale(6, RoundingMode.HALF_EVEN)
          .stripTrailingZeros()
          .toPlainString();
    }
    return new BigDecimal(d).round(new MathContext(7)).stripTrailingZeros().toString();
  }

  /** Numeric value of {@code v}, or NaN when it is not a plain number. */
  static double toDouble(Object v) {
    return v instanceof Number n ? n.doubleValue() : Double.NaN;
  }

  /**
   * A total order for sorting: numbers (numerically), then booleans, strings, paths (element by
   * element), then anything else by its text. Callers place nulls themselves.
   */
  static int compare(Object a, Object b) {
    int ra = rank(a);
    int rb = rank(b);
    if (ra != rb) {
      return Integer.compare(ra, rb);
    }
    if (a instanceof Number x && b instanceof Number y) {
      return compareNumbers(x, y);
    }
    if (a instanceof Boolean x && b instanceof Boolean y) {
      return Boolean.compare(x, y);
    }
    if (a instanceof List<?> x && b instanceof List<?> y) {
      for (int i = 0; i < Math.min(x.size(), y.size()); i++) {
        int c = String.valueOf(x.get(i)).compareTo(String.valueOf(y.get(i)));
        if (c != 0) {
          return c;
        }
      }
      return Integer.compare(x.size(), y.size());
    }
    return text(a).compareTo(text(b));
  }

  /**
   * Numbers by their exact values, so that the order is total across integers and doubles: through
   * doubles, 2^53 + 1 equalled the double 2^53 while being above the integer 2^53, and a sort could
   * fail ("Comparison method violates its general contract"). Doubles among themselves, and an
   * integer against a double of the same value, as {@link Double#compare} orders them (-0.0 below
   * 0, NaN above everything).
   */
  private static int compareNumbers(Number x, Number y) {
    if (x instanceof Long a && y instanceof Long b) {
      return Long.compare(a, b);
    }
    if (x instanceof Long a) {
      return compareExact(a, y.doubleValue());
    }
    if (y instanceof Long b) {
      return -compareExact(b, x.doubleValue());
    }
    return Double.compare(x.doubleValue(), y.doubleValue());
  }

  private static int compareExact(long a, double b) {
    if (Double.isNaN(b) || b >= 0x1p63) {
      return -1;
    }
    if (b < -0x1p63) {
      return 1;
    }
    long whole = (long) b; // toward zero: exact, |b| < 2^63
    if (a != whole) {
      return Long.compare(a, whole);
    }
    double fraction = b - whole; // exact: below 2^53 a double's whole part converts back exactly
    if (fraction != 0) {
      return fraction > 0 ? -1 : 1;
    }
    return Double.compare((double) a, b); // equal values: only -0.0 tells them apart
  }

  private static int rank(Object v) {
    if (v instanceof Number) {
      return 0;
    }
    if (v instanceof Boolean) {
      return 1;
    }
    if (v instanceof String) {
      return 2;
    }
    if (v instanceof List) {
      return 3;
    }
    return 4;
  }
}
