package dev.profold.collector.query;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The WHERE clause as a record predicate: a record passes when every term holds (see {@link
 * Condition} for Caliper's semantics of each term). Immutable and thread-safe.
 *
 * <p>Comparing a value with a literal: a number compares numerically with a numeric literal (and
 * never matches a non-numeric one); a string compares as text (equality, or lexicographic order for
 * {@code <} and {@code >}); a boolean equals {@code true} or {@code false} and has no order; a path
 * matches when any of its elements does, so {@code function=foo} matches {@code main/foo} and
 * {@code main/foo/bar}, as in Caliper; a pre-aggregated state only exists.
 */
final class RecordFilter {
  private final List<Term> terms;

  RecordFilter(List<Condition> conditions) {
    List<Term> t = new ArrayList<>();
    for (Condition c : conditions) {
      t.add(new Term(c));
    }
    this.terms = List.copyOf(t);
  }

  /** Whether {@code record} passes every term. */
  boolean test(Map<String, ?> record) {
    for (Term t : terms) {
      if (!t.test(record.get(t.attribute))) {
        return false;
      }
    }
    return true;
  }

  private static final class Term {
    final String attribute;
    final Condition.Comparison comparison;
    final String text;
    final Long longValue;
    final double doubleValue;
    final Boolean boolValue;

    Term(Condition c) {
      attribute = c.attribute();
      comparison = c.comparison();
      text = c.value();
      longValue = parseLong(text);
      doubleValue = parseDouble(text);
      boolValue =
          "true".equalsIgnoreCase(text)
              ? Boolean.TRUE
              : "false".equalsIgnoreCase(text) ? Boolean.FALSE : null;
    }

    boolean test(Object v) {
      return switch (comparison) {
        case EXISTS -> v != null;
        case NOT_EXISTS -> v == null;
        case NE -> v == null || !any(v, Condition.Comparison.EQ);
        default -> v != null && any(v, comparison);
      };
    }

    private boolean any(Object v, Condition.Comparison op) {
      if (v instanceof List<?> path) {
        if (op == Condition.Comparison.EQ && text.indexOf('/') >= 0) {
          return Values.pathText(path).equals(text);
        }
        for (Object e : path) {
          if (matches(String.valueOf(e), op)) {
            return true;
          }
        }
        return false;
      }
      return matches(v, op);
    }

    private boolean matches(Object v, Condition.Comparison op) {
      int c;
      if (v instanceof String s) {
        c = s.compareTo(text);
      } else if (v instanceof Boolean b) {
        return op == Condition.Comparison.EQ && b.equals(boolValue);
      } else if (Values.isIntegral(v) && longValue != null) {
        c = Long.compare(((Number) v).longValue(), longValue);
      } else if (v instanceof Number n && !Double.isNaN(doubleValue)) {
        double d = n.doubleValue();
        if (Double.isNaN(d)) {
          return false;
        }
        c = Double.compare(d == 0.0 ? 0.0 : d, doubleValue == 0.0 ? 0.0 : doubleValue);
      } else {
        return false;
      }
      return switch (op) {
        case EQ -> c == 0;
        case LT -> c < 0;
        case LE -> c <= 0;
        case GT -> c > 0;
        case GE -> c >= 0;
        default -> false;
      };
    }

    private static Long parseLong(String s) {
      try {
        return Long.valueOf(s);
      } catch (NumberFormatException e) {
        return null;
      }
    }

    /**
     * {@code s} as a decimal number ({@code 1}, {@code -2.5}, {@code 1e-3}), else NaN: Java's own
     * forms ({@code 1f}, {@code 0x1p3}, {@code Infinity}) are text here.
     */
    private static double parseDouble(String s) {
      if (!DECIMAL.matcher(s).matches()) {
        return Double.NaN;
      }
      try {
        return Double.parseDouble(s);
      } catch (NumberFormatException e) {
        return Double.NaN;
      }
    }

    private static final java.util.regex.Pattern DECIMAL =
        java.util.regex.Pattern.compile("[-+]?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?");
  }
}
