package dev.profold.collector.query;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.profold.collector.cli.Main;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code profold query} run in-process through picocli, as the fat jar's main runs it. */
class QueryCommandTest {
  @TempDir Path dir;
  private Path records;
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  @BeforeEach
  void writeRecords() throws Exception {
    records = dir.resolve("records.jsonl");
    Files.writeString(records, CalqlFixtures.GOLDEN_JSONL, StandardCharsets.UTF_8);
  }

  private int profold(String... args) {
    CommandLine cl = Main.commandLine();
    cl.setOut(new PrintWriter(out));
    cl.setErr(new PrintWriter(err));
    return cl.execute(args);
  }

  @Test
  void printsAJsonArrayOfRows() throws Exception {
    int code =
        profold(
            "query",
            "-q",
            "select function,count(),sum(time.duration),avg(time.duration) group by function",
            "--format",
            "json",
            records.toString());
    assertThat(code).isZero();
    assertThat(err.toString()).isEmpty();
    JsonNode json = new ObjectMapper().readTree(out.toString());
    assertThat(json.isArray()).isTrue();
    Map<String, JsonNode> byFunction = new HashMap<>();
    json.forEach(row -> byFunction.put(row.get("function").textValue(), row));
    assertThat(byFunction).containsOnlyKeys("main", "main/foo", "main/foo/bar");
    JsonNode bar = byFunction.get("main/foo/bar");
    assertThat(bar.get("count").longValue()).isEqualTo(2);
    assertThat(bar.get("sum#time.duration").isIntegralNumber()).isTrue();
    assertThat(bar.get("sum#time.duration").longValue()).isEqualTo(57);
    assertThat(bar.get("avg#time.duration").doubleValue()).isEqualTo(28.5);
    assertThat(byFunction.get("main/foo").get("count").longValue()).isEqualTo(4);
  }

  @Test
  void anAttributeNoRecordHasIsNamedInANoteOnStderrAndTheExitStaysZero() {
    int code =
        profold("query", "-q", "select count() group by fucntion format csv", records.toString());

    assertThat(code).isZero();
    assertThat(out.toString()).isEqualTo("count\r\n8\r\n");
    assertThat(err.toString())
        .startsWith(
            "profold: note: no record read has attribute 'fucntion' (taken as absent: check the"
                + " spelling); the records have: ")
        .contains("function");
  }

  @Test
  void defaultsToTheQueryFormatThenTable() {
    assertThat(profold("query", "-q", "select count() format csv", records.toString())).isZero();
    assertThat(out.toString()).isEqualTo("count\r\n8\r\n");
  }

  @Test
  void readsStandardInputForDash() {
    QueryCommand command = new QueryCommand();
    command.stdin =
        new ByteArrayInputStream(CalqlFixtures.GOLDEN_JSONL.getBytes(StandardCharsets.UTF_8));
    CommandLine cl = new CommandLine(command);
    cl.setOut(new PrintWriter(out));
    cl.setErr(new PrintWriter(err));
    int code = cl.execute("--query", "select sum(time.duration)", "-");
    assertThat(code).isZero();
    assertThat(out.toString()).isEqualTo(String.format("sum#time.duration%n              920%n"));
  }

  @Test
  void partialOutputFeedsASecondRun() throws Exception {
    int first =
        profold(
            "query",
            "-q",
            "select function, mpi.rank, count(), avg(time.duration) group by function, mpi.rank",
            "--partial",
            records.toString());
    assertThat(first).isZero();
    Path states = dir.resolve("states.jsonl");
    Files.writeString(states, out.toString(), StandardCharsets.UTF_8);
    out.getBuffer().setLength(0);
    int second =
        profold(
            "query",
            "-q",
            "select function, count(), avg(time.duration) group by function order by function",
            "--format",
            "csv",
            states.toString());
    assertThat(second).isZero();
    assertThat(out.toString())
        .isEqualTo(
            "function,count,avg#time.duration\r\n"
                + "main,2,55\r\n"
                + "main/foo,4,251\r\n"
                + "main/foo/bar,2,28.5\r\n");
  }

  @Test
  void aBadQueryExitsWith2AndPointsAtTheColumn() {
    int code = profold("query", "-q", "select count( group by f", records.toString());
    assertThat(code).isEqualTo(2);
    assertThat(out.toString()).isEmpty();
    assertThat(err.toString())
        .isEqualTo(
            String.format(
                "profold: bad query: at column 21: expected ',' or ')', found 'by'%n"
                    + "  select count( group by f%n"
                    + "                      ^%n"));
  }

  @Test
  void badJsonNamesFileAndLine() throws Exception {
    Path bad = dir.resolve("bad.jsonl");
    Files.writeString(bad, "{\"a\":1}\n\n{\"a\":2,}\n", StandardCharsets.UTF_8);
    assertThat(profold("query", "-q", "select count()", bad.toString())).isEqualTo(2);
    assertThat(err.toString())
        .startsWith("profold: " + bad + ":3: invalid JSON: ")
        .doesNotContain("Exception")
        .doesNotContain("\tat ");
  }

  @Test
  void anIncompleteLastRecordIsLeftOutWithANoteAndTheRestRead() throws Exception {
    // An archive's current day being written ends in a torn line: before, the whole file was
    // refused.
    Path torn = dir.resolve("today.jsonl");
    Files.writeString(torn, "{\"a\":1}\n{\"a\":2}\n{\"a\":3,\"b", StandardCharsets.UTF_8);
    assertThat(profold("query", "-q", "select count(), sum(a) format csv", torn.toString()))
        .isZero();
    assertThat(out.toString()).isEqualToNormalizingNewlines("count,sum#a\n2,3\n");
    assertThat(err.toString())
        .startsWith("profold: note: " + torn + ":3: the last record is incomplete");
  }

  @Test
  void aLastLineTornInANumberOrACharacterIsLeftOutWithANoteToo() throws Exception {
    // Archive lines are full of decimals: a line cut after "2." or inside a UTF-8 character
    // failed with an ordinary parse or decoding error, and the whole file was refused.
    Path number = dir.resolve("number.jsonl");
    Files.writeString(number, "{\"a\":1}\n{\"a\":2}\n{\"a\":2.", StandardCharsets.UTF_8);
    assertThat(profold("query", "-q", "select count(), sum(a) format csv", number.toString()))
        .isZero();
    assertThat(out.toString()).isEqualToNormalizingNewlines("count,sum#a\n2,3\n");
    assertThat(err.toString())
        .startsWith("profold: note: " + number + ":3: the last record is incomplete");

    out.getBuffer().setLength(0);
    err.getBuffer().setLength(0);
    Path character = dir.resolve("character.jsonl");
    byte[] e = "é".getBytes(StandardCharsets.UTF_8);
    try (var o = Files.newOutputStream(character)) {
      o.write("{\"a\":1}\n{\"s\":\"".getBytes(StandardCharsets.UTF_8));
      o.write(e[0]); // half of it
    }
    assertThat(profold("query", "-q", "select count() format csv", character.toString())).isZero();
    assertThat(out.toString()).isEqualToNormalizingNewlines("count\n1\n");
    assertThat(err.toString())
        .startsWith("profold: note: " + character + ":2: the last record is incomplete");
  }

  @Test
  void jsonOverSeveralLinesWithoutALineBreakAtTheEndIsReadWhole() throws Exception {
    Path file = dir.resolve("pretty.json");
    Files.writeString(file, "{\"a\": 1}\n{\n  \"a\": 2\n}", StandardCharsets.UTF_8);
    assertThat(profold("query", "-q", "select count(), sum(a) format csv", file.toString()))
        .isZero();
    assertThat(out.toString()).isEqualToNormalizingNewlines("count,sum#a\n2,3\n");
    assertThat(err.toString()).isEmpty();
  }

  @Test
  void aWholeButInvalidLastLineIsAnErrorNotATear() throws Exception {
    Path file = dir.resolve("bad-end.jsonl");
    Files.writeString(file, "{\"a\":1}\n{\"a\":1e400}", StandardCharsets.UTF_8);
    assertThat(profold("query", "-q", "select count()", file.toString())).isEqualTo(2);
    assertThat(err.toString()).startsWith("profold: " + file + ":").doesNotContain("note");
  }

  @Test
  void aPipeIsReadAsAStream() throws Exception {
    // A pipe's size reads 0: read by its complete lines, it gave an empty result and exit 0.
    Path fifo = dir.resolve("records.fifo");
    Process mk;
    try {
      mk = new ProcessBuilder("mkfifo", fifo.toString()).start();
    } catch (java.io.IOException e) {
      org.junit.jupiter.api.Assumptions.abort("no mkfifo here: " + e.getMessage());
      return;
    }
    assertThat(mk.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
    org.junit.jupiter.api.Assumptions.assumeTrue(mk.exitValue() == 0, "mkfifo failed");
    Thread writer =
        new Thread(
            () -> {
              try {
                Files.writeString(fifo, "{\"a\":1}\n{\"a\":2}\n", StandardCharsets.UTF_8);
              } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            });
    writer.setDaemon(true);
    writer.start();
    assertThat(profold("query", "-q", "select count(), sum(a) format csv", fifo.toString()))
        .isZero();
    assertThat(out.toString()).isEqualToNormalizingNewlines("count,sum#a\n2,3\n");
    writer.join(10_000);
  }

  @Test
  void aCompleteLastRecordWithoutALineBreakIsRead() throws Exception {
    Path file = dir.resolve("written-by-hand.jsonl");
    Files.writeString(file, "{\"a\":1}\n{\"a\":2}", StandardCharsets.UTF_8);
    assertThat(profold("query", "-q", "select count(), sum(a) format csv", file.toString()))
        .isZero();
    assertThat(out.toString()).isEqualToNormalizingNewlines("count,sum#a\n2,3\n");
    assertThat(err.toString()).isEmpty();
  }

  @Test
  void statesWithSumsBeyondADoubleReadBack() throws Exception {
    // The writer puts such a sum as the string "Infinity": before, the reader refused the file.
    Path states = dir.resolve("states.jsonl");
    Files.writeString(
        states,
        "{\"g\":\"a\",\"x\":{\"count\":2,\"sum\":\"Infinity\",\"min\":1e308,"
            + "\"max\":1e308,\"sumsq\":\"Infinity\"}}\n",
        StandardCharsets.UTF_8);
    assertThat(
            profold(
                "query", "-q", "select g, sum(x), max(x) group by g format csv", states.toString()))
        .as(err.toString())
        .isZero();
    assertThat(out.toString()).isEqualToNormalizingNewlines("g,sum#x,max#x\na,inf,1E+308\n");
  }

  @Test
  void letArithmeticOnAStateIsNamedInANoteWithWhatWorksInstead() throws Exception {
    Path states = dir.resolve("states.jsonl");
    Files.writeString(
        states,
        "{\"g\":\"a\",\"t\":{\"count\":2,\"sum\":3,\"min\":1,\"max\":2,\"sumsq\":5}}\n"
            + "{\"g\":\"a\",\"t\":4}\n",
        StandardCharsets.UTF_8);

    int code =
        profold(
            "query",
            "-q",
            "let ms = scale(t, 1000) select g, sum(ms), scale(t, 1000) group by g format csv",
            states.toString());

    assertThat(code).isZero();
    // The state's values are not in sum(ms): only the plain value is; the operator takes both.
    assertThat(out.toString()).isEqualToNormalizingNewlines("g,sum#ms,scale#t\na,4000,7000\n");
    assertThat(err.toString())
        .isEqualToNormalizingNewlines(
            "profold: note: LET ms = scale(t,1000) computes on single values, and 't' is a"
                + " pre-aggregated state (many values folded) in 1 record read, which it left"
                + " without 'ms'; on states scale an operator's result instead: SELECT scale(t,"
                + " 1000) is 1000 x sum(t)\n");
  }

  @Test
  void aSaturatedStateTakesNoMoreValuesAndANegativeZeroCountIsRefused() throws Exception {
    Path states = dir.resolve("saturated.jsonl");
    Files.writeString(
        states,
        "{\"g\":\"a\",\"x\":{\"count\":9223372036854775807,\"sum\":1,\"min\":1,"
            + "\"max\":1,\"sumsq\":1}}\n{\"g\":\"a\",\"x\":2}\n",
        StandardCharsets.UTF_8);
    assertThat(
            profold("query", "-q", "select g, avg(x) group by g", "--partial", states.toString()))
        .as(err.toString())
        .isZero();
    // Before, the plain value wrapped the count to -2^63: a negative count, a negative average.
    assertThat(out.toString()).contains("\"count\":9223372036854775807");
    // The value still counts where a saturated count does not matter.
    out.getBuffer().setLength(0);
    assertThat(
            profold(
                "query",
                "-q",
                "select g, max(x), quantile(x, 1) group by g format csv",
                states.toString()))
        .isZero();
    assertThat(out.toString()).startsWith("g,max#x").contains("a,2,");

    Path negative = dir.resolve("negative.jsonl");
    Files.writeString(
        negative,
        "{\"x\":{\"count\":9223372036854775807,\"sum\":0,\"min\":0,\"max\":0,\"sumsq\":0,"
            + "\"histogram\":{\"scale\":0,\"zero\":-1}}}\n",
        StandardCharsets.UTF_8);
    assertThat(profold("query", "-q", "select sum(x)", negative.toString())).isEqualTo(2);
    // Before, -1 zeros read as 2^63-1 of them, and the state matched its count.
    assertThat(err.toString()).contains("histogram zero count must be >= 0, was -1");
  }

  @Test
  void aByteOrderMarkIsSkippedAndANumberBeyondADoubleIsRefusedWithItsLine() throws Exception {
    Path bom = dir.resolve("bom.jsonl");
    Files.writeString(bom, "\uFEFF{\"a\":1}\n", StandardCharsets.UTF_8);
    assertThat(profold("query", "-q", "select count() format csv", bom.toString())).isZero();
    Path huge = dir.resolve("huge.jsonl");
    Files.writeString(huge, "{\"a\":1}\n{\"a\":1e400}\n", StandardCharsets.UTF_8);
    assertThat(profold("query", "-q", "select sum(a)", huge.toString())).isEqualTo(2);
    assertThat(err.toString())
        .contains(huge + ":2: attribute \"a\": a number beyond the range of a double");
  }

  @Test
  void aResultThatCannotBeWrittenFailsTheCommand() {
    CommandLine cl = Main.commandLine();
    PrintWriter broken =
        new PrintWriter(
            new java.io.Writer() {
              @Override
              public void write(char[] b, int off, int len) throws java.io.IOException {
                throw new java.io.IOException("No space left on device");
              }

              @Override
              public void flush() {}

              @Override
              public void close() {}
            });
    cl.setOut(broken);
    cl.setErr(new PrintWriter(err));
    // Before: the writer swallowed the error and the command exited 0 with nothing written.
    assertThat(cl.execute("query", "-q", "select count()", records.toString())).isEqualTo(1);
    assertThat(err.toString()).contains("cannot write the result");
  }

  @Test
  void aCollectorAddressGrpcCannotTakeIsOneLineAndExit2() {
    for (String target : new String[] {"[::1:7763", "local host:7763"}) {
      // Before: gRPC's IllegalArgumentException with its stack trace, and exit 1.
      assertThat(profold("query", "--collector", target, "-q", "select count()"))
          .as(target)
          .isEqualTo(2);
    }
    assertThat(err.toString())
        .startsWith("profold: --collector: '[::1:7763' is not HOST:PORT (")
        .doesNotContain("Exception")
        .doesNotContain("\tat ");
  }

  @Test
  void nonObjectRecordsAreRejectedWithTheirLine() throws Exception {
    Path bad = dir.resolve("bad.jsonl");
    Files.writeString(bad, "{\"a\":1}\n[\"x\"]\n", StandardCharsets.UTF_8);
    assertThat(profold("query", "-q", "select count()", bad.toString())).isEqualTo(2);
    assertThat(err.toString())
        .isEqualTo(
            String.format(
                "profold: %s:2: expected a JSON object (a record), found an array%n", bad));
  }

  @Test
  void missingFilesUnknownFormatsAndMissingArgumentsExitWith2() {
    assertThat(profold("query", "-q", "select count()", dir.resolve("nope").toString()))
        .isEqualTo(2);
    assertThat(err.toString()).contains("profold: cannot read ").contains("nope: no such file");
    err.getBuffer().setLength(0);
    assertThat(profold("query", "-q", "select count()", "--format", "xml", records.toString()))
        .isEqualTo(2);
    assertThat(err.toString())
        .isEqualTo(
            String.format("profold: --format: 'xml' is not one of table, json, csv, tree%n"));
    err.getBuffer().setLength(0);
    assertThat(profold("query", records.toString())).isEqualTo(2);
    assertThat(err.toString()).startsWith("profold: missing -q/--query QUERY");
    err.getBuffer().setLength(0);
    assertThat(profold("query", "-q", "select count()")).isEqualTo(2);
    assertThat(err.toString()).startsWith("profold: missing FILE");
  }

  @Test
  void readsSeveralFilesAsOneInput() throws Exception {
    Path second = dir.resolve("more.jsonl");
    Files.writeString(second, "{\"time.duration\":80}\n", StandardCharsets.UTF_8);
    assertThat(
            profold(
                "query",
                "-q",
                "select sum(time.duration) format json",
                records.toString(),
                second.toString()))
        .isZero();
    JsonNode json = new ObjectMapper().readTree(out.toString());
    assertThat(json.get(0).get("sum#time.duration").longValue()).isEqualTo(1000);
  }
}
