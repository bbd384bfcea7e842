package dev.profold.collector.query;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Recursive-descent parser of CalQL into a {@link Query}. Stateless entry point; each parse uses
 * its own cursor.
 *
 * <p>Grammar (keywords case-insensitive, clauses in any order, each at most once):
 *
 * <pre>
 * query     = clause* [";"] END
 * clause    = SELECT item ("," item)*
 *           | AGGREGATE agg ("," agg)*
 *           | WHERE cond (("," | AND) cond)*
 *           | GROUP BY word ("," word)*
 *           | LET word "=" call ("," word "=" call)*
 *           | ORDER BY sort ("," sort)*
 *           | LIMIT integer
 *           | FORMAT word
 * item      = "*" | call [AS word] | word [AS word]
 * agg       = call | word                       (a bare operator name: no arguments;
 *                                                any other bare word w: sum(w))
 * call      = WORD "(" [word ("," word)*] ")"
 * cond      = NOT cond | "(" cond ")" | word [op word]
 * op        = "=" | "!=" | "&lt;" | "&lt;=" | "&gt;" | "&gt;="
 * sort      = (call | word) [ASC | DESC]
 * word      = WORD | QUOTED
 * </pre>
 *
 * <p>Errors are {@link QueryException}s naming the column and what was expected. A condition nests
 * at most {@value #MAX_NESTING} deep (NOT and parentheses), so no query text can exhaust the
 * parsing thread's stack.
 */
public final class QueryParser {
  /** Deepest nesting of NOT and parentheses in one condition. */
  static final int MAX_NESTING = 100;

  private static final String CLAUSES =
      "a clause (SELECT, AGGREGATE, WHERE, GROUP BY, LET, ORDER BY, LIMIT, FORMAT)";

  private enum Clause {
    SELECT,
    AGGREGATE,
    WHERE,
    GROUP,
    LET,
    ORDER,
    LIMIT,
    FORMAT
  }

  private final List<Token> tokens;
  private int pos;
  private int nesting; // NOT and parentheses open around the condition being read

  private final List<SelectItem> select = new ArrayList<>();
  private final List<OperatorCall> aggregate = new ArrayList<>();
  private final List<Condition> where = new ArrayList<>();
  private final List<String> groupBy = new ArrayList<>();
  private final List<LetBinding> let = new ArrayList<>();
  private final List<SortKey> orderBy = new ArrayList<>();
  private final List<OperatorCall> orderByCalls = new ArrayList<>(); // ORDER BY given as a call
  private OptionalInt limit = OptionalInt.empty();
  private Optional<OutputFormat> format = Optional.empty();

  private QueryParser(List<Token> tokens) {
    this.tokens = tokens;
  }

  /** Parses {@code text} into a query whose operators and LET functions are known. */
  public static Query parse(String text) throws QueryException {
    return new QueryParser(Lexer.tokenize(text)).query();
  }

  private Query query() throws QueryException {
    Map<Clause, Token> seen = new EnumMap<>(Clause.class);
    if (peek().kind() == Token.Kind.END || peek().kind() == Token.Kind.SEMICOLON) {
      // ";" alone is no query either, as "" is not
      throw QueryException.expected(peek().column(), CLAUSES, peek().describe());
    }
    String expected = CLAUSES;
    while (peek().kind() != Token.Kind.END) {
      Token t = next();
      if (t.kind() == Token.Kind.SEMICOLON) {
        expect(Token.Kind.END, "end of query");
        break;
      }
      Clause c = clause(t, expected);
      Token first = seen.putIfAbsent(c, t);
      if (first != null) {
        throw QueryException.expected(
            t.column(),
            "each clause once (" + first.text() + " is already at column " + first.column() + ")",
            "a second " + t.describe());
      }
      switch (c) {
        case SELECT -> selectList();
        case AGGREGATE -> aggregateList();
        case WHERE -> whereList();
        case GROUP -> {
          keyword("BY");
          groupByList();
        }
        case LET -> letList();
        case ORDER -> {
          keyword("BY");
          orderByList();
        }
        case LIMIT -> limitClause();
        case FORMAT -> formatClause();
      }
      expected =
          switch (c) {
            case LIMIT, FORMAT -> CLAUSES;
            case WHERE -> "',', AND or " + CLAUSES;
            default -> "',' or " + CLAUSES;
          };
    }
    Query q = new Query(select, aggregate, where, groupBy, let, orderBy, limit, format);
    for (OperatorCall call : q.operatorCalls()) {
      Operators.create(call);
    }
    checkOrderByCalls(q);
    for (LetBinding b : let) {
      LetFunctions.bind(b);
    }
    return q;
  }

  /**
   * ORDER BY sorts by a column name; an operator call there names the column of the same-named
   * operator of SELECT or AGGREGATE, so one that computes something else would sort by the other's
   * values: refused.
   */
  private void checkOrderByCalls(Query q) throws QueryException {
    for (OperatorCall sortCall : orderByCalls) {
      Operator sort = Operators.create(sortCall);
      for (OperatorCall call : q.operatorCalls()) {
        Operator op = Operators.create(call);
        if (op.column().equals(sort.column()) && !op.definition().equals(sort.definition())) {
          throw new QueryException(
              sortCall.position(),
              "ORDER BY "
                  + sortCall
                  + " sorts by the column "
                  + sort.column()
                  + ", which holds "
                  + call
                  + " (at column "
                  + call.position()
                  + "); sort by what the query computes: ORDER BY "
                  + call);
        }
      }
    }
  }

  private static Clause clause(Token t, String expected) throws QueryException {
    if (t.kind() == Token.Kind.WORD) {
      for (Clause c : Clause.values()) {
        if (t.isKeyword(c.name())) {
          return c;
        }
      }
    }
    throw QueryException.expected(t.column(), expected, t.describe());
  }

  // --- clauses

  private void selectList() throws QueryException {
    do {
      Token t = peek();
      if (t.kind() == Token.Kind.WORD && t.text().equals("*")) {
        next();
        select.add(new SelectItem.All(t.column()));
      } else if (isCall()) {
        OperatorCall call = operatorCall();
        select.add(new SelectItem.Aggregation(call, alias()));
      } else {
        Token w = word("an attribute, an operator call or *");
        select.add(new SelectItem.Attribute(w.text(), alias(), w.column()));
      }
    } while (accept(Token.Kind.COMMA));
  }

  private String alias() throws QueryException {
    if (peek().isKeyword("AS")) {
      next();
      return word("a column name after AS").text();
    }
    return null;
  }

  private void aggregateList() throws QueryException {
    do {
      if (isCall()) {
        aggregate.add(operatorCall());
      } else {
        Token w = word("an operator");
        if (w.kind() == Token.Kind.WORD && Operators.isOperator(w.text())) {
          aggregate.add(new OperatorCall(w.text(), List.of(), w.column()));
        } else {
          aggregate.add(
              new OperatorCall(
                  "sum", List.of(new OperatorCall.Argument(w.text(), w.column())), w.column()));
        }
      }
    } while (accept(Token.Kind.COMMA));
  }

  private void whereList() throws QueryException {
    do {
      where.add(condition());
    } while (accept(Token.Kind.COMMA) || acceptKeyword("AND"));
  }

  private Condition condition() throws QueryException {
    Token t = peek();
    boolean not = t.isKeyword("NOT") && !isComparison(peek(1).kind());
    if (not || t.kind() == Token.Kind.LPAREN) {
      if (nesting == MAX_NESTING) {
        throw QueryException.expected(
            t.column(),
            "a condition nested at most " + MAX_NESTING + " deep (NOT and parentheses)",
            t.describe());
      }
      next();
      nesting++;
      Condition c = condition();
      if (!not) {
        expect(Token.Kind.RPAREN, "')'");
      }
      nesting--;
      return not ? c.negate() : c;
    }
    Token attr = word("a condition (attribute, attribute=value, attribute<value, NOT ...)");
    Token op = peek();
    if (!isComparison(op.kind())) {
      return new Condition(attr.text(), Condition.Comparison.EXISTS, "", attr.column());
    }
    next();
    Token value = word("a value after '" + op.text() + "'");
    Condition.Comparison cmp =
        switch (op.kind()) {
          case EQ -> Condition.Comparison.EQ;
          case NE -> Condition.Comparison.NE;
          case LT -> Condition.Comparison.LT;
          case LE -> Condition.Comparison.LE;
          case GT -> Condition.Comparison.GT;
          default -> Condition.Comparison.GE;
        };
    return new Condition(attr.text(), cmp, value.text(), attr.column());
  }

  private static boolean isComparison(Token.Kind k) {
    return switch (k) {
      case EQ, NE, LT, LE, GT, GE -> true;
      default -> false;
    };
  }

  private void groupByList() throws QueryException {
    do {
      groupBy.add(word("an attribute").text());
    } while (accept(Token.Kind.COMMA));
  }

  private void letList() throws QueryException {
    do {
      Token target = word("a new attribute name");
      expect(Token.Kind.EQ, "'=' after the LET attribute");
      if (!isCall()) {
        throw QueryException.expected(
            peek().column(), "a LET function (" + LetFunctions.NAMES + ")", peek().describe());
      }
      let.add(new LetBinding(target.text(), call(), target.column()));
    } while (accept(Token.Kind.COMMA));
  }

  private void orderByList() throws QueryException {
    do {
      Token at = peek();
      String name;
      if (isCall()) {
        OperatorCall call = operatorCall();
        orderByCalls.add(call);
        name = Operators.create(call).column();
      } else {
        name = word("a column to sort by").text();
      }
      boolean desc = false;
      if (acceptKeyword("DESC")) {
        desc = true;
      } else {
        acceptKeyword("ASC");
      }
      orderBy.add(new SortKey(name, desc, at.column()));
    } while (accept(Token.Kind.COMMA));
  }

  private void limitClause() throws QueryException {
    Token t = peek();
    try {
      if (t.kind() == Token.Kind.WORD) {
        int n = Integer.parseInt(t.text());
        if (n >= 0) {
          next();
          limit = OptionalInt.of(n);
          return;
        }
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw QueryException.expected(t.column(), "a row count (a non-negative integer)", t.describe());
  }

  private void formatClause() throws QueryException {
    Token t = peek();
    OutputFormat f = t.isWord() ? OutputFormat.named(t.text()) : null;
    if (f == null) {
      throw QueryException.expected(
          t.column(), "a format (" + OutputFormat.names() + ")", t.describe());
    }
    next();
    format = Optional.of(f);
  }

  // --- pieces

  /** Whether an operator or function call starts here: an unquoted word followed by '('. */
  private boolean isCall() {
    return peek().kind() == Token.Kind.WORD && peek(1).kind() == Token.Kind.LPAREN;
  }

  /** A call whose name must be an aggregation operator, checked before its arguments. */
  private OperatorCall operatorCall() throws QueryException {
    Token name = peek();
    if (!Operators.isOperator(name.text())) {
      throw QueryException.expected(
          name.column(), "an operator (" + Operators.names() + ")", name.describe());
    }
    return call();
  }

  private OperatorCall call() throws QueryException {
    Token name = next();
    next(); // '('
    List<OperatorCall.Argument> args = new ArrayList<>();
    if (!accept(Token.Kind.RPAREN)) {
      do {
        Token a = word("an argument");
        args.add(new OperatorCall.Argument(a.text(), a.column()));
      } while (accept(Token.Kind.COMMA));
      expect(Token.Kind.RPAREN, "',' or ')'");
    }
    return new OperatorCall(name.text(), args, name.column());
  }

  private Token word(String expected) throws QueryException {
    Token t = peek();
    if (!t.isWord()) {
      throw QueryException.expected(t.column(), expected, t.describe());
    }
    return next();
  }

  private void keyword(String keyword) throws QueryException {
    if (!acceptKeyword(keyword)) {
      Token prev = tokens.get(pos - 1);
      throw QueryException.expected(
          peek().column(), "'" + keyword + "' after " + prev.text(), peek().describe());
    }
  }

  private boolean acceptKeyword(String keyword) {
    if (peek().isKeyword(keyword)) {
      next();
      return true;
    }
    return false;
  }

  private boolean accept(Token.Kind kind) {
    if (peek().kind() == kind) {
      next();
      return true;
    }
    return false;
  }

  private void expect(Token.Kind kind, String expected) throws QueryException {
    if (!accept(kind)) {
      throw QueryException.expected(peek().column(), expected, peek().describe());
    }
  }

  private Token peek() {
    return tokens.get(pos);
  }

  private Token peek(int ahead) {
    return tokens.get(Math.min(pos + ahead, tokens.size() - 1));
  }

  private Token next() {
    Token t = tokens.get(pos);
    if (t.kind() != Token.Kind.END) {
      pos++;
    }
    return t;
  }
}
