package dev.profold.collector.query;

/**
 * One WHERE clause term with Caliper's semantics, already normalised for {@code NOT}. Immutable.
 *
 * <p>A record passes {@link Comparison#EXISTS} when it has the attribute; {@link
 * Comparison#NOT_EXISTS} when it lacks it; {@link Comparison#EQ}, {@link Comparison#LT}, {@link
 * Comparison#LE}, {@link Comparison#GT}, {@link Comparison#GE} when it has the attribute and the
 * value compares so; {@link Comparison#NE} when no value of the attribute equals (so a record
 * without the attribute passes). {@code NOT} maps each comparison to its Caliper counterpart:
 * {@code NOT a=v} is {@code a!=v}, but {@code NOT a<v} is {@code a>=v} and still needs {@code a}.
 *
 * @param attribute the attribute label
 * @param comparison the test
 * @param value the literal compared against; empty for EXISTS / NOT_EXISTS
 * @param position 1-based column of the term in the query text
 */
public record Condition(String attribute, Comparison comparison, String value, int position) {

  /** The tests a WHERE term can make. */
  public enum Comparison {
    EXISTS(""),
    NOT_EXISTS(""),
    EQ("="),
    NE("!="),
    LT("<"),
    LE("<="),
    GT(">"),
    GE(">=");

    private final String symbol;

    Comparison(String symbol) {
      this.symbol = symbol;
    }

    /** The comparison {@code NOT} turns this one into, following Caliper. */
    public Comparison negate() {
      return switch (this) {
        case EXISTS -> NOT_EXISTS;
        case NOT_EXISTS -> EXISTS;
        case EQ -> NE;
        case NE -> EQ;
        case LT -> GE;
        case GE -> LT;
        case GT -> LE;
        case LE -> GT;
      };
    }

    /** The operator as written in CalQL ({@code ""} for the presence tests). */
    public String symbol() {
      return symbol;
    }
  }

  /** This term under {@code NOT}. */
  public Condition negate() {
    return new Condition(attribute, comparison.negate(), value, position);
  }

  @Override
  public String toString() {
    return switch (comparison) {
      case EXISTS -> Lexer.quote(attribute);
      case NOT_EXISTS -> "NOT " + Lexer.quote(attribute);
      default -> Lexer.quote(attribute) + comparison.symbol() + Lexer.quote(value);
    };
  }
}
