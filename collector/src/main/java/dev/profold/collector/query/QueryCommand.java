package dev.profold.collector.query;

import dev.profold.collector.query.online.QueryService;
import dev.profold.collector.query.online.RemoteQuery;
import dev.profold.collector.query.online.TimeArgument;
import dev.profold.collector.query.online.TimeRange;
import dev.profold.proto.v1.QueryRequest;
import dev.profold.proto.v1.QueryResponse;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code profold query}: evaluates a CalQL query offline over JSON Lines record files, or online
 * against a running collector ({@code --collector HOST:PORT}, over the gRPC {@code
 * profold.v1.Query} service), and prints the result.
 *
 * <p>Exit codes: 0 on success; 2 for a bad query, bad options, unreadable or malformed input, or an
 * unknown scheme; 1 when the collector cannot be reached, does not answer within the deadline or
 * fails. Errors go to stderr as one line {@code profold: <message>} (a bad query adds the query
 * with a caret under the column), never as a stack trace.
 */
@Command(
    name = "query",
    mixinStandardHelpOptions = true,
    versionProvider = dev.profold.collector.cli.VersionProvider.class,
    description = {
      "Runs a CalQL query over JSON Lines record files (one JSON object per line;"
          + " a nested path as an array).",
      "Example: profold query -q 'SELECT function, count(), sum(time) GROUP BY function'"
          + " records.jsonl",
      "With --collector HOST:PORT, runs the query against a running collector instead: over a"
          + " scheme's cumulative state, or over its retained intervals inside --from/--to.",
      "Example: profold query --collector localhost:7763 --from -15m"
          + " -q 'SELECT path, sum(time) GROUP BY path ORDER BY sum#time DESC LIMIT 10'"
    })
public final class QueryCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(
      names = {"-q", "--query"},
      paramLabel = "QUERY",
      description = "The CalQL query (see docs/calql.md).")
  String query;

  @Option(
      names = "--format",
      paramLabel = "FORMAT",
      description =
          "Output format: table, json, csv or tree (default: the query's FORMAT, else table).")
  String format;

  @Option(
      names = "--partial",
      description =
          "Print the unfinished per-group states as JSON Lines instead of the result: input for a"
              + " later query (two-stage aggregation).")
  boolean partial;

  @Option(
      names = "--collector",
      paramLabel = "HOST:PORT",
      description =
          "Query a running collector at this gRPC address instead of reading FILEs"
              + " (-q may then be left out: the scheme's own query runs).")
  String collector;

  @Option(
      names = "--scheme",
      paramLabel = "NAME",
      description = "With --collector: the scheme to query (default: region).")
  String scheme;

  @Option(
      names = "--from",
      paramLabel = "TIME",
      description =
          "With --collector: query the retained intervals that start at or after TIME (RFC 3339,"
              + " now, -15m, or unix nanoseconds) instead of the cumulative state.")
  String from;

  @Option(
      names = "--to",
      paramLabel = "TIME",
      description =
          "With --collector: query the retained intervals that end at or before TIME (same"
              + " forms as --from).")
  String to;

  @Option(
      names = "--deadline",
      paramLabel = "DURATION",
      description = "With --collector: how long to wait for the answer (default: 10s).")
  String deadline;

  @Parameters(
      paramLabel = "FILE",
      arity = "0..*",
      description = "JSON Lines record files; - reads standard input.")
  List<String> files = new ArrayList<>();

  /** Where {@code -} reads from (tests replace it). */
  InputStream stdin = System.in;

  /** What {@code now} and relative times in --from and --to refer to (tests replace it). */
  InstantSource clock = InstantSource.system();

  /** Default of --deadline. */
  static final Duration DEFAULT_DEADLINE = Duration.ofSeconds(10);

  @Override
  public Integer call() {
    PrintWriter err = spec.commandLine().getErr();
    try {
      if (collector != null) {
        runOnline(spec.commandLine().getOut(), err);
      } else {
        run(spec.commandLine().getOut());
      }
      return 0;
    } catch (Failure f) {
      err.println("profold: " + f.getMessage());
      err.flush();
      return f.exitCode;
    }
  }

  /** A user-facing failure: bad query, options or input, or a failed call to a collector. */
  private static final class Failure extends Exception {
    private static final long serialVersionUID = 1L;

    private final int exitCode;

    Failure(String message) {
      this(message, RemoteQuery.Failure.USAGE);
    }

    Failure(String message, int exitCode) {
      super(message);
      this.exitCode = exitCode;
    }
  }

  /**
   * gRPC's own logger: quieted for the command, whose one line says why a call failed (gRPC would
   * log a failed name resolution first, with a stack trace). Held here so the setting stays.
   */
  private static final java.util.logging.Logger GRPC_LOG =
      java.util.logging.Logger.getLogger("io.grpc");

  private void runOnline(PrintWriter out, PrintWriter err) throws Failure {
    GRPC_LOG.setLevel(java.util.logging.Level.OFF);
    if (!files.isEmpty()) {
      throw new Failure(
          "--collector queries the collector; leave out FILE ("
              + files.get(0)
              + "), or leave out --collector to read files");
    }
    if (partial) {
      throw new Failure("--partial works on files only; leave it out with --collector");
    }
    QueryRequest.Builder request = QueryRequest.newBuilder();
    if (query != null && !query.isBlank()) {
      try {
        QueryEvaluator.of(query);
      } catch (QueryException e) {
        throw new Failure(
            "bad query: " + e.getMessage() + System.lineSeparator() + pointer(query, e.column()));
      }
      request.setQuery(query);
    }
    if (scheme != null) {
      request.setScheme(scheme);
    }
    if (format != null) {
      OutputFormat f = OutputFormat.named(format);
      if (f == null) {
        throw new Failure("--format: '" + format + "' is not one of " + OutputFormat.names());
      }
      request.setFormat(QueryService.wireFormat(f));
    }
    InstantSource now = InstantSource.fixed(clock.instant()); // one "now" for both bounds
    Long fromNanos = from == null ? null : time("--from", from, now);
    Long toNanos = to == null ? null : time("--to", to, now);
    try {
      TimeRange.of(fromNanos, toNanos);
    } catch (IllegalArgumentException e) {
      throw new Failure("--from/--to: " + e.getMessage());
    }
    if (fromNanos != null) {
      request.setFromUnixNanos(fromNanos);
    }
    if (toNanos != null) {
      request.setToUnixNanos(toNanos);
    }
    Duration wait = DEFAULT_DEADLINE;
    if (deadline != null) {
      try {
        wait = TimeArgument.parseDuration(deadline);
      } catch (IllegalArgumentException e) {
        throw new Failure("--deadline: " + e.getMessage());
      }
      if (wait.isZero()) {
        throw new Failure("--deadline: must be longer than 0");
      }
    }
    QueryResponse response;
    try {
      response = RemoteQuery.run(collector, request.build(), wait);
    } catch (RemoteQuery.Failure f) {
      throw new Failure(f.getMessage(), f.exitCode());
    }
    out.print(response.getRendered());
    out.flush();
    checkWritten(out);
    String read = intervalsRead(response);
    if (read != null) {
      err.println(read);
      err.flush();
    }
    if (!response.getNote().isEmpty()) {
      err.println("profold: note: " + response.getNote());
      err.flush();
    }
  }

  /**
   * What a range query covered, for stderr: whole retained intervals only, which rarely meet the
   * range's ends exactly; null for the cumulative state or when no interval lay in the range.
   */
  static String intervalsRead(QueryResponse r) {
    int n = r.getIntervalsCount();
    if (n == 0) {
      return null;
    }
    return "profold: read "
        + n
        + (n == 1 ? " interval, " : " intervals, ")
        + java.time.Instant.ofEpochSecond(0, r.getIntervals(0).getStartUnixNanos())
        + " to "
        + java.time.Instant.ofEpochSecond(0, r.getIntervals(n - 1).getEndUnixNanos());
  }

  private static long time(String option, String value, InstantSource now) throws Failure {
    try {
      return TimeArgument.parseTime(value, now);
    } catch (IllegalArgumentException e) {
      throw new Failure(option + ": " + e.getMessage());
    }
  }

  private void run(PrintWriter out) throws Failure {
    for (String online : new String[] {scheme, from, to, deadline}) {
      if (online != null) {
        throw new Failure(
            "--scheme, --from, --to and --deadline need --collector HOST:PORT (they query a"
                + " running collector)");
      }
    }
    if (query == null || query.isBlank()) {
      throw new Failure("missing -q/--query QUERY, e.g. -q 'SELECT count() GROUP BY function'");
    }
    if (files.isEmpty()) {
      throw new Failure("missing FILE: name JSON Lines record files, or - for standard input");
    }
    QueryEvaluator evaluator;
    try {
      evaluator = QueryEvaluator.of(query);
    } catch (QueryException e) {
      throw new Failure(
          "bad query: " + e.getMessage() + System.lineSeparator() + pointer(query, e.column()));
    }
    OutputFormat f = evaluator.query().format().orElse(OutputFormat.TABLE);
    if (format != null) {
      f = OutputFormat.named(format);
      if (f == null) {
        throw new Failure("--format: '" + format + "' is not one of " + OutputFormat.names());
      }
      if (partial) {
        throw new Failure("--partial always writes JSON Lines; leave out --format");
      }
    }
    PartialResult result = evaluator.newPartial();
    MissingAttributes check = new MissingAttributes(evaluator.query());
    LetOnStates lets = new LetOnStates(evaluator);
    for (String file : files) {
      read(
          file,
          result,
          r -> {
            check.see(r);
            lets.see(r);
          });
    }
    try {
      if (partial) {
        JsonRecords.writeLines(result.toRecords(), out);
        out.flush();
      } else {
        f.write(evaluator.finish(result), out);
      }
    } catch (IOException e) {
      throw new Failure("cannot write the result: " + e.getMessage(), 1);
    }
    checkWritten(out);
    PrintWriter err = spec.commandLine().getErr();
    for (String note : List.of(check.note("read", "check the spelling"), lets.note())) {
      if (!note.isEmpty()) {
        err.println("profold: note: " + note);
      }
    }
    err.flush();
  }

  /**
   * Fails when writing to {@code out} failed: its print methods swallow the error (a full disk, a
   * closed pipe), and a truncated result must not end with status 0.
   */
  private static void checkWritten(PrintWriter out) throws Failure {
    out.flush();
    if (out.checkError()) {
      throw new Failure(
          "cannot write the result (a full disk, or the output closed?); it is incomplete", 1);
    }
  }

  /** Reads {@code file} into {@code result}, showing each record to {@code watch} first. */
  private void read(
      String file,
      PartialResult result,
      java.util.function.Consumer<java.util.Map<String, Object>> watch)
      throws Failure {
    String name = file.equals("-") ? "<stdin>" : file;
    java.util.function.Consumer<java.util.Map<String, Object>> sink =
        r -> {
          watch.accept(r);
          result.add(r);
        };
    try {
      if (file.equals("-")) {
        try (Reader in = stdinReader()) {
          JsonRecords.read(in, name, sink);
        }
      } else {
        readFile(Path.of(file), name, sink);
      }
    } catch (NoSuchFileException e) {
      throw new Failure("cannot read " + name + ": no such file");
    } catch (java.nio.file.AccessDeniedException e) {
      throw new Failure("cannot read " + name + ": permission denied for this user");
    } catch (IOException | UncheckedIOException e) {
      throw new Failure("cannot read " + name + ": " + e.getMessage());
    } catch (RecordFormatException e) {
      if (!e.incompleteEnd()) {
        throw new Failure(e.getMessage());
      }
      // An archive's current day is being written: what is complete is read, and said so.
      PrintWriter err = spec.commandLine().getErr();
      err.println("profold: note: " + e.getMessage());
      err.flush();
    }
  }

  /**
   * Reads {@code file}'s complete lines, then what follows its last line break: a last record
   * without one is read, a torn one (a file being written, or cut short: it may end anywhere, in a
   * number or a character) is left out with a note. What is not a regular file (a pipe) is read as
   * a stream, as standard input is; so is a file whose last record spans its last line break (JSON
   * written over several lines).
   */
  private void readFile(
      Path file, String name, java.util.function.Consumer<java.util.Map<String, Object>> sink)
      throws IOException, RecordFormatException {
    if (Files.isDirectory(file)) {
      throw new IOException("is a directory");
    }
    if (!Files.isRegularFile(file)) {
      try (Reader in =
          new BufferedReader(new InputStreamReader(Files.newInputStream(file), strictUtf8()))) {
        JsonRecords.read(in, name, sink);
      }
      return;
    }
    long size = Files.size(file); // what is there now: a writer may append meanwhile
    long end = CompleteLines.endOfLastLine(file, size);
    long[] taken = {0};
    long lines;
    try (CompleteLines.Bounded bytes = new CompleteLines.Bounded(Files.newInputStream(file), end);
        Reader in = new BufferedReader(new InputStreamReader(bytes, strictUtf8()))) {
      JsonRecords.read(
          in,
          name,
          r -> {
            taken[0]++;
            sink.accept(r);
          });
      lines = bytes.lineBreaks();
    } catch (RecordFormatException e) {
      if (!e.incompleteEnd() || end >= size) {
        throw e;
      }
      // A record spans the last line break: read the whole file, past the records taken.
      long[] skipped = {0};
      try (Reader in =
          new BufferedReader(
              new InputStreamReader(
                  new CompleteLines.Bounded(Files.newInputStream(file), size), strictUtf8()))) {
        JsonRecords.read(
            in,
            name,
            r -> {
              if (skipped[0] < taken[0]) {
                skipped[0]++;
              } else {
                sink.accept(r);
              }
            });
      }
      return;
    }
    if (end >= size) {
      return;
    }
    // A last line ending in '}' was written whole: what is wrong with it is an error, not a tear.
    boolean whole = CompleteLines.lastNonBlank(file, size) == '}';
    java.io.InputStream tail = Files.newInputStream(file);
    try (tail;
        Reader in =
            new BufferedReader(
                new InputStreamReader(
                    new CompleteLines.Bounded(skipTo(tail, end), size - end), strictUtf8()))) {
      JsonRecords.read(in, name, sink);
    } catch (java.nio.charset.CharacterCodingException | RecordFormatException e) {
      if (whole) {
        throw e;
      }
      throw RecordFormatException.incompleteEnd(name, lines + 1);
    }
  }

  /** {@code in} past its first {@code n} bytes. */
  private static java.io.InputStream skipTo(java.io.InputStream in, long n) throws IOException {
    long left = n;
    while (left > 0) {
      long s = in.skip(left);
      if (s <= 0) {
        if (in.read() < 0) {
          break;
        }
        s = 1;
      }
      left -= s;
    }
    return in;
  }

  private static java.nio.charset.CharsetDecoder strictUtf8() {
    return StandardCharsets.UTF_8
        .newDecoder()
        .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
        .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT);
  }

  /** Standard input, which stays open when the reader is closed. */
  private Reader stdinReader() {
    return new BufferedReader(new InputStreamReader(stdin, StandardCharsets.UTF_8)) {
      @Override
      public void close() {
        // standard input stays open
      }
    };
  }

  /** The query on one line with a caret under column {@code column}. */
  private static String pointer(String query, int column) {
    StringBuilder line = new StringBuilder();
    for (int i = 0; i < query.length(); i++) {
      char c = query.charAt(i);
      line.append(Character.isWhitespace(c) ? ' ' : c);
    }
    String nl = System.lineSeparator();
    return "  " + line + nl + "  " + " ".repeat(Math.max(0, column - 1)) + "^";
  }
}
