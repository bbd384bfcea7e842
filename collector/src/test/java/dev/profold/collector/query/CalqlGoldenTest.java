package dev.profold.collector.query;

import static dev.profold.collector.query.CalqlFixtures.byKey;
import static dev.profold.collector.query.CalqlFixtures.golden;
import static dev.profold.collector.query.CalqlFixtures.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The golden cases of calql-golden.md: the rows Caliper's cali-query printed for the same records
 * and queries. Row order is not significant. Where Caliper divides integers for avg (28, 133, 89)
 * we report the mean (28.5, 133.67, 89.33).
 */
class CalqlGoldenTest {

  @Test
  void case1_countSumMinMaxAvgVarianceByFunction() {
    QueryResult r =
        run(
            "select function,count(),sum(time.duration),min(time.duration),max(time.duration),"
                + "avg(time.duration),variance(time.duration) group by function",
            golden());
    assertThat(r.columns())
        .containsExactly(
            "function",
            "count",
            "sum#time.duration",
            "min#time.duration",
            "max#time.duration",
            "avg#time.duration",
            "variance#time.duration");
    Map<String, Map<String, Object>> rows = byKey(r, "function");
    assertThat(rows).containsOnlyKeys("main", "main/foo", "main/foo/bar");
    assertThat(rows.get("main"))
        .containsExactly(
            entry("function", List.of("main")),
            entry("count", 2L),
            entry("sum#time.duration", 110L),
            entry("min#time.duration", 10L),
            entry("max#time.duration", 100L),
            entry("avg#time.duration", 55.0),
            entry("variance#time.duration", 2025.0));
    assertThat(rows.get("main/foo"))
        .contains(
            entry("count", 4L),
            entry("sum#time.duration", 753L),
            entry("min#time.duration", 251L),
            entry("max#time.duration", 251L),
            entry("avg#time.duration", 251.0),
            entry("variance#time.duration", 0.0));
    assertThat(rows.get("main/foo/bar"))
        .contains(
            entry("count", 2L),
            entry("sum#time.duration", 57L),
            entry("min#time.duration", 7L),
            entry("max#time.duration", 50L),
            entry("avg#time.duration", 28.5), // Caliper: 28 (integer division)
            entry("variance#time.duration", 462.25));
  }

  @Test
  void case2_percentTotalScaleRatioByRank() {
    QueryResult r =
        run(
            "select mpi.rank,count(),sum(time.duration),avg(time.duration),"
                + "percent_total(time.duration),scale(time.duration,0.001),"
                + "ratio(time.duration,loop.iteration) group by mpi.rank",
            golden());
    assertThat(r.columns())
        .containsExactly(
            "mpi.rank",
            "count",
            "sum#time.duration",
            "avg#time.duration",
            "percent_total#time.duration",
            "scale#time.duration",
            "ratio#time.duration/loop.iteration");
    Map<String, Map<String, Object>> rows = byKey(r, "mpi.rank");
    assertThat(rows).containsOnlyKeys("0", "1", "2");
    Map<String, Object> r0 = rows.get("0");
    assertThat(r0)
        .contains(
            entry("count", 3L),
            entry("sum#time.duration", 401L),
            entry("avg#time.duration", 401.0 / 3),
            entry("percent_total#time.duration", 100.0 * 401 / 920),
            entry("scale#time.duration", 0.001 * 401),
            entry("ratio#time.duration/loop.iteration", Double.POSITIVE_INFINITY));
    assertThat(rows.get("1"))
        .contains(
            entry("count", 2L),
            entry("sum#time.duration", 251L),
            entry("avg#time.duration", 251.0),
            entry("percent_total#time.duration", 100.0 * 251 / 920),
            entry("scale#time.duration", 0.001 * 251),
            entry("ratio#time.duration/loop.iteration", 251.0 / 7));
    assertThat(rows.get("2"))
        .contains(
            entry("count", 3L),
            entry("sum#time.duration", 268L),
            entry("avg#time.duration", 268.0 / 3),
            entry("percent_total#time.duration", 100.0 * 268 / 920),
            entry("scale#time.duration", 0.001 * 268),
            entry("ratio#time.duration/loop.iteration", 268.0 / 6));
    // as Caliper prints them
    assertThat(text(rows, "0", "percent_total#time.duration")).isEqualTo("43.586957");
    assertThat(text(rows, "1", "percent_total#time.duration")).isEqualTo("27.282609");
    assertThat(text(rows, "2", "percent_total#time.duration")).isEqualTo("29.130435");
    assertThat(text(rows, "0", "ratio#time.duration/loop.iteration")).isEqualTo("inf");
    assertThat(text(rows, "1", "ratio#time.duration/loop.iteration")).isEqualTo("35.857143");
    assertThat(text(rows, "2", "ratio#time.duration/loop.iteration")).isEqualTo("44.666667");
    assertThat(text(rows, "0", "avg#time.duration")).isEqualTo("133.666667");
    assertThat(text(rows, "2", "avg#time.duration")).isEqualTo("89.333333");
  }

  @Test
  void case3_inclusiveSumPercentMax() {
    QueryResult r =
        run(
            "select function,inclusive_sum(time.duration),inclusive_percent_total(time.duration),"
                + "inclusive_max(time.duration) group by function",
            golden());
    assertThat(r.columns())
        .containsExactly(
            "function",
            "inclusive#time.duration",
            "ipercent_total#time.duration",
            "imax#time.duration");
    Map<String, Map<String, Object>> rows = byKey(r, "function");
    assertThat(rows).containsOnlyKeys("main", "main/foo", "main/foo/bar");
    assertThat(rows.get("main"))
        .contains(
            entry("inclusive#time.duration", 920L),
            entry("ipercent_total#time.duration", 100.0),
            entry("imax#time.duration", 251L));
    assertThat(rows.get("main/foo"))
        .contains(
            entry("inclusive#time.duration", 810L),
            entry("ipercent_total#time.duration", 100.0 * 810 / 920),
            entry("imax#time.duration", 251L));
    assertThat(rows.get("main/foo/bar"))
        .contains(
            entry("inclusive#time.duration", 57L),
            entry("ipercent_total#time.duration", 100.0 * 57 / 920),
            entry("imax#time.duration", 50L));
    assertThat(text(rows, "main/foo", "ipercent_total#time.duration")).isEqualTo("88.043478");
    assertThat(text(rows, "main/foo/bar", "ipercent_total#time.duration")).isEqualTo("6.195652");
  }

  @Test
  void case4_notEqualAlsoMatchesRecordsWithoutTheAttribute() {
    QueryResult r =
        run("select function,count() where not loop.iteration=3 group by function", golden());
    assertThat(counts(r))
        .containsOnly(entry("main", 2L), entry("main/foo", 2L), entry("main/foo/bar", 1L));
  }

  @Test
  void case5_notLessThanMeansAtLeastAndNeedsTheAttribute() {
    QueryResult r =
        run("select function,count() where not loop.iteration<3 group by function", golden());
    assertThat(counts(r)).containsOnly(entry("main/foo", 3L), entry("main/foo/bar", 1L));
  }

  @Test
  void case6_scaleCount() {
    QueryResult r = run("select function,scale_count(2.5) group by function", golden());
    assertThat(r.columns()).containsExactly("function", "scount");
    Map<String, Map<String, Object>> rows = byKey(r, "function");
    assertThat(rows.get("main")).containsEntry("scount", 5.0);
    assertThat(rows.get("main/foo")).containsEntry("scount", 10.0);
    assertThat(rows.get("main/foo/bar")).containsEntry("scount", 5.0);
    assertThat(text(rows, "main/foo", "scount")).isEqualTo("10");
  }

  @Test
  void case1_throughTwoStagesOfPartialStatesGivesTheSameRows() throws Exception {
    String q =
        "select function,count(),sum(time.duration),min(time.duration),max(time.duration),"
            + "avg(time.duration),variance(time.duration) group by function";
    // stage 1: per rank, as a per-process collector would
    QueryEvaluator perRank =
        QueryEvaluator.of(
            "select function, mpi.rank, count(), sum(time.duration), min(time.duration),"
                + " max(time.duration), avg(time.duration), variance(time.duration)"
                + " group by function, mpi.rank");
    PartialResult stage1 = perRank.newPartial();
    golden().forEach(stage1::add);
    List<Map<String, Object>> states = stage1.toRecords();
    // through JSON Lines and back, as between two processes
    java.io.StringWriter text = new java.io.StringWriter();
    JsonRecords.writeLines(states, new java.io.PrintWriter(text));
    List<Map<String, Object>> reread = CalqlFixtures.parse(text.toString());
    assertThat(reread).isEqualTo(states);

    QueryResult twoStage = run(q, reread);
    QueryResult direct = run(q, golden());
    assertThat(twoStage.columns()).isEqualTo(direct.columns());
    assertThat(twoStage.rows()).containsExactlyInAnyOrderElementsOf(direct.rows());
  }

  private static Map<String, Long> counts(QueryResult r) {
    Map<String, Long> out = new java.util.LinkedHashMap<>();
    for (Map<String, Object> row : r.rows()) {
      out.put(Values.text(row.get("function")), (Long) row.get("count"));
    }
    return out;
  }

  private static String text(Map<String, Map<String, Object>> rows, String key, String column) {
    return Values.text(rows.get(key).get(column));
  }
}
