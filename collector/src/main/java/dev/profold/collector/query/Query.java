package dev.profold.collector.query;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A parsed CalQL query: the immutable syntax tree {@link QueryParser} builds. Every list is empty
 * when its clause is absent. A query from {@link QueryParser} has had its operator calls and LET
 * functions checked, so it binds; {@link QueryEvaluator#of(Query)} checks again for queries built
 * directly.
 *
 * @param select SELECT items in order
 * @param aggregate operators of an AGGREGATE clause
 * @param where WHERE terms, all of which must hold
 * @param groupBy GROUP BY attributes ({@code prop:nested} stands for every path attribute)
 * @param let LET definitions in order
 * @param orderBy ORDER BY criteria in order
 * @param limit LIMIT, if given
 * @param format FORMAT, if given
 */
public record Query(
    List<SelectItem> select,
    List<OperatorCall> aggregate,
    List<Condition> where,
    List<String> groupBy,
    List<LetBinding> let,
    List<SortKey> orderBy,
    OptionalInt limit,
    Optional<OutputFormat> format) {

  /** The GROUP BY word that stands for every nested (path-valued) attribute, as in Caliper. */
  public static final String ALL_NESTED = "prop:nested";

  /** Copies the lists. */
  public Query {
    select = List.copyOf(select);
    aggregate = List.copyOf(aggregate);
    where = List.copyOf(where);
    groupBy = List.copyOf(groupBy);
    let = List.copyOf(let);
    orderBy = List.copyOf(orderBy);
  }

  /** Parses {@code text}; a shorthand for {@link QueryParser#parse}. */
  public static Query parse(String text) throws QueryException {
    return QueryParser.parse(text);
  }

  /** Every operator call of SELECT and AGGREGATE, in that order. */
  public List<OperatorCall> operatorCalls() {
    List<OperatorCall> calls = new ArrayList<>();
    for (SelectItem item : select) {
      if (item instanceof SelectItem.Aggregation a) {
        calls.add(a.call());
      }
    }
    calls.addAll(aggregate);
    return calls;
  }

  /**
   * The attribute names the query reads from its input records, in order of first mention: plain
   * SELECT items, WHERE and GROUP BY attributes (not {@link #ALL_NESTED}), and the arguments of
   * operators and LET functions that are not numbers; less the attributes LET defines.
   */
  public List<String> attributesRead() {
    Set<String> names = new LinkedHashSet<>();
    for (SelectItem item : select) {
      if (item instanceof SelectItem.Attribute a) {
        names.add(a.name());
      }
    }
    for (Condition c : where) {
      names.add(c.attribute());
    }
    for (String g : groupBy) {
      if (!g.equalsIgnoreCase(ALL_NESTED)) { // the keyword in any case, as the evaluator reads it
        names.add(g);
      }
    }
    List<OperatorCall> calls = new ArrayList<>(operatorCalls());
    for (LetBinding b : let) {
      calls.add(b.function());
    }
    for (OperatorCall call : calls) {
      for (OperatorCall.Argument arg : call.args()) {
        if (!isNumber(arg.text())) {
          names.add(arg.text());
        }
      }
    }
    for (LetBinding b : let) {
      names.remove(b.target());
    }
    return List.copyOf(names);
  }

  private static final java.util.regex.Pattern NUMBER =
      java.util.regex.Pattern.compile("[-+]?(\\d+(\\.\\d*)?|\\.\\d+)([eE][-+]?\\d+)?");

  /** Whether an operator argument is a number (a literal), not an attribute name. */
  private static boolean isNumber(String text) {
    return NUMBER.matcher(text).matches();
  }

  /** The query in canonical CalQL. */
  @Override
  public String toString() {
    List<String> parts = new ArrayList<>();
    if (!let.isEmpty()) {
      parts.add(
          "LET "
              + let.stream()
                  .map(b -> Lexer.quote(b.target()) + "=" + b.function())
                  .collect(Collectors.joining(",")));
    }
    if (!select.isEmpty()) {
      parts.add("SELECT " + select.stream().map(Query::show).collect(Collectors.joining(",")));
    }
    if (!aggregate.isEmpty()) {
      parts.add(
          "AGGREGATE "
              + aggregate.stream().map(OperatorCall::toString).collect(Collectors.joining(",")));
    }
    if (!where.isEmpty()) {
      parts.add(
          "WHERE " + where.stream().map(Condition::toString).collect(Collectors.joining(",")));
    }
    if (!groupBy.isEmpty()) {
      parts.add("GROUP BY " + groupBy.stream().map(Lexer::quote).collect(Collectors.joining(",")));
    }
    if (!orderBy.isEmpty()) {
      parts.add(
          "ORDER BY "
              + orderBy.stream()
                  .map(k -> Lexer.quote(k.name()) + (k.descending() ? " DESC" : " ASC"))
                  .collect(Collectors.joining(",")));
    }
    limit.ifPresent(n -> parts.add("LIMIT " + n));
    format.ifPresent(f -> parts.add("FORMAT " + f));
    return String.join(" ", parts);
  }

  private static String show(SelectItem item) {
    if (item instanceof SelectItem.Attribute a) {
      return Lexer.quote(a.name()) + alias(a.alias());
    }
    if (item instanceof SelectItem.Aggregation a) {
      return a.call() + alias(a.alias());
    }
    return "*";
  }

  private static String alias(String alias) {
    return alias == null ? "" : " AS " + Lexer.quote(alias);
  }
}
