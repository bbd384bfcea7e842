package dev.profold.collector.query;

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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code profold query}: evaluates a CalQL query offline over JSON Lines record files and prints
 * the result. Exit code 0 on success, 2 for a bad query, bad options or unreadable / malformed
 * input; errors go to stderr as {@code profold: <message>}, never as a stack trace.
 */
@Command(
    name = "query",
    mixinStandardHelpOptions = true,
    versionProvider = dev.profold.collector.cli.VersionProvider.class,
    description = {
      "Runs a CalQL query over JSON Lines record files (one JSON object per line;"
          + " a nested path as an array).",
      "Example: profold query -q 'SELECT function, count(), sum(time) GROUP BY function'"
          + " records.jsonl"
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

  @Parameters(
      paramLabel = "FILE",
      arity = "0..*",
      description = "JSON Lines record files; - reads standard input.")
  List<String> files = new ArrayList<>();

  /** Where {@code -} reads from (tests replace it). */
  InputStream stdin = System.in;

  @Override
  public Integer call() {
    PrintWriter err = spec.commandLine().getErr();
    try {
      run(spec.commandLine().getOut());
      return 0;
    } catch (Failure f) {
      err.println("profold: " + f.getMessage());
      err.flush();
      return 2;
    }
  }

  /** A user-facing failure: bad query, options or input. */
  private static final class Failure extends Exception {
    private static final long serialVersionUID = 1L;

    Failure(String message) {
      super(message);
    }
  }

  private void run(PrintWriter out) throws Failure {
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
    for (String file : files) {
      read(file, result);
    }
    try {
      if (partial) {
        JsonRecords.writeLines(result.toRecords(), out);
        out.flush();
      } else {
        f.write(evaluator.finish(result), out);
      }
    } catch (IOException e) {
      throw new Failure("cannot write the result: " + e.getMessage());
    }
  }

  private void read(String file, PartialResult result) throws Failure {
    String name = file.equals("-") ? "<stdin>" : file;
    try (Reader in = open(file)) {
      JsonRecords.read(in, name, result::add);
    } catch (NoSuchFileException e) {
      throw new Failure("cannot read " + name + ": no such file");
    } catch (IOException | UncheckedIOException e) {
      throw new Failure("cannot read " + name + ": " + e.getMessage());
    } catch (RecordFormatException e) {
      throw new Failure(e.getMessage());
    }
  }

  private Reader open(String file) throws IOException {
    if (file.equals("-")) {
      return new BufferedReader(new InputStreamReader(stdin, StandardCharsets.UTF_8)) {
        @Override
        public void close() {
          // standard input stays open
        }
      };
    }
    Path p = Path.of(file);
    if (Files.isDirectory(p)) {
      throw new IOException("is a directory");
    }
    return Files.newBufferedReader(p, StandardCharsets.UTF_8);
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
