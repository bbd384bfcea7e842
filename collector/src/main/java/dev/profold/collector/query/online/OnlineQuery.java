package dev.profold.collector.query.online;

import dev.profold.collector.query.LetOnStates;
import dev.profold.collector.query.MissingAttributes;
import dev.profold.collector.query.OutputFormat;
import dev.profold.collector.query.Query;
import dev.profold.collector.query.QueryEvaluator;
import dev.profold.collector.query.QueryException;
import dev.profold.collector.query.QueryResult;
import dev.profold.collector.query.SelectItem;
import dev.profold.sinks.snapshot.CollectorSnapshot;
import dev.profold.sinks.snapshot.IntervalSnapshot;
import dev.profold.sinks.snapshot.SchemeSnapshot;
import dev.profold.sinks.snapshot.SnapshotSource;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Runs CalQL queries over the collector's latest snapshot: picks the scheme, turns its cumulative
 * state or the retained intervals inside the range into records ({@link SnapshotRecords}),
 * evaluates, and prints the result. The transport-neutral core of the gRPC {@code profold.v1.Query}
 * service and of {@code GET /api/v1/query}. Thread-safe: each call works on its own copy of the
 * snapshot's data.
 */
public final class OnlineQuery {
  /** How a query's refusal begins while the collector starts (after "the collector "). */
  static final String STARTING =
      "is starting and has no snapshot of its schemes yet; retry in a second";

  /** The scheme queried when a request names none: the collector's built-in scheme. */
  public static final String DEFAULT_SCHEME = "region";

  /**
   * Query text longer than this is refused: a query is a few lines, and a crafted one of megabytes
   * (thousands of SELECT items) cost the collector seconds of CPU and gigabytes of heap.
   */
  public static final int MAX_QUERY_CHARS = 65_536;

  /** SELECT items a query may have. */
  public static final int MAX_SELECT_ITEMS = 512;

  /**
   * Cells (rows times columns) an answer may have, unless it has at most {@link #CELLS_PER_RECORD}
   * per record read: the whole of a scheme at the default cardinality limit with 50 columns; a
   * larger answer is refused before it is rendered.
   */
  public static final long MAX_CELLS = 500_000;

  /**
   * Cells per record read that an answer may always have, however many records: a scheme's own
   * query (its GROUP BY attributes and a few values) over a scheme whose cardinality limit was
   * raised far beyond the default must still answer.
   */
  public static final long CELLS_PER_RECORD = 8;

  /** A snapshot older than this when read (the fold thread did not answer) gets a note. */
  static final long STALE_NANOS = 1_000_000_000L;

  private final SnapshotSource source;
  private final java.util.function.Supplier<String> failure;
  private final long maxCells;
  private final java.util.function.LongSupplier snapshotAge;

  /** Queries over {@code source}, whose fold never fails and whose snapshots are always fresh. */
  public OnlineQuery(SnapshotSource source) {
    this(source, () -> null, () -> 0);
  }

  /**
   * @param failure why the fold stopped for good (its thread failed), or null while it runs: the
   *     snapshot then only grows older, and queries are refused saying so
   * @param snapshotAge how old the snapshot just read is, in nanoseconds ({@code source}'s own
   *     measure): an answer from one older than a second says so in its note
   */
  public OnlineQuery(
      SnapshotSource source,
      java.util.function.Supplier<String> failure,
      java.util.function.LongSupplier snapshotAge) {
    this(source, failure, snapshotAge, MAX_CELLS);
  }

  /** As above, answers of at most {@code maxCells} cells (for tests). */
  OnlineQuery(
      SnapshotSource source,
      java.util.function.Supplier<String> failure,
      java.util.function.LongSupplier snapshotAge,
      long maxCells) {
    this.source = source;
    this.failure = failure;
    this.snapshotAge = snapshotAge;
    this.maxCells = maxCells;
  }

  /**
   * What a query that still ran out of memory or stack ({@code e}) is answered, over either
   * transport.
   */
  public static String outOfResources(Error e) {
    return "the query needed more than the collector could give ("
        + e
        + "); narrow it with a WHERE, fewer SELECT items or a LIMIT";
  }

  /**
   * What to run.
   *
   * @param scheme the scheme's name; null or empty for {@link #DEFAULT_SCHEME}
   * @param query the CalQL text; null or blank for the scheme's configured query
   * @param range cumulative state, or which retained intervals
   * @param format the output format; null for the query's FORMAT clause, else the fallback given to
   *     {@link #run}
   */
  public record Request(String scheme, String query, TimeRange range, OutputFormat format) {}

  /**
   * What a query gave.
   *
   * @param scheme the scheme queried
   * @param query the query text that ran
   * @param result the rows
   * @param format the format {@code rendered} is in
   * @param rendered the result printed in {@code format}
   * @param cumulative whether the cumulative state was queried
   * @param intervals for a range, the retained intervals merged, oldest first
   * @param note why the result may be incomplete, or empty
   */
  public record Answer(
      String scheme,
      String query,
      QueryResult result,
      OutputFormat format,
      String rendered,
      boolean cumulative,
      List<Interval> intervals,
      String note) {
    public Answer {
      intervals = List.copyOf(intervals);
    }
  }

  /**
   * Runs {@code request} over the current snapshot.
   *
   * @param fallback the format when neither the request nor the query's FORMAT clause names one
   * @throws OnlineQueryException for a bad query (the parser's message, with its column) or an
   *     unknown scheme (the message lists the schemes there are)
   */
  public Answer run(Request request, OutputFormat fallback) throws OnlineQueryException {
    return run(request, fallback, () -> false);
  }

  /**
   * As {@link #run(Request, OutputFormat)}, giving up between its steps once {@code abandoned} says
   * the caller no longer waits for the answer.
   *
   * @throws OnlineQueryException with {@link OnlineQueryException.Reason#ABANDONED} then
   */
  public Answer run(
      Request request, OutputFormat fallback, java.util.function.BooleanSupplier abandoned)
      throws OnlineQueryException {
    String name =
        request.scheme() == null || request.scheme().isEmpty() ? DEFAULT_SCHEME : request.scheme();
    String failed = failure.get();
    if (failed != null) {
      throw new OnlineQueryException(
          OnlineQueryException.Reason.NOT_READY,
          "the collector's fold thread failed ("
              + failed
              + ") and its data no longer changes; it must be restarted");
    }
    if (request.query() != null && request.query().length() > MAX_QUERY_CHARS) {
      throw new OnlineQueryException(
          OnlineQueryException.Reason.INVALID,
          "the query is "
              + request.query().length()
              + " characters long; at most "
              + MAX_QUERY_CHARS);
    }
    CollectorSnapshot snapshot = source.snapshot();
    long age = snapshotAge.getAsLong();
    SchemeSnapshot scheme = find(snapshot, name);
    String text = request.query();
    if (text == null || text.isBlank()) {
      if (scheme.query() == null || scheme.query().isBlank()) {
        throw new OnlineQueryException(
            OnlineQueryException.Reason.INVALID,
            "scheme '" + name + "' has no configured query; give one");
      }
      text = ownQuery(scheme.query());
    }
    QueryEvaluator evaluator;
    try {
      evaluator = QueryEvaluator.of(text);
    } catch (QueryException e) {
      throw new OnlineQueryException(
          OnlineQueryException.Reason.INVALID, "bad query: " + e.getMessage(), e);
    }
    if (evaluator.query().select().size() > MAX_SELECT_ITEMS) {
      throw new OnlineQueryException(
          OnlineQueryException.Reason.INVALID,
          "the query has "
              + evaluator.query().select().size()
              + " SELECT items; at most "
              + MAX_SELECT_ITEMS);
    }
    given(abandoned);
    SnapshotRecords.Selection selection = SnapshotRecords.select(scheme, request.range());
    given(abandoned);
    QueryResult result = evaluator.evaluate(selection.records());
    long cells = (long) result.rows().size() * Math.max(1, result.columns().size());
    if (cells > maxCells && cells > CELLS_PER_RECORD * selection.records().size()) {
      throw new OnlineQueryException(
          OnlineQueryException.Reason.INVALID,
          "the answer would have "
              + result.rows().size()
              + " rows of "
              + result.columns().size()
              + " columns, more than "
              + maxCells
              + " cells; narrow it with a WHERE, a GROUP BY of fewer attributes, fewer SELECT"
              + " items or a LIMIT");
    }
    given(abandoned);
    OutputFormat format = request.format();
    if (format == null) {
      format = evaluator.query().format().orElse(fallback);
    }
    return new Answer(
        name,
        text,
        result,
        format,
        render(result, format),
        request.range().isCumulative(),
        selection.intervals(),
        notes(
            notes(
                age > STALE_NANOS
                    ? "the fold thread is behind: this reads its last snapshot, "
                        + durationText(Duration.ofNanos(age).toSeconds() * 1_000_000_000L)
                        + " old"
                    : "",
                note(scheme, request.range(), selection.intervals())),
            readNotes(name, evaluator, selection.records())));
  }

  /** Throws ABANDONED once {@code abandoned} says nobody waits for the answer. */
  private static void given(java.util.function.BooleanSupplier abandoned)
      throws OnlineQueryException {
    if (abandoned.getAsBoolean()) {
      throw new OnlineQueryException(
          OnlineQueryException.Reason.ABANDONED, "the caller no longer waits for the answer");
    }
  }

  /** {@code a} and {@code b}, those that are not empty, joined. */
  private static String notes(String a, String b) {
    return a.isEmpty() ? b : b.isEmpty() ? a : a + "; " + b;
  }

  /**
   * Notes on what {@code evaluator}'s query found in {@code records} of scheme {@code scheme}: the
   * attributes it reads that none of them has, with those they have ({@link MissingAttributes}),
   * and LET arithmetic on their pre-aggregated states ({@link LetOnStates}); empty when neither
   * applies.
   */
  static String readNotes(
      String scheme, QueryEvaluator evaluator, List<? extends Map<String, ?>> records) {
    MissingAttributes check = new MissingAttributes(evaluator.query());
    LetOnStates lets = new LetOnStates(evaluator);
    for (Map<String, ?> r : records) {
      check.see(r);
      lets.see(r);
    }
    return notes(
        check.note(
            "of scheme '" + scheme + "'",
            "check the spelling, or whether the scheme's GROUP BY keeps it"),
        lets.note());
  }

  /**
   * What an empty query text runs: the scheme's {@code configured} query as its kept records answer
   * it. Its WHERE was applied as the records were folded, and the records keep only the GROUP BY
   * attributes, so it is left out (run again it would match nothing: {@code WHERE kind=io} over
   * records without {@code kind}; schemes have no LET); and a SELECT list that leaves out GROUP BY
   * attributes gets them first, so each row says which group it is. A query that needs neither
   * change is returned as configured.
   */
  static String ownQuery(String configured) {
    Query q;
    try {
      q = Query.parse(configured);
    } catch (QueryException e) {
      return configured; // checked when the scheme was configured; the evaluator says why
    }
    List<SelectItem> select = new ArrayList<>();
    if (!q.select().isEmpty() && q.select().stream().noneMatch(i -> i instanceof SelectItem.All)) {
      for (String key : q.groupBy()) {
        boolean shown =
            q.select().stream()
                .anyMatch(i -> i instanceof SelectItem.Attribute a && a.name().equals(key));
        if (!shown && !key.equals(Query.ALL_NESTED)) {
          select.add(new SelectItem.Attribute(key, null, 0));
        }
      }
    }
    if (q.where().isEmpty() && select.isEmpty()) {
      return configured;
    }
    select.addAll(q.select());
    return new Query(
            select,
            q.aggregate(),
            List.of(),
            q.groupBy(),
            q.let(),
            q.orderBy(),
            q.limit(),
            q.format())
        .toString();
  }

  private static SchemeSnapshot find(CollectorSnapshot snapshot, String name)
      throws OnlineQueryException {
    List<String> names = new ArrayList<>();
    for (SchemeSnapshot s : snapshot.schemes()) {
      if (s.scheme().equals(name)) {
        return s;
      }
      names.add(s.scheme());
    }
    if (names.isEmpty()) { // every collector runs one scheme at least: this is its start
      throw new OnlineQueryException(
          OnlineQueryException.Reason.NOT_READY, "the collector " + STARTING);
    }
    throw new OnlineQueryException(
        OnlineQueryException.Reason.NOT_FOUND,
        "unknown scheme '" + name + "'; schemes: " + String.join(", ", names));
  }

  /** Why a range query may miss data: nothing retained in it, or it reaches back further. */
  static String note(SchemeSnapshot scheme, TimeRange range, List<Interval> covered) {
    if (range.isCumulative()) {
      return "";
    }
    List<IntervalSnapshot> retained = scheme.retained();
    if (retained.isEmpty()) {
      return "no closed interval is retained yet (scheme '"
          + scheme.scheme()
          + "', interval "
          + durationText(scheme.intervalNanos())
          + "); leave out the range for the cumulative state";
    }
    long oldest = retained.get(0).startUnixNanos();
    long newest = retained.get(retained.size() - 1).endUnixNanos();
    String held = new Interval(oldest, newest).toString();
    if (covered.isEmpty()) {
      return "no retained interval lies wholly inside "
          + range
          + "; retained intervals span "
          + held;
    }
    if (range.from().isEmpty() || range.from().getAsLong() < oldest) {
      return "the range reaches back before the oldest retained interval; retained intervals span "
          + held;
    }
    return "";
  }

  /** {@code 10s}, {@code 1m}, {@code 1h30m}. */
  static String durationText(long nanos) {
    return Duration.ofNanos(nanos).toString().substring(2).toLowerCase(Locale.ROOT);
  }

  private static String render(QueryResult result, OutputFormat format) {
    StringWriter text = new StringWriter();
    try (PrintWriter out = new PrintWriter(text)) {
      format.write(result, out);
    } catch (IOException e) {
      throw new UncheckedIOException("writing to a string", e);
    }
    return text.toString();
  }
}
