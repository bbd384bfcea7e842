package dev.profold.collector.query;

import static dev.profold.collector.query.CalqlFixtures.rec;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** WHERE with Caliper's semantics, over a small table of records named by {@code id}. */
class CalqlWhereTest {
  private static final List<Map<String, Object>> RECORDS =
      List.of(
          rec("id", "a", "n", 1L, "s", "x", "f", List.of("main", "foo")),
          rec("id", "b", "n", 3L, "s", "y", "f", List.of("main", "foo", "bar"), "ok", true),
          rec("id", "c", "n", 2.5, "f", List.of("main"), "ok", false),
          rec("id", "d", "s", "10"),
          rec("id", "e", "n", 5L, "s", "x", "t", 0.25));

  @ParameterizedTest(name = "WHERE {0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          n                   | a,b,c,e
          NOT n               | d
          n=3                 | b
          n=3.0               | b
          n=2.5               | c
          NOT n=3             | a,c,d,e
          n!=3                | a,c,d,e
          n<3                 | a,c
          NOT n<3             | b,e
          n<=3                | a,b,c
          NOT n<=3            | e
          n>2.5               | b,e
          NOT n>2.5           | a,c
          n>=2.5              | b,c,e
          NOT n>=2.5          | a
          n=abc               | ''
          NOT n=abc           | a,b,c,d,e
          n<abc               | ''
          s=x                 | a,e
          NOT s=x             | b,c,d
          s<y                 | a,d,e
          s=10                | d
          f=foo               | a,b
          f=main              | a,b,c
          NOT f=foo           | c,d,e
          f=main/foo          | a
          f=main/foo/bar      | b
          NOT f=main/foo      | b,c,d,e
          ok=true             | b
          ok=FALSE            | c
          NOT ok=true         | a,c,d,e
          ok<true             | ''
          t=0.25              | e
          n>1 AND s=x         | e
          'n>1, s=x'          | e
          NOT (n)             | d
          'n, NOT s'          | c
          """)
  void matchesLikeCaliper(String condition, String expected) throws QueryException {
    QueryEvaluator q = QueryEvaluator.of("SELECT id WHERE " + condition);
    QueryResult r = q.evaluate(RECORDS);
    List<String> ids = r.rows().stream().map(row -> (String) row.get("id")).toList();
    assertThat(String.join(",", ids)).isEqualTo(expected);
  }

  @Test
  void letAttributesCanBeFilteredOn() throws QueryException {
    QueryResult r = QueryEvaluator.of("LET m = scale(n, 2) SELECT id WHERE m>4").evaluate(RECORDS);
    assertThat(r.rows()).extracting(row -> row.get("id")).containsExactly("b", "c", "e");
  }

  @Test
  void integerAndFloatingValuesCompareNumerically() throws QueryException {
    List<Map<String, Object>> records =
        List.of(rec("v", Long.MAX_VALUE), rec("v", Long.MAX_VALUE - 1), rec("v", 1e300));
    assertThat(QueryEvaluator.of("SELECT v WHERE v=" + Long.MAX_VALUE).evaluate(records).rows())
        .singleElement()
        .isEqualTo(Map.of("v", Long.MAX_VALUE));
    assertThat(QueryEvaluator.of("SELECT v WHERE v>1e299").evaluate(records).rows())
        .singleElement()
        .isEqualTo(Map.of("v", 1e300));
  }

  @Test
  void onlyADecimalLiteralComparesAsANumber() throws QueryException {
    List<Map<String, Object>> records = List.of(rec("v", 1L), rec("v", 16L), rec("v", 0.5));
    assertThat(QueryEvaluator.of("SELECT v WHERE v=1f").evaluate(records).rows()).isEmpty();
    assertThat(QueryEvaluator.of("SELECT v WHERE v=0x10").evaluate(records).rows()).isEmpty();
    assertThat(QueryEvaluator.of("SELECT v WHERE v=.5").evaluate(records).rows())
        .singleElement()
        .isEqualTo(Map.of("v", 0.5));
    assertThat(QueryEvaluator.of("SELECT v WHERE v=1.6e1").evaluate(records).rows())
        .singleElement()
        .isEqualTo(Map.of("v", 16L));
  }
}
