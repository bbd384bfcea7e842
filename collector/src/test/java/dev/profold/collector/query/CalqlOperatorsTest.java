package dev.profold.collector.query;

import static dev.profold.collector.query.CalqlFixtures.byKey;
import static dev.profold.collector.query.CalqlFixtures.rec;
import static dev.profold.collector.query.CalqlFixtures.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;
import static org.assertj.core.api.Assertions.within;

import dev.profold.reduce.Aggregate;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CalqlOperatorsTest {

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          count()                         | count
          sum(x)                          | sum#x
          min(x)                          | min#x
          max(x)                          | max#x
          avg(x)                          | avg#x
          variance(x)                     | variance#x
          stddev(x)                       | stddev#x
          percent_total(x)                | percent_total#x
          ratio(a, b)                     | ratio#a/b
          ratio(a, b, 1000)               | ratio#a/b
          scale(x, 0.5)                   | scale#x
          scale_count(2)                  | scount
          any(x)                          | any#x
          inclusive_sum(x)                | inclusive#x
          inclusive_percent_total(x)      | ipercent_total#x
          inclusive_min(x)                | imin#x
          inclusive_max(x)                | imax#x
          inclusive_scale(x, 2)           | iscale#x
          inclusive_ratio(a, b)           | iratio#a/b
          histogram(x)                    | histogram#x
          quantile(x, 0.99)               | p99#x
          quantile(x, 0.5)                | p50#x
          quantile(x, 0.999)              | p99.9#x
          QUANTILE(x, 1)                  | p100#x
          quantile(x, 5e-1)               | p50#x
          quantile(x, 0.5d)               | p50#x
          quantile(x, 0x1p-1)             | p50#x
          quantile(x, ' 0.25')            | p25#x
          """)
  void columnNamesFollowCaliper(String call, String column) throws QueryException {
    OperatorCall c = QueryParser.parse("SELECT " + call).operatorCalls().get(0);
    assertThat(Operators.create(c).column()).isEqualTo(column);
  }

  private static final List<Map<String, Object>> XS =
      List.of(
          rec("g", "a", "x", 1L),
          rec("g", "a", "x", 2L),
          rec("g", "a", "x", 6L),
          rec("g", "b", "x", 0.5),
          rec("g", "b", "x", "not a number"),
          rec("g", "b"),
          rec("g", "c"));

  @Test
  void numericOperatorsReadNumbersAndIgnoreTheRest() {
    Map<String, Map<String, Object>> rows =
        byKey(
            run(
                "SELECT g, count(), sum(x), min(x), max(x), avg(x), variance(x), stddev(x)"
                    + " GROUP BY g",
                XS),
            "g");
    assertThat(rows.get("a"))
        .containsExactly(
            entry("g", "a"),
            entry("count", 3L),
            entry("sum#x", 9L),
            entry("min#x", 1L),
            entry("max#x", 6L),
            entry("avg#x", 3.0),
            entry("variance#x", 41.0 / 3 - 9.0),
            entry("stddev#x", Math.sqrt(41.0 / 3 - 9.0)));
    assertThat(rows.get("b"))
        .containsExactly(
            entry("g", "b"),
            entry("count", 3L),
            entry("sum#x", 0.5),
            entry("min#x", 0.5),
            entry("max#x", 0.5),
            entry("avg#x", 0.5),
            entry("variance#x", 0.0),
            entry("stddev#x", 0.0));
    // a group without x has a count and nothing else
    assertThat(rows.get("c")).containsExactly(entry("g", "c"), entry("count", 1L));
  }

  @Test
  void countTakesTheCountOfPreAggregatedRecords() {
    List<Map<String, Object>> in =
        List.of(rec("g", "a", "count", 5L), rec("g", "a"), rec("g", "a", "count", "five"));
    QueryResult r = run("SELECT g, count(), scale_count(0.5) GROUP BY g", in);
    assertThat(r.rows()).singleElement().isEqualTo(Map.of("g", "a", "count", 7L, "scount", 3.5));
  }

  @Test
  void percentTotalIsEmptyWithoutAPositiveTotal() {
    List<Map<String, Object>> in =
        List.of(rec("g", "a", "x", 2L), rec("g", "b", "x", -2L), rec("g", "c"));
    Map<String, Map<String, Object>> rows =
        byKey(run("SELECT g, percent_total(x) GROUP BY g", in), "g");
    assertThat(rows.get("a")).doesNotContainKey("percent_total#x");
    assertThat(rows.get("c")).doesNotContainKey("percent_total#x");
    Map<String, Map<String, Object>> positive =
        byKey(
            run(
                "SELECT g, percent_total(x) GROUP BY g",
                List.of(rec("g", "a", "x", 1L), rec("g", "b", "x", 3L))),
            "g");
    assertThat(positive.get("a")).containsEntry("percent_total#x", 25.0);
    assertThat(positive.get("b")).containsEntry("percent_total#x", 75.0);
  }

  @Test
  void ratioScalesAndNeedsBothAttributes() {
    List<Map<String, Object>> in =
        List.of(
            rec("g", "a", "n", 3L, "d", 4L),
            rec("g", "a", "n", 1L),
            rec("g", "b", "n", 1L),
            rec("g", "c", "n", 0L, "d", 0L));
    Map<String, Map<String, Object>> rows =
        byKey(run("SELECT g, ratio(n, d, 100) GROUP BY g", in), "g");
    assertThat(rows.get("a")).containsEntry("ratio#n/d", 100.0);
    assertThat(rows.get("b")).doesNotContainKey("ratio#n/d");
    assertThat((Double) rows.get("c").get("ratio#n/d")).isNaN();
  }

  @Test
  void scaleMultipliesTheSum() {
    QueryResult r = run("SELECT scale(x, 0.5)", XS);
    assertThat(r.rows()).singleElement().isEqualTo(Map.of("scale#x", 4.75));
  }

  @Test
  void anyKeepsTheFirstValueOfTheGroup() {
    List<Map<String, Object>> in =
        List.of(rec("g", "a"), rec("g", "a", "host", "h1"), rec("g", "a", "host", "h2"));
    assertThat(run("SELECT g, any(host) GROUP BY g", in).rows())
        .singleElement()
        .isEqualTo(Map.of("g", "a", "any#host", "h1"));
  }

  @Test
  void inclusiveOperatorsRollUpAlongThePathAndCreateMissingParents() {
    List<Map<String, Object>> in =
        List.of(
            rec("f", List.of("main", "a", "x"), "t", 4L),
            rec("f", List.of("main", "a", "y"), "t", 1L),
            rec("f", List.of("main", "b"), "t", 10L),
            rec("f", List.of("other"), "t", 5L));
    Map<String, Map<String, Object>> rows =
        byKey(
            run(
                "SELECT f, count(), sum(t), inclusive_sum(t), inclusive_min(t), inclusive_max(t),"
                    + " inclusive_percent_total(t), inclusive_scale(t, 2),"
                    + " inclusive_ratio(t, t) GROUP BY f",
                in),
            "f");
    assertThat(rows).containsOnlyKeys("main/a/x", "main/a/y", "main/b", "other", "main", "main/a");
    assertThat(rows.get("main"))
        .containsExactly(
            entry("f", List.of("main")),
            entry("inclusive#t", 15L),
            entry("imin#t", 1L),
            entry("imax#t", 10L),
            entry("ipercent_total#t", 75.0),
            entry("iscale#t", 30.0),
            entry("iratio#t/t", 1.0));
    assertThat(rows.get("main/a")).containsEntry("inclusive#t", 5L).doesNotContainKey("count");
    assertThat(rows.get("main/a/x"))
        .containsEntry("count", 1L)
        .containsEntry("sum#t", 4L)
        .containsEntry("inclusive#t", 4L);
    assertThat(rows.get("other")).containsEntry("ipercent_total#t", 25.0);
  }

  @Test
  void inclusiveRollUpKeepsOtherKeyAttributesApart() {
    List<Map<String, Object>> in =
        List.of(
            rec("f", List.of("main", "a"), "rank", 0L, "t", 1L),
            rec("f", List.of("main", "a"), "rank", 1L, "t", 2L),
            rec("f", List.of("main"), "rank", 1L, "t", 4L));
    QueryResult r = run("SELECT f, rank, inclusive_sum(t) GROUP BY f, rank", in);
    assertThat(r.rows())
        .containsExactlyInAnyOrder(
            Map.of("f", List.of("main", "a"), "rank", 0L, "inclusive#t", 1L),
            Map.of("f", List.of("main", "a"), "rank", 1L, "inclusive#t", 2L),
            Map.of("f", List.of("main"), "rank", 1L, "inclusive#t", 6L),
            Map.of("f", List.of("main"), "rank", 0L, "inclusive#t", 1L));
  }

  @Test
  void histogramCountsEveryValueInAscendingBuckets() {
    List<Map<String, Object>> in = new ArrayList<>();
    for (double v : new double[] {-3, -0.5, 0, 0, 1, 2, 2, 1000}) {
      in.add(rec("x", v));
    }
    HistogramView h =
        (HistogramView) run("SELECT histogram(x)", in).rows().get(0).get("histogram#x");
    assertThat(h.buckets().stream().mapToLong(HistogramView.Bucket::count).sum()).isEqualTo(8);
    assertThat(h.buckets()).contains(new HistogramView.Bucket(0, 0, 2));
    for (int i = 1; i < h.buckets().size(); i++) {
      assertThat(h.buckets().get(i).lower()).isGreaterThanOrEqualTo(h.buckets().get(i - 1).upper());
    }
    for (HistogramView.Bucket b : h.buckets()) {
      assertThat(b.lower()).isLessThanOrEqualTo(b.upper());
    }
    assertThat(h.buckets().get(0).lower()).isLessThanOrEqualTo(-3);
    assertThat(h.buckets().get(h.buckets().size() - 1).upper()).isGreaterThanOrEqualTo(1000);
  }

  @Test
  void quantilesAreExactAtTheEndsAndWithinABucketElsewhere() {
    List<Map<String, Object>> in = new ArrayList<>();
    for (long v = 1; v <= 1000; v++) {
      in.add(rec("x", v));
    }
    Map<String, Object> row =
        run(
                "SELECT quantile(x, 0), quantile(x, 0.5), quantile(x, 0.9), quantile(x, 0.99),"
                    + " quantile(x, 1), histogram(x)",
                in)
            .rows()
            .get(0);
    int scale = ((HistogramView) row.get("histogram#x")).scale();
    double width = Math.pow(2, Math.pow(2, -scale)) - 1;
    assertThat(row.get("p0#x")).isEqualTo(1.0);
    assertThat(row.get("p100#x")).isEqualTo(1000.0);
    assertThat((Double) row.get("p50#x")).isCloseTo(500.0, within(500 * width));
    assertThat((Double) row.get("p90#x")).isCloseTo(900.0, within(900 * width));
    assertThat((Double) row.get("p99#x")).isCloseTo(990.0, within(990 * width));
  }

  @Test
  void theRankOfAQuantileIsThatOfTheDecimalWritten() {
    // 0.07 * 100 computes as 7.000000000000001: before, its ceiling made rank 8 (7.83, not ~7).
    List<Map<String, Object>> in = new ArrayList<>();
    for (long v = 1; v <= 100; v++) {
      in.add(rec("x", v));
    }
    Map<String, Object> row =
        run("SELECT quantile(x, 0.07), quantile(x, 0.14), quantile(x, 0.55), histogram(x)", in)
            .rows()
            .get(0);
    double width = Math.pow(2, Math.pow(2, -((HistogramView) row.get("histogram#x")).scale())) - 1;
    assertThat((Double) row.get("p7#x")).isCloseTo(7.0, within(7 * width));
    assertThat((Double) row.get("p14#x")).isCloseTo(14.0, within(14 * width));
    assertThat((Double) row.get("p55#x")).isCloseTo(55.0, within(55 * width));
    assertThat(QuantileOperator.nearInteger(7.000000000000001)).isEqualTo(7.0);
    assertThat(QuantileOperator.nearInteger(500000000.1)).isEqualTo(500000000.1);
  }

  @Test
  void aQuantileLiteralOfManyDigitsNamesAShortColumn() {
    // 1e-999999999 reads as 0: before, its column name had a billion characters.
    assertThat(run("SELECT quantile(x, 1e-999999999)", List.of(rec("x", 3L))).rows())
        .singleElement()
        .isEqualTo(Map.of("p0#x", 3.0));
    assertThat(run("SELECT quantile(x, 1e-30)", List.of(rec("x", 3L))).columns())
        .containsExactly("p1E-28#x");
  }

  @Test
  void aGroupWhoseValuesCameInPartWithoutAHistogramHasNoQuantile() {
    Aggregate withHistogram = new Aggregate();
    for (int i = 0; i < 10; i++) {
      withHistogram.record(1.0);
    }
    Aggregate momentsOnly = new Aggregate();
    momentsOnly.mergeMoments(90, 9000, 100, 100, 900_000);
    List<Map<String, Object>> in =
        List.of(
            rec("x", PreAggregated.of(withHistogram, true, true)),
            rec("x", PreAggregated.of(momentsOnly, true, false)));
    Map<String, Object> row =
        run("SELECT count(), quantile(x, 0.5), histogram(x), max(x)", in).rows().get(0);
    assertThat(row).doesNotContainKey("p50#x").doesNotContainKey("histogram#x");
    assertThat(row.get("max#x")).isEqualTo(100L);
  }

  @Test
  void countsSaturateRatherThanWrapAndANegativeCountIsOneRecord() {
    assertThat(
            run(
                    "SELECT count()",
                    List.of(rec("count", Long.MAX_VALUE), rec("count", 1L), rec("x", 1L)))
                .rows())
        .singleElement()
        .isEqualTo(Map.of("count", Long.MAX_VALUE));
    assertThat(run("SELECT count()", List.of(rec("count", -3L), rec("x", 1L))).rows())
        .singleElement()
        .isEqualTo(Map.of("count", 2L));
  }

  @Test
  void nanSortsLastLikeAnEmptyCellWhicheverTheDirection() {
    List<Map<String, Object>> in =
        List.of(rec("g", "a", "v", Double.NaN), rec("g", "b", "v", 2.0), rec("g", "c", "v", 1.0));
    for (String dir : new String[] {"ASC", "DESC"}) {
      assertThat(run("SELECT g, v ORDER BY v " + dir, in).rows())
          .extracting(r -> r.get("g"))
          .as(dir)
          .containsExactly(dir.equals("ASC") ? "c" : "b", dir.equals("ASC") ? "b" : "c", "a");
    }
  }

  @Test
  void quantileOfOneValueIsThatValue() {
    assertThat(run("SELECT quantile(x, 0.5)", List.of(rec("x", 251L))).rows())
        .singleElement()
        .isEqualTo(Map.of("p50#x", 251.0));
  }

  @Test
  void quantileHandlesNegativesAndZeros() {
    List<Map<String, Object>> in = new ArrayList<>();
    for (double v : new double[] {-8, -4, 0, 0, 0, 4, 8}) {
      in.add(rec("x", v));
    }
    Map<String, Object> row =
        run("SELECT quantile(x, 0.1), quantile(x, 0.5), quantile(x, 0.95)", in).rows().get(0);
    assertThat((Double) row.get("p10#x")).isCloseTo(-8.0, within(0.1));
    assertThat(row.get("p50#x")).isEqualTo(0.0);
    assertThat((Double) row.get("p95#x")).isCloseTo(8.0, within(0.1));
  }

  @Test
  void letFunctionsDeriveAttributes() {
    List<Map<String, Object>> in =
        List.of(
            rec("id", 1L, "a", 7L, "b", 2L, "c", 3.7),
            rec("id", 2L, "a", 5L, "b", 0L),
            rec("id", 3L, "b", 4L));
    QueryResult r =
        run(
            "LET s = scale(a, 0.5), r = ratio(a, b, 10), f = first(a, b), t = truncate(a, 2),"
                + " u = truncate(c), v = truncate(c, 0.5)"
                + " SELECT id, s, r, f, t, u, v",
            in);
    assertThat(r.rows())
        .containsExactly(
            Map.of("id", 1L, "s", 3.5, "r", 35.0, "f", 7L, "t", 6L, "u", 3.0, "v", 3.5),
            Map.of("id", 2L, "s", 2.5, "f", 5L, "t", 4L),
            Map.of("id", 3L, "f", 4L));
  }

  @Test
  void truncateKeepsLargeIntegersExact() {
    // Before: through a double, 9007199254740993 became ...992.
    List<Map<String, Object>> in =
        List.of(rec("id", 1L, "ts", 9_007_199_254_740_993L), rec("id", 2L, "ts", -17L));
    QueryResult r = run("LET t = truncate(ts), u = truncate(ts, 10) SELECT id, t, u", in);
    assertThat(r.rows())
        .containsExactly(
            Map.of("id", 1L, "t", 9_007_199_254_740_993L, "u", 9_007_199_254_740_990L),
            Map.of("id", 2L, "t", -17L, "u", -10L));
  }

  @Test
  void preAggregatedStatesMergeInto_everyMeasuringOperator() {
    // the states of {1, 2, 6} and {0.5}, as an earlier stage writes them
    List<Map<String, Object>> in =
        CalqlFixtures.parse(
            """
            {"g":"a","count":3,"x":{"count":3,"sum":9,"min":1,"max":6,"sumsq":41}}
            {"g":"a","count":2,"x":{"count":1,"sum":0.5,"min":0.5,"max":0.5,"sumsq":0.25}}
            {"g":"a","x":2}
            """);
    Map<String, Object> row =
        run(
                "SELECT g, count(), sum(x), min(x), max(x), avg(x), variance(x), scale(x, 2)"
                    + " GROUP BY g",
                in)
            .rows()
            .get(0);
    double sum = 11.5;
    double sumsq = 45.25;
    assertThat(row)
        .containsEntry("count", 6L)
        .containsEntry("sum#x", sum)
        .containsEntry("min#x", 0.5)
        .containsEntry("max#x", 6.0)
        .containsEntry("avg#x", sum / 5)
        .containsEntry("variance#x", sumsq / 5 - (sum / 5) * (sum / 5))
        .containsEntry("scale#x", 2 * sum);
  }
}
