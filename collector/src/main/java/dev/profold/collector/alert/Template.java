package dev.profold.collector.alert;

import dev.profold.collector.analysis.RegionAnalysisValues;
import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * An annotation template: text with actions in double braces, each a variable and optional
 * functions, for example {@code {{ $labels.service }} spends {{ $value | percent }} in SYNC}.
 *
 * <ul>
 *   <li>Variables: {@code $value} (the derived value), {@code $labels.<name>} (the alert's labels;
 *       missing ones render empty), {@code $context.<key>} (the derived value's context, for
 *       example {@code top_paths}; missing ones render empty).
 *   <li>Functions, applied left to right after {@code |}: {@code percent} (0.234 → 23.4%), {@code
 *       humanize} (SI prefixes, 4 significant digits: 1234567 → 1.235M, 0.0123 → 12.3m), {@code
 *       duration} (seconds: 0.25 → 250ms, 90 → 1m 30s). Applied to text that is not a number they
 *       return it unchanged.
 * </ul>
 *
 * A hand-written parser, not a template library: Go-template compatibility (what Prometheus users
 * know) would need a full engine, and anything smaller from a library would accept more than we can
 * check at load. Unknown variables or functions and unclosed actions are refused at parse time with
 * a column. Immutable; equal when parsed from the same text.
 */
public final class Template {
  /** The function names, for messages and docs. */
  static final List<String> FUNCTIONS = List.of("duration", "humanize", "percent");

  private sealed interface Part permits Text, Action {}

  private record Text(String text) implements Part {}

  /** kind: value, labels or context; key: label or context key (null for value). */
  private record Action(String kind, String key, List<String> functions) implements Part {}

  /** What a template renders from. */
  public record Data(double value, Map<String, String> labels, Map<String, String> context) {}

  private final String source;
  private final List<Part> parts;

  private Template(String source, List<Part> parts) {
    this.source = source;
    this.parts = List.copyOf(parts);
  }

  /**
   * Parses {@code text}.
   *
   * @throws RuleException naming the column and the problem
   */
  public static Template parse(String text) throws RuleException {
    List<Part> parts = new ArrayList<>();
    int pos = 0;
    while (pos < text.length()) {
      int open = text.indexOf("{{", pos);
      if (open < 0) {
        parts.add(new Text(text.substring(pos)));
        break;
      }
      if (open > pos) {
        parts.add(new Text(text.substring(pos, open)));
      }
      int close = text.indexOf("}}", open + 2);
      if (close < 0) {
        throw new RuleException(open + 1, "'{{' is not closed with '}}'");
      }
      parts.add(action(text, open + 2, close));
      pos = close + 2;
    }
    return new Template(text, parts);
  }

  private static Action action(String text, int from, int to) throws RuleException {
    String[] pieces = text.substring(from, to).split("\\|", -1);
    int col = from + 1; // 1-based column of the current piece's start
    String head = pieces[0].strip();
    int headCol = col + leadingSpace(pieces[0]);
    String kind;
    String key = null;
    if (head.isEmpty()) {
      throw new RuleException(
          headCol, "empty action: write {{ $value }}, {{ $labels.NAME }} or {{ $context.KEY }}");
    } else if (head.equals("$value")) {
      kind = "value";
    } else if (head.startsWith("$labels.") || head.startsWith("$context.")) {
      kind = head.startsWith("$labels.") ? "labels" : "context";
      key = head.substring(kind.length() + 2);
      if (!key.matches("[A-Za-z_][A-Za-z0-9_]*")) {
        throw new RuleException(
            headCol + kind.length() + 2,
            "'"
                + key
                + "' is not a "
                + (kind.equals("labels") ? "label name" : "context key")
                + " (letters, digits and _)");
      }
    } else if (head.equals("$labels") || head.equals("$context")) {
      throw new RuleException(
          headCol, "name the entry: " + head + ".NAME, for example " + head + ".service");
    } else {
      throw new RuleException(
          headCol,
          "unknown variable '"
              + head
              + "'; variables: $value, $labels.NAME, $context.KEY (no spaces or '-' trimming)");
    }
    List<String> functions = new ArrayList<>();
    col += pieces[0].length() + 1;
    for (int i = 1; i < pieces.length; i++) {
      String f = pieces[i].strip();
      int fCol = col + leadingSpace(pieces[i]);
      if (!FUNCTIONS.contains(f)) {
        throw new RuleException(
            fCol,
            (f.isEmpty() ? "missing function name after '|'" : "unknown function '" + f + "'")
                + "; functions: "
                + String.join(", ", FUNCTIONS));
      }
      functions.add(f);
      col += pieces[i].length() + 1;
    }
    return new Action(kind, key, functions);
  }

  private static int leadingSpace(String s) {
    int n = 0;
    while (n < s.length() && Character.isWhitespace(s.charAt(n))) {
      n++;
    }
    return n;
  }

  /** The template rendered for {@code data}. */
  public String render(Data data) {
    StringBuilder b = new StringBuilder();
    for (Part p : parts) {
      if (p instanceof Text t) {
        b.append(t.text());
      } else if (p instanceof Action a) {
        b.append(render(a, data));
      }
    }
    return b.toString();
  }

  private static String render(Action a, Data d) {
    String text;
    Double number;
    switch (a.kind()) {
      case "value" -> {
        // NaN and infinities pass through the numeric functions as their text, as labels do.
        number = Double.isFinite(d.value()) ? d.value() : null;
        text = plain(d.value());
      }
      case "labels" -> {
        text = d.labels().getOrDefault(a.key(), "");
        number = number(text);
      }
      default -> {
        text = d.context().getOrDefault(a.key(), "");
        number = number(text);
      }
    }
    for (String f : a.functions()) {
      if (number == null) {
        continue; // text that is not a number passes through the numeric functions unchanged
      }
      text =
          switch (f) {
            case "percent" -> percent(number);
            case "humanize" -> humanize(number);
            default -> duration(number);
          };
      number = number(text);
    }
    return text;
  }

  private static Double number(String s) {
    try {
      double v = Double.parseDouble(s.strip());
      return Double.isFinite(v) ? v : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /**
   * Whole numbers without a fraction, others as Java prints them; {@code NaN}, {@code +Inf} and
   * {@code -Inf} as Prometheus spells them (and as the analysis context does).
   */
  static String plain(double v) {
    if (!Double.isFinite(v)) {
      return RegionAnalysisValues.nonFinite(v);
    }
    if (v == Math.rint(v) && Math.abs(v) < 1e15) {
      return Long.toString((long) v);
    }
    return Double.toString(v);
  }

  /** {@code 0.2345 → 23.5%}: one decimal, trailing zeros dropped. */
  static String percent(double v) {
    if (!Double.isFinite(v * 100)) {
      return plain(v * 100) + "%"; // beyond a double: +Inf%
    }
    return new BigDecimal(Double.toString(v * 100))
            .setScale(1, RoundingMode.HALF_UP)
            .stripTrailingZeros()
            .toPlainString()
        + "%";
  }

  private static final String[] BIG = {"", "k", "M", "G", "T", "P", "E"};
  private static final String[] SMALL = {"", "m", "µ", "n", "p", "f", "a"};

  /** SI prefix and 4 significant digits: {@code 1234567 → 1.235M}, {@code 0.0123 → 12.3m}. */
  static String humanize(double v) {
    if (v == 0) {
      return "0";
    }
    double a = Math.abs(v);
    int step = 0;
    String prefix = "";
    if (a >= 1000) {
      while (a >= 1000 && step < BIG.length - 1) {
        a /= 1000;
        step++;
      }
      prefix = BIG[step];
    } else if (a < 1) {
      while (a < 1 && step < SMALL.length - 1) {
        a *= 1000;
        step++;
      }
      prefix = SMALL[step];
    }
    return (v < 0 ? "-" : "") + significant(a, 4) + prefix;
  }

  /**
   * Seconds as {@code 250ms}, {@code 4.5s}, {@code 1m 30s}, {@code 2h 0m 5s}, {@code 1d 3h 0m 0s}.
   */
  static String duration(double seconds) {
    if (seconds < 0) {
      return "-" + duration(-seconds);
    }
    if (seconds == 0) {
      return "0s";
    }
    if (seconds < 1e-6) {
      return significant(seconds * 1e9, 3) + "ns";
    }
    if (seconds < 1e-3) {
      return significant(seconds * 1e6, 3) + "µs";
    }
    if (seconds < 1) {
      return significant(seconds * 1e3, 3) + "ms";
    }
    if (seconds < 60) {
      return significant(seconds, 3) + "s";
    }
    long s = Math.round(seconds);
    long d = s / 86_400;
    long h = s % 86_400 / 3600;
    long m = s % 3600 / 60;
    long rest = s % 60;
    StringBuilder b = new StringBuilder();
    if (d > 0) {
      b.append(d).append("d ");
    }
    if (d > 0 || h > 0) {
      b.append(h).append("h ");
    }
    return b.append(m).append("m ").append(rest).append('s').toString();
  }

  private static String significant(double v, int digits) {
    return new BigDecimal(Double.toString(v))
        .round(new MathContext(digits, RoundingMode.HALF_UP))
        .stripTrailingZeros()
        .toPlainString();
  }

  /** The text this template was parsed from. */
  public String source() {
    return source;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Template t && t.source.equals(source);
  }

  @Override
  public int hashCode() {
    return source.hashCode();
  }

  @Override
  public String toString() {
    return source;
  }
}
