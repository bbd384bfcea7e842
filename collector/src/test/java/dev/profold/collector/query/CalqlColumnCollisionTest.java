package dev.profold.collector.query;

import static dev.profold.collector.query.CalqlFixtures.rec;
import static dev.profold.collector.query.CalqlFixtures.run;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Two different operators in one query must not share a column name. */
class CalqlColumnCollisionTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          SELECT g, ratio(n, d), ratio(n, d, 1000) GROUP BY g                  | ratio(n,d,1000) | ratio(n,d)     | ratio#n/d | 24
          SELECT g, ratio(n, d) AS r1, ratio(n, d, 1000) AS r2 GROUP BY g      | ratio(n,d,1000) | ratio(n,d)     | ratio#n/d | 30
          SELECT g, scale(n, 2), scale(n, 3) GROUP BY g                        | scale(n,3)      | scale(n,2)     | scale#n   | 24
          SELECT g, scale_count(2) GROUP BY g AGGREGATE scale_count(3)         | scale_count(3)  | scale_count(2) | scount    | 47
          SELECT g, inclusive_scale(n, 2), inclusive_scale(n, 3) GROUP BY g    | inclusive_scale(n,3) | inclusive_scale(n,2) | iscale#n | 34
          """)
  void differentOperatorsWithOneColumnNameAreRefused(
      String query, String second, String first, String column, int at) {
    assertThatThrownBy(() -> QueryEvaluator.of(query))
        .isInstanceOf(QueryException.class)
        .hasMessageStartingWith("at column " + at + ": ")
        .hasMessageContaining(second)
        .hasMessageContaining(first)
        .hasMessageContaining(column)
        .hasMessageContaining("AS");
  }

  @Test
  void anAliasThatNamesAnotherColumnIsRefused() {
    // Before: one of the two columns silently disappeared from the result.
    assertThatThrownBy(() -> QueryEvaluator.of("SELECT f, sum(x) AS count, count() GROUP BY f"))
        .isInstanceOf(QueryException.class)
        .hasMessage(
            "at column 28: two columns would be named 'count' (sum#x and count), and one would"
                + " hide the other; give one of them another name with AS");
    assertThatThrownBy(() -> QueryEvaluator.of("SELECT f AS g, g GROUP BY f, g"))
        .isInstanceOf(QueryException.class)
        .hasMessageStartingWith("at column 16: two columns would be named 'g' (f and g)");
  }

  @Test
  void anOrderByOperatorThatDiffersFromTheSelectedOneWithItsColumnIsRefused() {
    assertThatThrownBy(
            () -> QueryEvaluator.of("SELECT g, ratio(n, d) GROUP BY g ORDER BY ratio(n, d, 1000)"))
        .isInstanceOf(QueryException.class)
        .hasMessageStartingWith("at column 43: ORDER BY ratio(n,d,1000) sorts by the column")
        .hasMessageContaining("ratio#n/d")
        .hasMessageContaining("which holds ratio(n,d) (at column 11)");
  }

  @Test
  void anOrderByOperatorLikeTheSelectedOneSortsByItsColumn() throws QueryException {
    List<Map<String, Object>> records =
        List.of(rec("g", "a", "n", 3L, "d", 4L), rec("g", "b", "n", 1L, "d", 4L));
    QueryResult r = run("SELECT g, ratio(n, d) GROUP BY g ORDER BY ratio(n, d, 1) DESC", records);
    assertThat(r.rows()).extracting(row -> row.get("g")).containsExactly("a", "b");
  }

  @Test
  void theSameOperatorTwiceIsStillOneColumn() throws QueryException {
    List<Map<String, Object>> records = List.of(rec("g", "a", "n", 3L, "d", 4L));
    QueryResult r =
        run(
            "SELECT g, ratio(n, d), ratio(n, d, 1), scale(n, 2), scale(n, 2.0) GROUP BY g"
                + " AGGREGATE ratio(n, d)",
            records);
    assertThat(r.columns()).containsExactly("g", "ratio#n/d", "scale#n");
    assertThat(r.rows())
        .singleElement()
        .isEqualTo(Map.of("g", "a", "ratio#n/d", 0.75, "scale#n", 6.0));
  }
}
