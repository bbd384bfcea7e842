package dev.profold.collector.query;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.cli.Main;
import dev.profold.collector.testing.RunningCollector;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code profold query --collector} against a real collector on ephemeral ports. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QueryCommandOnlineTest {
  private RunningCollector collector;
  private StringWriter out;
  private StringWriter err;

  @BeforeAll
  void start() throws Exception {
    collector = RunningCollector.withData();
  }

  @AfterAll
  void stop() throws Exception {
    if (collector != null) {
      collector.close();
    }
  }

  @BeforeEach
  void clearOutput() {
    out = new StringWriter();
    err = new StringWriter();
  }

  private int profold(String... args) {
    CommandLine cl = Main.commandLine();
    cl.setOut(new PrintWriter(out));
    cl.setErr(new PrintWriter(err));
    return cl.execute(args);
  }

  /** Runs with the collector's clock as "now". */
  private int profoldAtCollectorTime(String... args) {
    QueryCommand command = new QueryCommand();
    command.clock = collector.clock;
    CommandLine cl = new CommandLine(command);
    cl.setOut(new PrintWriter(out));
    cl.setErr(new PrintWriter(err));
    return cl.execute(args);
  }

  @Test
  void printsTheResultOfTheCollectorsState() {
    int code =
        profold(
            "query",
            "--collector",
            collector.grpcTarget(),
            "-q",
            "SELECT path, count(), sum(time), max(time) GROUP BY path ORDER BY path",
            "--format",
            "csv");
    assertThat(err.toString()).isEmpty();
    assertThat(code).isZero();
    assertThat(out.toString())
        .isEqualTo("path,count,sum#time,max#time\r\nmain,2,3,2\r\nmain/db.query,2,0.75,0.5\r\n");
  }

  @Test
  void withoutAQueryTheSchemesOwnRunsInTheDefaultTableFormat() {
    int code = profold("query", "--collector", collector.grpcTarget(), "--scheme", "region");
    assertThat(code).isZero();
    assertThat(out.toString())
        .isEqualTo(
            String.format(
                "service   instance  path           kind     sum#time  avg#time  max#time%n"
                    + "checkout  i-1       main           compute         3       1.5         2%n"
                    + "checkout  i-1       main/db.query  io           0.75     0.375       0.5%n"));
  }

  @Test
  void aRangeWithoutRetainedDataPrintsTheEmptyResultAndTheNote() {
    int code =
        profoldAtCollectorTime(
            "--collector",
            collector.grpcTarget(),
            "-q",
            "SELECT count() FORMAT json",
            "--from",
            "-15m",
            "--to",
            "now");
    assertThat(code).isZero();
    assertThat(out.toString()).isEqualTo(String.format("[]%n"));
    assertThat(err.toString())
        .startsWith("profold: note: no closed interval is retained yet (scheme 'region'")
        .hasLineCount(1);
  }

  @Test
  void aRangeSaysWhichIntervalsItRead() {
    // calql.md says every answer says what it read; the command dropped the intervals, and a
    // rate over "the last 15 minutes" was a few percent off without a word.
    long s = 1_000_000_000L;
    dev.profold.proto.v1.QueryResponse r =
        dev.profold.proto.v1.QueryResponse.newBuilder()
            .addIntervals(
                dev.profold.proto.v1.TimeInterval.newBuilder()
                    .setStartUnixNanos(1_714_564_800L * s)
                    .setEndUnixNanos(1_714_564_810L * s))
            .addIntervals(
                dev.profold.proto.v1.TimeInterval.newBuilder()
                    .setStartUnixNanos(1_714_564_810L * s)
                    .setEndUnixNanos(1_714_564_820L * s))
            .build();
    assertThat(QueryCommand.intervalsRead(r))
        .isEqualTo("profold: read 2 intervals, 2024-05-01T12:00:00Z to 2024-05-01T12:00:20Z");
    assertThat(QueryCommand.intervalsRead(dev.profold.proto.v1.QueryResponse.getDefaultInstance()))
        .isNull();
  }

  @Test
  void aBadQueryExitsWith2AndPointsAtTheColumn() {
    int code = profold("query", "--collector", collector.grpcTarget(), "-q", "select count( by f");
    assertThat(code).isEqualTo(2);
    assertThat(out.toString()).isEmpty();
    assertThat(err.toString())
        .isEqualTo(
            String.format(
                "profold: bad query: at column 18: expected ',' or ')', found 'f'%n"
                    + "  select count( by f%n"
                    + "                   ^%n"));
  }

  @Test
  void anUnknownSchemeExitsWith2OnOneLine() {
    int code = profold("query", "--collector", collector.grpcTarget(), "--scheme", "nope");
    assertThat(code).isEqualTo(2);
    assertThat(err.toString())
        .isEqualTo(String.format("profold: unknown scheme 'nope'; schemes: region%n"));
  }

  @Test
  void anUnreachableCollectorExitsWith1OnOneLine() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort(); // free again once closed: nothing listens there
    }
    int code = profold("query", "--collector", "127.0.0.1:" + port, "-q", "SELECT count()");
    assertThat(code).isEqualTo(1);
    assertThat(out.toString()).isEmpty();
    assertThat(err.toString())
        .startsWith("profold: cannot reach the collector at 127.0.0.1:" + port + ": ")
        .hasLineCount(1)
        .doesNotContain("Exception");
  }

  @Test
  void aCollectorThatDoesNotAnswerHitsTheDeadline() throws Exception {
    // Accepts TCP connections (the backlog does) but never speaks HTTP/2.
    try (ServerSocket silent = new ServerSocket(0, 8, InetAddress.getLoopbackAddress())) {
      int code =
          profold(
              "query",
              "--collector",
              "127.0.0.1:" + silent.getLocalPort(),
              "-q",
              "SELECT count()",
              "--deadline",
              "300ms");
      assertThat(code).isEqualTo(1);
      assertThat(err.toString())
          .isEqualTo(
              String.format(
                  "profold: the collector at 127.0.0.1:%d did not answer within 0.3s"
                      + " (--deadline)%n",
                  silent.getLocalPort()));
    }
  }

  @Test
  void optionMistakesExitWith2BeforeAnyCall() throws Exception {
    String target = collector.grpcTarget();
    assertThat(profold("query", "--collector", "localhost", "-q", "SELECT count()")).isEqualTo(2);
    assertThat(err.toString()).contains("'localhost' is not HOST:PORT");
    clearOutput();
    assertThat(profold("query", "--collector", target, "--from", "yesterday")).isEqualTo(2);
    assertThat(err.toString()).startsWith("profold: --from: 'yesterday' is not a time");
    clearOutput();
    assertThat(profold("query", "--collector", target, "--from", "now", "--to", "-1h"))
        .isEqualTo(2);
    assertThat(err.toString()).startsWith("profold: --from/--to: the range is empty");
    clearOutput();
    assertThat(profold("query", "--collector", target, "--deadline", "soon")).isEqualTo(2);
    assertThat(err.toString()).startsWith("profold: --deadline: 'soon' is not a duration");
    clearOutput();
    assertThat(profold("query", "--collector", target, "--format", "xml")).isEqualTo(2);
    clearOutput();
    assertThat(profold("query", "--collector", target, "--partial", "-q", "SELECT count()"))
        .isEqualTo(2);
    assertThat(err.toString()).contains("--partial works on files only");
  }

  @Test
  void filesAndCollectorDoNotMixAndOnlineOptionsNeedACollector(@TempDir Path dir) throws Exception {
    Path records = dir.resolve("r.jsonl");
    Files.writeString(records, "{\"a\":1}\n");
    assertThat(
            profold(
                "query",
                "--collector",
                collector.grpcTarget(),
                "-q",
                "SELECT count()",
                records.toString()))
        .isEqualTo(2);
    assertThat(err.toString()).contains("leave out FILE");
    clearOutput();
    assertThat(profold("query", "-q", "SELECT count()", "--from", "-1h", records.toString()))
        .isEqualTo(2);
    assertThat(err.toString()).contains("need --collector HOST:PORT");
    clearOutput();
    // Offline mode is unchanged.
    assertThat(profold("query", "-q", "SELECT count() FORMAT csv", records.toString())).isZero();
    assertThat(out.toString()).isEqualTo("count\r\n1\r\n");
  }
}
