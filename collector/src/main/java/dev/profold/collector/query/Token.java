package dev.profold.collector.query;

import java.util.Locale;

/**
 * One lexical token of a CalQL query.
 *
 * @param kind what the token is
 * @param text the token's text; for quoted words the text without quotes and escapes
 * @param column 1-based column of the token's first character
 */
record Token(Kind kind, String text, int column) {

  /** Token kinds. Keywords are plain {@link #WORD}s; the parser recognises them by context. */
  enum Kind {
    /** An unquoted word: attribute, keyword, operator name or number. */
    WORD,
    /** A word written in double or single quotes: never a keyword. */
    QUOTED,
    LPAREN,
    RPAREN,
    COMMA,
    EQ,
    NE,
    LT,
    LE,
    GT,
    GE,
    SEMICOLON,
    END
  }

  /** Whether this is the unquoted keyword {@code keyword} (case-insensitive). */
  boolean isKeyword(String keyword) {
    return kind == Kind.WORD && text.equalsIgnoreCase(keyword);
  }

  /** Whether this token can name an attribute or value (a word, quoted or not). */
  boolean isWord() {
    return kind == Kind.WORD || kind == Kind.QUOTED;
  }

  /** How the token is shown in "found ..." messages. */
  String describe() {
    return switch (kind) {
      case END -> "end of query";
      case QUOTED -> "\"" + text + "\"";
      case WORD -> "'" + text + "'";
      default -> "'" + text + "'";
    };
  }

  /** The keyword form of the text, for messages and lookups. */
  String lower() {
    return text.toLowerCase(Locale.ROOT);
  }
}
