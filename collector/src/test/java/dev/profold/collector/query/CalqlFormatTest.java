package dev.profold.collector.query;

import static dev.profold.collector.query.CalqlFixtures.golden;
import static dev.profold.collector.query.CalqlFixtures.rec;
import static dev.profold.collector.query.CalqlFixtures.run;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CalqlFormatTest {

  private static String print(OutputFormat f, QueryResult r) throws IOException {
    StringWriter s = new StringWriter();
    f.write(r, new PrintWriter(s));
    return s.toString();
  }

  private static final String CASE1 =
      "select function,count(),sum(time.duration),avg(time.duration) group by function";

  @Test
  void tableAlignsTextLeftAndNumbersRight() throws IOException {
    assertThat(print(OutputFormat.TABLE, run(CASE1, golden())))
        .isEqualTo(
            """
            function      count  sum#time.duration  avg#time.duration
            main              2                110                 55
            main/foo          4                753                251
            main/foo/bar      2                 57               28.5
            """);
  }

  @Test
  void treeIndentsByPath() throws IOException {
    assertThat(print(OutputFormat.TREE, run(CASE1, golden())))
        .isEqualTo(
            """
            function  count  sum#time.duration  avg#time.duration
            main          2                110                 55
              foo         4                753                251
                bar       2                 57               28.5
            """);
  }

  @Test
  void treeShowsPathPrefixesWithoutRowsAndRowsWithoutPath() throws IOException {
    List<Map<String, Object>> in =
        List.of(
            rec("f", List.of("a", "b"), "t", 1L), rec("t", 2L), rec("f", List.of("c"), "t", 3L));
    assertThat(print(OutputFormat.TREE, run("SELECT f, sum(t) GROUP BY f", in)))
        .isEqualTo(
            """
            f    sum#t
                     2
            a
              b      1
            c        3
            """);
  }

  @Test
  void aTreeThousandsOfLevelsDeepPrintsWithoutOverflowingTheStack() throws IOException {
    // Before: one recursive call per level; 4096 levels overflowed the stack.
    List<String> deep = new java.util.ArrayList<>();
    for (int i = 0; i < 5_000; i++) {
      deep.add("f" + i);
    }
    List<Map<String, Object>> in =
        List.of(rec("f", deep, "t", 1L), rec("f", List.of("f0", "g"), "t", 2L));
    String out = print(OutputFormat.TREE, run("SELECT f, sum(t) GROUP BY f", in));
    String[] lines = out.split("\n");
    assertThat(lines).hasSize(1 + 5_000 + 1);
    assertThat(lines[1].strip()).isEqualTo("f0");
    assertThat(lines[2]).startsWith("  f1");
    assertThat(lines[5_000].strip()).matches("f4999 +1");
    assertThat(lines[5_001].strip())
        .as("f0's second child after the first's subtree")
        .matches("g +2");
  }

  @Test
  void treeWithoutPathsPrintsATable() throws IOException {
    QueryResult r = run("SELECT mpi.rank, count() GROUP BY mpi.rank", golden());
    assertThat(print(OutputFormat.TREE, r)).isEqualTo(print(OutputFormat.TABLE, r));
  }

  @Test
  void csvQuotesWhereNeeded() throws IOException {
    List<Map<String, Object>> in =
        List.of(rec("name", "a,b", "v", 1L), rec("name", "say \"hi\"", "v", 2.5), rec("v", 3L));
    assertThat(print(OutputFormat.CSV, run("SELECT name, v", in)))
        .isEqualTo("name,v\r\n\"a,b\",1\r\n\"say \"\"hi\"\"\",2.5\r\n,3\r\n");
  }

  @Test
  void jsonIsAnArrayOfRowObjects() throws IOException {
    QueryResult r =
        run(
            "select mpi.rank,count(),avg(time.duration),ratio(time.duration,loop.iteration),"
                + "any(function) group by mpi.rank order by mpi.rank",
            golden());
    JsonNode json = new ObjectMapper().readTree(print(OutputFormat.JSON, r));
    assertThat(json.isArray()).isTrue();
    assertThat(json).hasSize(3);
    JsonNode rank0 = json.get(0);
    assertThat(rank0.get("mpi.rank").longValue()).isZero();
    assertThat(rank0.get("count").longValue()).isEqualTo(3);
    assertThat(rank0.get("avg#time.duration").doubleValue()).isEqualTo(401.0 / 3);
    assertThat(rank0.get("ratio#time.duration/loop.iteration").textValue()).isEqualTo("Infinity");
    assertThat(rank0.get("any#function").textValue()).isEqualTo("main");
    assertThat(print(OutputFormat.JSON, run("select count() where nothing", golden())))
        .isEqualTo("[]\n".replace("\n", System.lineSeparator()));
  }

  @Test
  void jsonWritesStatesAndHistogramsAsObjects() throws IOException {
    QueryResult r = run("SELECT histogram(x)", List.of(rec("x", 0L), rec("x", 3L)));
    JsonNode h = new ObjectMapper().readTree(print(OutputFormat.JSON, r)).get(0).get("histogram#x");
    assertThat(h.get("scale").isInt()).isTrue();
    assertThat(h.get("buckets")).hasSize(2);
    assertThat(h.get("buckets").get(0).get("count").longValue()).isEqualTo(1);
  }

  @Test
  void numbersPrintLikeCaliper() {
    assertThat(Values.number(5.0)).isEqualTo("5");
    assertThat(Values.number(28.5)).isEqualTo("28.5");
    assertThat(Values.number(100.0 * 401 / 920)).isEqualTo("43.586957");
    assertThat(Values.number(0.001 * 401)).isEqualTo("0.401");
    assertThat(Values.number(1.5e-7)).isEqualTo("1.5E-7");
    assertThat(Values.number(Double.POSITIVE_INFINITY)).isEqualTo("inf");
    assertThat(Values.number(Double.NaN)).isEqualTo("nan");
    assertThat(Values.number(-0.0)).isEqualTo("0");
  }

  @Test
  void partialRecordsRoundTripThroughJsonLines() throws Exception {
    QueryEvaluator q =
        QueryEvaluator.of(
            "SELECT function, count(), sum(time.duration), quantile(time.duration, 0.5),"
                + " any(mpi.rank) GROUP BY function");
    PartialResult p = q.newPartial();
    golden().forEach(p::add);
    StringWriter s = new StringWriter();
    JsonRecords.writeLines(p.toRecords(), new PrintWriter(s));
    List<Map<String, Object>> back = CalqlFixtures.parse(s.toString());
    assertThat(back).isEqualTo(p.toRecords());
    assertThat(back.get(0).get("time.duration")).isInstanceOf(PreAggregated.class);
    assertThat(((PreAggregated) back.get(0).get("time.duration")).hasHistogram()).isTrue();
  }
}
