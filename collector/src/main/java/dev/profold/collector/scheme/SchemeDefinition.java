package dev.profold.collector.scheme;

import dev.profold.collector.query.Condition;
import dev.profold.collector.query.Query;
import dev.profold.collector.query.QueryEvaluator;
import dev.profold.collector.query.QueryException;
import dev.profold.collector.query.SelectItem;
import dev.profold.collector.telemetry.OwnMeter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * One online aggregation scheme: a name, a CalQL query and how long and how much to keep.
 *
 * <p>What the collector does with it: every entry of every delta is a record with the attributes
 * {@value #SERVICE} and {@value #INSTANCE} (the source's identity), {@value #PATH} (the region path
 * as {@code a/b/c}) and {@value #KIND} (the leaf region's kind, unless the entry has its own {@code
 * kind} attribute), plus the entry's own attributes by name. Records that pass the query's WHERE
 * are grouped by its GROUP BY attributes (or, without GROUP BY, its selected attributes), and each
 * group keeps the mergeable state of every measurement of its records, per interval and
 * cumulatively. The states hold count, sum, min, max, sum of squares and a histogram, so every
 * operator of the query (and of any later query over the scheme) is computed exactly from them.
 *
 * <p>Refused, with the scheme's name and the column: a query that does not parse, one that neither
 * groups nor aggregates, one with LET (schemes see the records as sent), names that cannot become
 * Prometheus labels, a scheme name whose metrics could take the name of one of the collector's own.
 *
 * @param name scheme name, used in metric names ({@code profold_<name>_...})
 * @param query the query text as configured
 * @param evaluator the bound query
 * @param groupBy the grouping attributes, in order
 * @param labelNames the Prometheus label name of each grouping attribute ({@code .} becomes {@code
 *     _})
 * @param whereAttributes attributes the WHERE clause reads
 * @param interval interval length
 * @param cardinalityLimit groups kept before further ones fold into an overflow group
 * @param retention closed intervals kept in memory
 */
public record SchemeDefinition(
    String name,
    String query,
    QueryEvaluator evaluator,
    List<String> groupBy,
    List<String> labelNames,
    List<String> whereAttributes,
    Duration interval,
    int cardinalityLimit,
    int retention) {

  public static final String SERVICE = "service";
  public static final String INSTANCE = "instance";
  public static final String PATH = "path";
  public static final String KIND = "kind";

  /** The entry attribute holding the region path (a PATH attribute). */
  public static final String REGION = "region";

  /** Name of the built-in scheme. */
  public static final String BUILT_IN = "region";

  /** Query of the built-in scheme. */
  public static final String BUILT_IN_QUERY =
      "SELECT service, instance, path, kind, sum(time), avg(time), max(time)"
          + " GROUP BY service, instance, path, kind";

  /** Closed intervals kept by default (an hour of 10 s intervals). */
  public static final int DEFAULT_RETENTION = 360;

  private static final Pattern NAME = Pattern.compile("[a-z][a-z0-9_]{0,62}");
  private static final Pattern LABEL = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");

  /**
   * Scheme names kept for metric families that are not the collector's Micrometer meters (the
   * sources' {@code profold_client_*}) or for its own later use. Names that would meet a meter are
   * refused as well, found from the meters themselves ({@link OwnMeter#familiesUnder}).
   */
  private static final Set<String> RESERVED =
      Set.of("client", "collector", "overhead", "query", "schemes");

  /** Own metric names quoted in an error before it says how many more there are. */
  private static final int NAMES_SHOWN = 3;

  public SchemeDefinition {
    groupBy = List.copyOf(groupBy);
    labelNames = List.copyOf(labelNames);
    whereAttributes = List.copyOf(whereAttributes);
  }

  /** The attribute holding an archived record's interval start (IntervalArchive.START). */
  public static final String INTERVAL_START = "interval.start";

  /** The attribute holding an archived record's interval end (IntervalArchive.END). */
  public static final String INTERVAL_END = "interval.end";

  /**
   * Why a scheme may not be called {@code name}, with the fix, or null when it may. Every metric of
   * a scheme is named {@code profold_<name>_...} after a measurement a client chooses, so a scheme
   * whose prefix starts one of the collector's own metric names could take that name and fail every
   * /metrics scrape (Prometheus refuses two families of one name).
   */
  static String takenBecause(String name) {
    String fix = "; rename the scheme" + example(name);
    if (RESERVED.contains(name)) {
      return "(profold_" + name + "_...)" + fix;
    }
    List<String> own = OwnMeter.familiesUnder(name);
    if (own.isEmpty()) {
      return null;
    }
    String shown = String.join(", ", own.subList(0, Math.min(NAMES_SHOWN, own.size())));
    if (own.size() > NAMES_SHOWN) {
      shown += " and " + (own.size() - NAMES_SHOWN) + " more";
    }
    return "("
        + shown
        + "): the scheme's metrics are named profold_"
        + name
        + "_<measurement>..., and one named like these would fail every /metrics scrape"
        + fix;
  }

  private static String example(String name) {
    for (String c : List.of(name + "_scheme", "my_" + name)) {
      if (NAME.matcher(c).matches()
          && !RESERVED.contains(c)
          && OwnMeter.familiesUnder(c).isEmpty()) {
        return ", for example to '" + c + "'";
      }
    }
    return "";
  }

  /** The built-in scheme with the given interval and limit. */
  public static SchemeDefinition builtIn(Duration interval, int cardinalityLimit) {
    try {
      return compile(BUILT_IN, BUILT_IN_QUERY, interval, cardinalityLimit, DEFAULT_RETENTION);
    } catch (SchemeException e) {
      throw new IllegalStateException("the built-in scheme does not compile", e);
    }
  }

  /**
   * Checks and binds a scheme.
   *
   * @throws SchemeException naming the scheme, the query column where that applies, and the fix
   */
  public static SchemeDefinition compile(
      String name, String queryText, Duration interval, int cardinalityLimit, int retention)
      throws SchemeException {
    String where = "scheme '" + name + "'";
    if (name == null || !NAME.matcher(name).matches()) {
      throw new SchemeException(
          "scheme name '"
              + name
              + "' must be lower-case letters, digits and _, starting with a letter, at most 63"
              + " characters (it becomes part of metric names)");
    }
    String taken = takenBecause(name);
    if (taken != null) {
      throw new SchemeException(
          where + ": the name is taken by the collector's own metrics " + taken);
    }
    if (interval.isNegative() || interval.toMillis() < 100) {
      throw new SchemeException(where + ": interval must be at least 100ms, was " + interval);
    }
    if (cardinalityLimit < 1) {
      throw new SchemeException(
          where + ": cardinality_limit must be at least 1, was " + cardinalityLimit);
    }
    if (retention < 1 || retention > 1_000_000) {
      throw new SchemeException(where + ": retention must be in 1..1000000, was " + retention);
    }
    Query q;
    QueryEvaluator evaluator;
    try {
      q = Query.parse(queryText);
      evaluator = QueryEvaluator.of(q);
    } catch (QueryException e) {
      throw new SchemeException(where + ": query " + e.getMessage());
    }
    if (!q.let().isEmpty()) {
      throw new SchemeException(
          where
              + ": query at column "
              + q.let().get(0).position()
              + ": LET is not supported in schemes (they group the records as sent); use LET in"
              + " queries over the scheme");
    }
    if (!evaluator.aggregating()) {
      throw new SchemeException(
          where
              + ": query must aggregate: add GROUP BY attributes or operators, for example"
              + " SELECT sum(time) GROUP BY service, path");
    }
    List<String> keys = new ArrayList<>();
    for (String g : q.groupBy()) {
      String attr = g.equalsIgnoreCase(Query.ALL_NESTED) ? REGION : g;
      if (!keys.contains(attr)) {
        keys.add(attr);
      }
    }
    if (q.groupBy().isEmpty()) {
      for (SelectItem i : q.select()) {
        if (i instanceof SelectItem.Attribute a && !keys.contains(a.name())) {
          keys.add(a.name());
        }
      }
    }
    List<String> labels = new ArrayList<>();
    for (String k : keys) {
      if (k.equals(INTERVAL_START) || k.equals(INTERVAL_END)) {
        // The archive writes the bounds into every record; the attribute's value would replace
        // them there, and queries selecting by time would read it.
        throw new SchemeException(
            where
                + ": GROUP BY attribute '"
                + k
                + "' has the name of the interval bounds ("
                + INTERVAL_START
                + ", "
                + INTERVAL_END
                + ") that archived records and queries use; group by another attribute");
      }
      String label = k.replace('.', '_');
      if (!LABEL.matcher(label).matches() || label.startsWith("__") || label.equals("le")) {
        throw new SchemeException(
            where
                + ": GROUP BY attribute '"
                + k
                + "' cannot be a Prometheus label name (letters, digits, _ and ., not starting"
                + " with a digit or __, not 'le')");
      }
      if (labels.contains(label)) {
        throw new SchemeException(
            where
                + ": GROUP BY attributes '"
                + keys.get(labels.indexOf(label))
                + "' and '"
                + k
                + "' both become label '"
                + label
                + "'; group by one of them");
      }
      labels.add(label);
    }
    Set<String> whereAttrs = new LinkedHashSet<>();
    for (Condition c : q.where()) {
      whereAttrs.add(c.attribute());
    }
    return new SchemeDefinition(
        name,
        queryText,
        evaluator,
        keys,
        labels,
        List.copyOf(whereAttrs),
        interval,
        cardinalityLimit,
        retention);
  }

  /** Whether both define the same aggregation (same query, interval, limit and retention). */
  public boolean sameAs(SchemeDefinition other) {
    return name.equals(other.name)
        && query.equals(other.query)
        && interval.equals(other.interval)
        && cardinalityLimit == other.cardinalityLimit
        && retention == other.retention;
  }

  /** The labels whose values are region paths ({@code path}, {@code region}). */
  public List<String> pathLabels() {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < groupBy.size(); i++) {
      if (groupBy.get(i).equals(PATH) || groupBy.get(i).equals(REGION)) {
        out.add(labelNames.get(i));
      }
    }
    return out;
  }

  /** Whether the scheme groups by source instance (its groups belong to one instance each). */
  public boolean perInstance() {
    return groupBy.contains(INSTANCE);
  }

  @Override
  public String toString() {
    return name + " [" + query + "]";
  }
}
