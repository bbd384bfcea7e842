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
