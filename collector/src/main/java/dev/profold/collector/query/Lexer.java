package dev.profold.collector.query;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Splits CalQL text into {@link Token}s.
 *
 * <p>A word runs until whitespace, a quote or one of {@code , ; = < > ! ( )}; so attribute names
 * such as {@code time.duration}, {@code iteration#mainloop}, {@code sum#x} and numbers such as
 * {@code 1e-6} are single words. A backslash takes the next character literally. Text in double or
 * single quotes is one word that is never a keyword. Columns are 1-based character positions in the
 * query text.
 */
final class Lexer {
  private Lexer() {}

  /** Tokenizes {@code text}; the last token is always {@link Token.Kind#END}. */
  static List<Token> tokenize(String text) throws QueryException {
    List<Token> tokens = new ArrayList<>();
    int i = 0;
    int n = text.length();
    while (i < n) {
      char c = text.charAt(i);
      int column = i + 1;
      if (Character.isWhitespace(c)) {
        i++;
        continue;
      }
      switch (c) {
        case '(' -> tokens.add(new Token(Token.Kind.LPAREN, "(", column));
        case ')' -> tokens.add(new Token(Token.Kind.RPAREN, ")", column));
        case ',' -> tokens.add(new Token(Token.Kind.COMMA, ",", column));
        case ';' -> tokens.add(new Token(Token.Kind.SEMICOLON, ";", column));
        case '=' -> tokens.add(new Token(Token.Kind.EQ, "=", column));
        case '<', '>', '!' -> {
          boolean withEq = i + 1 < n && text.charAt(i + 1) == '=';
          if (c == '!' && !withEq) {
            throw QueryException.expected(column, "'!='", "'!'");
          }
          tokens.add(comparison(c, withEq, column));
          if (withEq) {
            i++;
          }
        }
        case '"', '\'' -> {
          i = quoted(text, i, tokens);
          continue;
        }
        default -> {
          i = word(text, i, tokens);
          continue;
        }
      }
      i++;
    }
    tokens.add(new Token(Token.Kind.END, "", n + 1));
    return tokens;
  }

  private static Token comparison(char c, boolean withEq, int column) {
    return switch (c) {
      case '<' ->
          withEq ? new Token(Token.Kind.LE, "<=", column) : new Token(Token.Kind.LT, "<", column);
      case '>' ->
          withEq ? new Token(Token.Kind.GE, ">=", column) : new Token(Token.Kind.GT, ">", column);
      default -> new Token(Token.Kind.NE, "!=", column);
    };
  }

  private static boolean endsWord(char c) {
    return Character.isWhitespace(c) || ",;=<>!()\"'".indexOf(c) >= 0;
  }

  /** Reads an unquoted word starting at {@code start}; returns the index after it. */
  private static int word(String text, int start, List<Token> tokens) throws QueryException {
    StringBuilder sb = new StringBuilder();
    int i = start;
    while (i < text.length() && !endsWord(text.charAt(i))) {
      char c = text.charAt(i);
      if (c == '\\') {
        if (i + 1 >= text.length()) {
          throw QueryException.expected(i + 2, "a character after '\\'", "end of query");
        }
        i++;
        c = text.charAt(i);
      }
      sb.append(c);
      i++;
    }
    tokens.add(new Token(Token.Kind.WORD, sb.toString(), start + 1));
    return i;
  }

  /** Reads a quoted word whose opening quote is at {@code start}; returns the index after it. */
  private static int quoted(String text, int start, List<Token> tokens) throws QueryException {
    char quote = text.charAt(start);
    StringBuilder sb = new StringBuilder();
    int i = start + 1;
    while (i < text.length()) {
      char c = text.charAt(i);
      if (c == quote) {
        tokens.add(new Token(Token.Kind.QUOTED, sb.toString(), start + 1));
        return i + 1;
      }
      if (c == '\\' && i + 1 < text.length()) {
        i++;
        c = text.charAt(i);
      }
      sb.append(c);
      i++;
    }
    throw QueryException.expected(
        text.length() + 1,
        "a closing " + quote + " for the quote at column " + (start + 1),
        "end of query");
  }

  private static final Set<String> KEYWORDS =
      Set.of(
          "select",
          "aggregate",
          "where",
          "group",
          "let",
          "order",
          "limit",
          "format",
          "by",
          "as",
          "and",
          "not",
          "asc",
          "desc",
          "*");

  /**
   * {@code word} as CalQL text: as is when it reads back as the same plain word and is no keyword,
   * else double-quoted.
   */
  static String quote(String word) {
    boolean plain = !word.isEmpty() && !KEYWORDS.contains(word.toLowerCase(Locale.ROOT));
    for (int i = 0; i < word.length() && plain; i++) {
      char c = word.charAt(i);
      plain = !endsWord(c) && c != '\\';
    }
    return plain ? word : "\"" + word.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }
}
