package dev.profold.collector.query;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A bound query: evaluates CalQL over records. Immutable and thread-safe; the mutable part of an
 * evaluation is a {@link PartialResult}, one per thread or input part.
 *
 * <p>Pipeline per record: LET derivations, then WHERE, then either grouping and the operators'
 * states (an aggregating query: one with operators or GROUP BY) or collection of the record as a
 * row. {@link #finish} runs the whole-result step (totals and inclusive roll-ups along the nested
 * path), picks the columns, then ORDER BY and LIMIT.
 *
 * <p>Grouping key: the GROUP BY attributes ({@code prop:nested} adds every path-valued attribute);
 * without GROUP BY, the plain attributes of SELECT; without either but with {@code SELECT *}, every
 * attribute that is not a number (as Caliper keys on all non-measurement attributes); else a single
 * group. GROUP BY without operators counts records ({@code count}, shown when SELECT is absent or
 * {@code *}).
 */
public final class QueryEvaluator {
  private final Query query;
  private final List<LetFunctions.Derivation> derivations;
  private final RecordFilter filter;
  private final List<Operator> operators;
  private final boolean aggregating;
  private final boolean hasInclusive;
  private final List<String> keyAttributes;
  private final String[] keyArray;
  private final boolean keyAllNested;
  private final boolean keyAllNonNumeric;
  private final Set<String> aggregateColumns;

  private QueryEvaluator(Query query) throws QueryException {
    this.query = query;
    List<LetFunctions.Derivation> d = new ArrayList<>();
    for (LetBinding b : query.let()) {
      d.add(LetFunctions.bind(b));
    }
    this.derivations = List.copyOf(d);
    this.filter = new RecordFilter(query.where());
    Map<String, Operator> ops = new LinkedHashMap<>();
    Map<String, OperatorCall> calls = new LinkedHashMap<>();
    for (OperatorCall c : query.operatorCalls()) {
      Operator op = Operators.create(c);
      Operator first = ops.putIfAbsent(op.column(), op);
      if (first == null) {
        calls.put(op.column(), c);
      } else if (!first.definition().equals(op.definition())) {
        throw collision(c, calls.get(op.column()), op.column());
      }
    }
    Set<String> agg = new LinkedHashSet<>();
    for (OperatorCall c : query.aggregate()) {
      agg.add(Operators.create(c).column());
    }
    this.aggregateColumns = Set.copyOf(agg);
    this.aggregating = !ops.isEmpty() || !query.groupBy().isEmpty();
    if (aggregating && ops.isEmpty()) {
      Operator count = new CountOperator();
      ops.put(count.column(), count);
    }
    this.operators = List.copyOf(ops.values());
    this.hasInclusive = operators.stream().anyMatch(Operator::inclusive);

    List<String> keys = new ArrayList<>();
    boolean nested = false;
    boolean star = query.select().stream().anyMatch(i -> i instanceof SelectItem.All);
    if (!query.groupBy().isEmpty()) {
      for (String g : query.groupBy()) {
        if (g.equalsIgnoreCase(Query.ALL_NESTED)) {
          nested = true;
        } else if (!keys.contains(g)) {
          keys.add(g);
        }
      }
      if (!nested) {
        for (SelectItem i : query.select()) {
          if (i instanceof SelectItem.Attribute a && !keys.contains(a.name())) {
            throw QueryException.expected(
                a.position(),
                "an attribute of GROUP BY (" + String.join(", ", keys) + ") or an operator",
                "'" + a.name() + "'");
          }
        }
      }
    } else if (aggregating) {
      for (SelectItem i : query.select()) {
        if (i instanceof SelectItem.Attribute a && !keys.contains(a.name())) {
          keys.add(a.name());
        }
      }
    }
    this.keyAttributes = List.copyOf(keys);
    this.keyArray = keys.toArray(new String[0]);
    this.keyAllNested = nested;
    this.keyAllNonNumeric = aggregating && query.groupBy().isEmpty() && keys.isEmpty() && star;
    checkOrderBy();
    checkHeaders();
  }

  /**
   * Refuses two selected columns of one header from different sources ({@code sum(x) AS count,
   * count()}): one would silently replace the other in the result.
   */
  private void checkHeaders() throws QueryException {
    Map<String, String> sources = new HashMap<>();
    for (SelectItem i : query.select()) {
      String source;
      String alias;
      int position;
      if (i instanceof SelectItem.Attribute a) {
        source = a.name();
        alias = a.alias();
        position = a.position();
      } else if (i instanceof SelectItem.Aggregation a) {
        source = Operators.create(a.call()).column();
        alias = a.alias();
        position = a.call().position();
      } else {
        continue;
      }
      String header = alias == null ? source : alias;
      String before = sources.putIfAbsent(header, source);
      if (before != null && !before.equals(source)) {
        throw new QueryException(
            position,
            "two columns would be named '"
                + header
                + "' ("
                + before
                + " and "
                + source
                + "), and one would hide the other; give one of them another name with AS");
      }
    }
  }

  /**
   * Two different operators whose values would land in one column: results are keyed by column
   * name, so one would be silently dropped, and AS cannot tell them apart (it only renames).
   */
  private static QueryException collision(OperatorCall second, OperatorCall first, String column) {
    return new QueryException(
        second.position(),
        second
            + " and "
            + first
            + " (at column "
            + first.position()
            + ") both produce the column "
            + column
            + "; a query can hold only one of them, even with AS (AS renames a column but does not"
            + " separate two operators with one name): keep one, or compute the other in a"
            + " separate query");
  }

  /** Binds {@code query}: operators, LET functions; checks SELECT and ORDER BY names. */
  public static QueryEvaluator of(Query query) throws QueryException {
    return new QueryEvaluator(query);
  }

  /** Parses and binds {@code text}. */
  public static QueryEvaluator of(String text) throws QueryException {
    return new QueryEvaluator(QueryParser.parse(text));
  }

  public Query query() {
    return query;
  }

  /** Whether the query groups and aggregates (rather than listing records). */
  public boolean aggregating() {
    return aggregating;
  }

  /**
   * Whether {@code record} passes the WHERE clause (LET is not applied): for callers that group
   * records themselves, such as the collector's online schemes.
   */
  public boolean passesWhere(Map<String, ?> record) {
    return filter.test(record);
  }

  /** A new empty partial result for this query. */
  public PartialResult newPartial() {
    return new PartialResult(this);
  }

  /** Evaluates the query over {@code records}: add all, then {@link #finish}. */
  public QueryResult evaluate(Iterable<? extends Map<String, ?>> records) {
    PartialResult p = newPartial();
    for (Map<String, ?> r : records) {
      p.add(r);
    }
    return finish(p);
  }

  // --- used by PartialResult and LetOnStates

  /** The LET derivations, in the query's order. */
  List<LetFunctions.Derivation> derivations() {
    return derivations;
  }

  RecordFilter filter() {
    return filter;
  }

  List<Operator> operators() {
    return operators;
  }

  OperatorState[] newStates() {
    OperatorState[] s = new OperatorState[operators.size()];
    for (int i = 0; i < s.length; i++) {
      s[i] = operators.get(i).newState();
    }
    return s;
  }

  GroupKey keyOf(Map<String, ?> record) {
    Map<String, Object> k = new LinkedHashMap<>();
    for (String a : keyAttributes) {
      Object v = record.get(a);
      if (v != null && !(v instanceof PreAggregated)) {
        k.put(a, Values.normalize(v));
      }
    }
    if (keyAllNested || keyAllNonNumeric) {
      Map<String, Object> dynamic = new TreeMap<>();
      for (Map.Entry<String, ?> e : record.entrySet()) {
        Object v = e.getValue();
        boolean take =
            keyAllNested
                ? v instanceof List
                : v instanceof String || v instanceof Boolean || v instanceof List;
        if (take && !k.containsKey(e.getKey())) {
          dynamic.put(e.getKey(), Values.normalize(v));
        }
      }
      k.putAll(dynamic);
    }
    return new GroupKey(k);
  }

  /**
   * Whether a group's key is made of the key attributes alone (no {@code prop:nested}, no all
   * non-numeric attributes): then {@link #probeKey} and {@link #keyTuple} apply.
   */
  boolean fixedKey() {
    return !keyAllNested && !keyAllNonNumeric;
  }

  /**
   * What a listing query holds while it reads ({@link ListedRows}): with a LIMIT, no more rows than
   * it can show, chosen by the ORDER BY when there is one. Every row when there is no LIMIT, or
   * when the sort columns could depend on the data ({@code SELECT *} with an alias, which an
   * attribute of the same name would take the place of).
   */
  ListedRows newListedRows() {
    if (aggregating || query.limit().isEmpty()) {
      return new ListedRows(-1, null);
    }
    if (query.orderBy().isEmpty()) {
      return new ListedRows(query.limit().getAsInt(), null);
    }
    boolean star = query.select().stream().anyMatch(i -> i instanceof SelectItem.All);
    boolean aliased = // a listing selects attributes only: no operator calls
        query.select().stream()
            .anyMatch(i -> i instanceof SelectItem.Attribute a && a.alias() != null);
    if (star && aliased) {
      return new ListedRows(-1, null);
    }
    return new ListedRows(query.limit().getAsInt(), comparator(columns(List.of(), Set.of())));
  }

  /** Number of key attributes. */
  int keyCount() {
    return keyArray.length;
  }

  /**
   * For a fixed key: writes into {@code out} (one slot per key attribute) values equal to those of
   * {@link #keyTuple}{@code (keyOf(record))}, without allocating in the common cases: a string as
   * it is, a path whose elements are all strings as it is (it equals its normalised copy), null
   * when the record lacks the attribute or holds a state there.
   */
  void probeKey(Map<String, ?> record, Object[] out) {
    for (int i = 0; i < keyArray.length; i++) {
      Object v = record.get(keyArray[i]);
      if (v == null || v instanceof PreAggregated) {
        out[i] = null;
      } else if (v instanceof String || (v instanceof List<?> l && allStrings(l))) {
        out[i] = v;
      } else {
        out[i] = Values.normalize(v);
      }
    }
  }

  private static boolean allStrings(List<?> list) {
    for (Object o : list) {
      if (!(o instanceof String)) {
        return false;
      }
    }
    return true;
  }

  /** For a fixed key: the key's value of each key attribute, in order, null when absent. */
  Object[] keyTuple(GroupKey key) {
    Object[] out = new Object[keyArray.length];
    for (int i = 0; i < keyArray.length; i++) {
      out[i] = key.values().get(keyArray[i]);
    }
    return out;
  }

  // --- finishing

  /** The final rows of {@code partial} (which is left unchanged). */
  public QueryResult finish(PartialResult partial) {
    List<Map<String, Object>> full;
    List<String> keyNames;
    Set<String> allNames = new LinkedHashSet<>();
    if (aggregating) {
      WholeResult whole = new WholeResult(operators, partial.groups(), hasInclusive);
      full = whole.rows();
      keyNames = new ArrayList<>(keyAttributes);
      Set<String> dynamic = new TreeSet<>();
      for (GroupKey k : whole.keys()) {
        for (String a : k.values().keySet()) {
          if (!keyNames.contains(a)) {
            dynamic.add(a);
          }
        }
      }
      keyNames.addAll(dynamic);
    } else {
      full = partial.rows();
      keyNames = List.of();
      for (Map<String, Object> r : full) {
        allNames.addAll(r.keySet());
      }
    }
    List<Column> columns = columns(keyNames, allNames);
    full = new ArrayList<>(full);
    if (!query.orderBy().isEmpty()) {
      full.sort(comparator(columns));
    }
    if (query.limit().isPresent() && full.size() > query.limit().getAsInt()) {
      full = full.subList(0, query.limit().getAsInt());
    }
    List<Map<String, Object>> rows = new ArrayList<>(full.size());
    String pathColumn = null;
    for (Map<String, Object> f : full) {
      Map<String, Object> row = new LinkedHashMap<>();
      for (Column c : columns) {
        Object v = f.get(c.source());
        if (v != null) {
          row.put(c.header(), v);
          if (pathColumn == null && v instanceof List) {
            pathColumn = c.header();
          }
        }
      }
      rows.add(row);
    }
    List<String> headers = new ArrayList<>();
    for (Column c : columns) {
      headers.add(c.header());
    }
    return new QueryResult(headers, rows, pathColumn);
  }

  /** An output column: where its values come from and what it is called. */
  private record Column(String source, String header) {}

  private List<Column> columns(List<String> keyNames, Set<String> allNames) {
    Map<String, Column> out = new LinkedHashMap<>();
    List<String> expansion = new ArrayList<>(aggregating ? keyNames : allNames);
    if (aggregating) {
      for (Operator op : operators) {
        expansion.add(op.column());
      }
    }
    if (query.select().isEmpty()) {
      for (String s : expansion) {
        out.putIfAbsent(s, new Column(s, s));
      }
      return List.copyOf(out.values());
    }
    Set<String> explicit = new LinkedHashSet<>();
    for (SelectItem i : query.select()) {
      if (i instanceof SelectItem.Attribute a) {
        explicit.add(a.name());
      } else if (i instanceof SelectItem.Aggregation a) {
        explicit.add(column(a.call()));
      }
    }
    for (SelectItem i : query.select()) {
      if (i instanceof SelectItem.Attribute a) {
        add(out, a.name(), a.alias());
      } else if (i instanceof SelectItem.Aggregation a) {
        add(out, column(a.call()), a.alias());
      } else {
        for (String s : expansion) {
          if (!explicit.contains(s)) {
            add(out, s, null);
          }
        }
      }
    }
    for (Operator op : operators) {
      if (aggregateColumns.contains(op.column())) {
        add(out, op.column(), null);
      }
    }
    return List.copyOf(out.values());
  }

  private static void add(Map<String, Column> out, String source, String alias) {
    String header = alias == null ? source : alias;
    out.putIfAbsent(header, new Column(source, header));
  }

  private static String column(OperatorCall call) {
    try {
      return Operators.create(call).column();
    } catch (QueryException e) {
      throw new IllegalStateException("checked when the query was bound", e);
    }
  }

  /** {@code v}, or null for NaN: like an empty cell, NaN sorts last either way. */
  private static Object sortable(Object v) {
    return v instanceof Double d && d.isNaN() ? null : v;
  }

  private Comparator<Map<String, Object>> comparator(List<Column> columns) {
    Comparator<Map<String, Object>> cmp = null;
    for (SortKey k : query.orderBy()) {
      String source = k.name();
      for (Column c : columns) {
        if (c.header().equals(k.name())) {
          source = c.source();
          break;
        }
      }
      String s = source;
      boolean desc = k.descending();
      Comparator<Map<String, Object>> one = (a, b) -> compareCells(a.get(s), b.get(s), desc);
      cmp = cmp == null ? one : cmp.thenComparing(one);
    }
    if (cmp == null) {
      return null;
    }
    // Ties are broken by the key attributes, ascending, so that LIMIT cuts among equal rows the
    // same way every time: the order rows arrive in follows the collector's group ids, which are
    // reused as groups come and go.
    for (String key : keyAttributes) {
      cmp = cmp.thenComparing((a, b) -> compareCells(a.get(key), b.get(key), false));
    }
    return cmp;
  }

  /** Two cells in {@code desc}ending or ascending order; empty cells and NaN last either way. */
  private static int compareCells(Object a, Object b, boolean desc) {
    Object x = sortable(a);
    Object y = sortable(b);
    if (x == null || y == null) {
      return x == null ? (y == null ? 0 : 1) : -1;
    }
    int c = Values.compare(x, y);
    return desc ? -c : c;
  }

  /**
   * ORDER BY names must be columns of the result when the column set does not depend on the data:
   * an attribute of the key, an operator column, or an alias.
   */
  private void checkOrderBy() throws QueryException {
    if (!aggregating || keyAllNested || keyAllNonNumeric) {
      return;
    }
    Set<String> known = new LinkedHashSet<>(keyAttributes);
    for (Operator op : operators) {
      known.add(op.column());
    }
    for (SelectItem i : query.select()) {
      if (i instanceof SelectItem.Attribute a && a.alias() != null) {
        known.add(a.alias());
      } else if (i instanceof SelectItem.Aggregation a && a.alias() != null) {
        known.add(a.alias());
      }
    }
    for (SortKey k : query.orderBy()) {
      if (!known.contains(k.name())) {
        throw QueryException.expected(
            k.position(),
            "a result column (" + String.join(", ", known) + ")",
            "'" + k.name() + "'");
      }
    }
  }
}
