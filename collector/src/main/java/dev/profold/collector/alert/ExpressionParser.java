package dev.profold.collector.alert;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Recursive-descent parser of {@link RuleExpression}s. Hand-written rather than generated or
 * borrowed: the grammar is a handful of tokens, and a hand-written parser gives the precise
 * "expected X at column N, found Y" messages config errors need, with no dependency. One use only.
 */
final class ExpressionParser {
  private static final String COMPARISONS = ">, >=, <, <=, ==, !=";
  private static final String EXAMPLE = "thread_class_ratio{class=\"sync\"} > 0.2";

  private final String s;
  private int pos;

  ExpressionParser(String text) {
    this.s = text;
  }

  RuleExpression parse() throws RuleException {
    skipSpace();
    if (atEnd()) {
      throw error(
          "the expression is empty; write a value name, a comparison and a number, e.g. "
              + EXAMPLE);
    }
    String name = name("a value name ([a-z_][a-z0-9_]*, e.g. " + EXAMPLE + ")");
    skipSpace();
    List<LabelMatcher> matchers = new ArrayList<>();
    if (peek() == '{') {
      pos++;
      matchers(matchers);
      skipSpace();
    }
    Comparison cmp = comparison();
    skipSpace();
    double threshold = number();
    skipSpace();
    if (!atEnd()) {
      throw error(
          "unexpected "
              + found()
              + " after the number; an expression is one comparison (narrow it with label"
              + " matchers in {...}, or write another rule)");
    }
    return new RuleExpression(name, matchers, cmp, threshold);
  }

  private void matchers(List<LabelMatcher> out) throws RuleException {
    while (true) {
      skipSpace();
      if (peek() == '}') {
        pos++;
        return;
      }
      String label = name("a label name ([a-z_][a-z0-9_]*) or '}'");
      skipSpace();
      LabelMatcher.Op op = matchOp(label);
      skipSpace();
      int at = pos;
      String operand = string(label);
      Pattern p = null;
      if (op == LabelMatcher.Op.MATCHES || op == LabelMatcher.Op.NOT_MATCHES) {
        try {
          p = Pattern.compile("(?:" + operand + ")");
        } catch (PatternSyntaxException e) {
          throw new RuleException(
              at + 1,
              "invalid regular expression for label '"
                  + label
                  + "': "
                  + e.getDescription()
                  + " (Java regex syntax, matched against the whole value)");
        }
      }
      out.add(new LabelMatcher(label, op, operand, p));
      skipSpace();
      char c = peek();
      if (c == ',') {
        pos++;
      } else if (c != '}') {
        throw error("expected ',' or '}' after the matcher on '" + label + "', found " + found());
      }
    }
  }

  private LabelMatcher.Op matchOp(String label) throws RuleException {
    if (s.startsWith("=~", pos)) {
      pos += 2;
      return LabelMatcher.Op.MATCHES;
    }
    if (s.startsWith("!~", pos)) {
      pos += 2;
      return LabelMatcher.Op.NOT_MATCHES;
    }
    if (s.startsWith("!=", pos)) {
      pos += 2;
      return LabelMatcher.Op.NOT_EQUAL;
    }
    if (s.startsWith("==", pos)) {
      throw error("a label matcher uses '=', not '==' (" + label + "=\"value\")");
    }
    if (peek() == '=') {
      pos++;
      return LabelMatcher.Op.EQUAL;
    }
    throw error(
        "expected a matcher operator (=, !=, =~, !~) after label '"
            + label
            + "', found "
            + found());
  }

  private String string(String label) throws RuleException {
    char q = peek();
    if (q != '"' && q != '\'') {
      throw error(
          "expected a quoted value after "
              + label
              + "'s operator (\"value\" or 'value'), found "
              + found());
    }
    int start = pos;
    pos++;
    StringBuilder b = new StringBuilder();
    while (!atEnd()) {
      char c = s.charAt(pos++);
      if (c == q) {
        return b.toString();
      }
      if (c == '\\') {
        if (atEnd()) {
          break;
        }
        char e = s.charAt(pos++);
        switch (e) {
          case 'n' -> b.append('\n');
          case 't' -> b.append('\t');
          case '\\', '"', '\'' -> b.append(e);
          default -> b.append('\\').append(e); // keeps regex escapes such as \d or \.
        }
      } else {
        b.append(c);
      }
    }
    throw new RuleException(start + 1, "the quoted value is not closed (missing " + q + ")");
  }

  private Comparison comparison() throws RuleException {
    String[] ops = {">=", "<=", "==", "!=", ">", "<"};
    Comparison[] cmps = {
      Comparison.GREATER_OR_EQUAL,
      Comparison.LESS_OR_EQUAL,
      Comparison.EQUAL,
      Comparison.NOT_EQUAL,
      Comparison.GREATER,
      Comparison.LESS
    };
    for (int i = 0; i < ops.length; i++) {
      if (s.startsWith(ops[i], pos)) {
        pos += ops[i].length();
        return cmps[i];
      }
    }
    if (peek() == '=') {
      throw error("use '==' to compare for equality ('=' is for label matchers)");
    }
    throw error("expected a comparison (" + COMPARISONS + ") and a number, found " + found());
  }

  private double number() throws RuleException {
    int start = pos;
    if (peek() == '+' || peek() == '-') {
      pos++;
    }
    int digits = 0;
    while (Character.isDigit(peek())) {
      pos++;
      digits++;
    }
    if (peek() == '.') {
      pos++;
      while (Character.isDigit(peek())) {
        pos++;
        digits++;
      }
    }
    if (digits > 0 && (peek() == 'e' || peek() == 'E')) {
      int mark = pos;
      pos++;
      if (peek() == '+' || peek() == '-') {
        pos++;
      }
      if (!Character.isDigit(peek())) {
        pos = mark;
      }
      while (Character.isDigit(peek())) {
        pos++;
      }
    }
    if (digits == 0) {
      pos = start;
      throw error("expected a number after the comparison (e.g. 0.2, 10, 1e-3), found " + found());
    }
    if (peek() == '%') {
      throw error("write shares as fractions: 0.2 rather than 20%");
    }
    double v = Double.parseDouble(s.substring(start, pos));
    if (Double.isInfinite(v)) {
      pos = start;
      throw error("the number is out of range");
    }
    return v;
  }

  private String name(String expected) throws RuleException {
    int start = pos;
    char c = peek();
    if (!(c == '_' || (c >= 'a' && c <= 'z'))) {
      if (c >= 'A' && c <= 'Z') {
        throw error("names are lower case ([a-z_][a-z0-9_]*), found " + found());
      }
      throw error("expected " + expected + ", found " + found());
    }
    while (true) {
      c = peek();
      if (c == '_' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
        pos++;
      } else if ((c >= 'A' && c <= 'Z') || c == '.' || c == '-') {
        throw error(
            "'"
                + c
                + "' is not allowed in a name ([a-z_][a-z0-9_]*), after '"
                + s.substring(start, pos)
                + "'");
      } else {
        break;
      }
    }
    return s.substring(start, pos);
  }

  private String found() {
    if (atEnd()) {
      return "end of expression";
    }
    int end = pos;
    while (end < s.length() && end - pos < 12 && !Character.isWhitespace(s.charAt(end))) {
      end++;
    }
    return "'" + s.substring(pos, Math.max(end, pos + 1)) + "'";
  }

  private RuleException error(String message) {
    return new RuleException(pos + 1, message);
  }

  private void skipSpace() {
    while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) {
      pos++;
    }
  }

  private boolean atEnd() {
    return pos >= s.length();
  }

  private char peek() {
    return pos < s.length() ? s.charAt(pos) : '\0';
  }
}
