package dev.profold.collector.query;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.collector.query.Condition.Comparison;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class QueryParserTest {

  @Test
  void parsesEveryClause() throws QueryException {
    Query q =
        QueryParser.parse(
            "LET t = scale(time.duration, 1e-6) SELECT function, count(), sum(t) AS \"Time (s)\""
                + " WHERE kind=wait AND NOT tenant=internal, loop GROUP BY function, region"
                + " ORDER BY sum#t DESC, function LIMIT 10 FORMAT json");
    assertThat(q.let())
        .singleElement()
        .satisfies(
            b -> {
              assertThat(b.target()).isEqualTo("t");
              assertThat(b.function().name()).isEqualTo("scale");
              assertThat(b.function().args())
                  .extracting(OperatorCall.Argument::text)
                  .containsExactly("time.duration", "1e-6");
            });
    assertThat(q.select()).hasSize(3);
    assertThat(q.select().get(0)).isEqualTo(new SelectItem.Attribute("function", null, 43));
    assertThat(q.select().get(2))
        .isInstanceOfSatisfying(
            SelectItem.Aggregation.class,
            a -> {
              assertThat(a.call().name()).isEqualTo("sum");
              assertThat(a.alias()).isEqualTo("Time (s)");
            });
    assertThat(q.where())
        .extracting(Condition::attribute, Condition::comparison, Condition::value)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("kind", Comparison.EQ, "wait"),
            org.assertj.core.groups.Tuple.tuple("tenant", Comparison.NE, "internal"),
            org.assertj.core.groups.Tuple.tuple("loop", Comparison.EXISTS, ""));
    assertThat(q.groupBy()).containsExactly("function", "region");
    assertThat(q.orderBy())
        .extracting(SortKey::name, SortKey::descending)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("sum#t", true),
            org.assertj.core.groups.Tuple.tuple("function", false));
    assertThat(q.limit()).isEqualTo(OptionalInt.of(10));
    assertThat(q.format()).isEqualTo(Optional.of(OutputFormat.JSON));
  }

  @Test
  void keywordsAreCaseInsensitiveAndClausesComeInAnyOrder() throws QueryException {
    Query a = QueryParser.parse("group by f select f, Count() where x format Tree");
    Query b = QueryParser.parse("SELECT f, Count() WHERE x GROUP BY f FORMAT tree");
    assertThat(a.toString()).isEqualTo(b.toString());
    assertThat(a.format()).contains(OutputFormat.TREE);
  }

  @Test
  void aggregateClauseAcceptsBareCountAndBareAttributesAsSum() throws QueryException {
    Query q = QueryParser.parse("AGGREGATE count, time.duration GROUP BY function");
    assertThat(q.aggregate())
        .extracting(OperatorCall::toString)
        .containsExactly("count()", "sum(time.duration)");
  }

  @Test
  void notFollowsCaliper() throws QueryException {
    assertThat(where("NOT a")).isEqualTo(Comparison.NOT_EXISTS);
    assertThat(where("NOT a=1")).isEqualTo(Comparison.NE);
    assertThat(where("NOT a<1")).isEqualTo(Comparison.GE);
    assertThat(where("NOT a>1")).isEqualTo(Comparison.LE);
    assertThat(where("NOT a<=1")).isEqualTo(Comparison.GT);
    assertThat(where("NOT a>=1")).isEqualTo(Comparison.LT);
    assertThat(where("NOT a!=1")).isEqualTo(Comparison.EQ);
    assertThat(where("NOT NOT a<1")).isEqualTo(Comparison.LT);
    assertThat(where("not (a)")).isEqualTo(Comparison.NOT_EXISTS);
    assertThat(where("a != 1")).isEqualTo(Comparison.NE);
  }

  @Test
  void quotedWordsAreNeverKeywordsAndKeepSpecialCharacters() throws QueryException {
    Query q =
        QueryParser.parse(
            "SELECT \"where\", 'a b' WHERE \"x,y\"=\"1 2\" GROUP BY \"where\", 'a b'");
    assertThat(q.select())
        .extracting(i -> ((SelectItem.Attribute) i).name())
        .containsExactly("where", "a b");
    assertThat(q.where().get(0).attribute()).isEqualTo("x,y");
    assertThat(q.where().get(0).value()).isEqualTo("1 2");
    Query escaped = QueryParser.parse("SELECT a\\,b GROUP BY a\\,b");
    assertThat(escaped.groupBy()).containsExactly("a,b");
  }

  @Test
  void attributeNamesKeepDotsHashesAndColons() throws QueryException {
    Query q =
        QueryParser.parse(
            "SELECT iteration#mainloop, count() WHERE mpi.rank>=2 GROUP BY iteration#mainloop");
    assertThat(q.groupBy()).containsExactly("iteration#mainloop");
    assertThat(q.where().get(0).value()).isEqualTo("2");
  }

  @Test
  void orderByAnOperatorCallMeansItsColumn() throws QueryException {
    Query q = QueryParser.parse("SELECT f, sum(x) GROUP BY f ORDER BY sum(x) desc");
    assertThat(q.orderBy()).singleElement().extracting(SortKey::name).isEqualTo("sum#x");
  }

  @Test
  void trailingSemicolonIsAccepted() throws QueryException {
    assertThat(QueryParser.parse("SELECT count();").select()).hasSize(1);
  }

  @Test
  void toStringIsCanonicalCalqlThatParsesToTheSameQuery() throws QueryException {
    String text =
        "LET t=ratio(a,b,2) SELECT f,count(),\"odd name\" AS \"x y\" WHERE NOT g=1,h<2"
            + " GROUP BY f,\"odd name\" ORDER BY count DESC LIMIT 3 FORMAT csv";
    Query q = QueryParser.parse(text);
    assertThat(QueryParser.parse(q.toString()).toString()).isEqualTo(q.toString());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          ''                                   | 1  | expected a clause (SELECT, AGGREGATE, WHERE, GROUP BY, LET, ORDER BY, LIMIT, FORMAT), found end of query
          selct count()                        | 1  | expected a clause (SELECT, AGGREGATE, WHERE, GROUP BY, LET, ORDER BY, LIMIT, FORMAT), found 'selct'
          ;                                    | 1  | expected a clause (SELECT, AGGREGATE, WHERE, GROUP BY, LET, ORDER BY, LIMIT, FORMAT), found ';'
          select summ(x)                       | 8  | expected an operator (count, sum
          select sum(x,y)                      | 8  | expected sum(attribute), found sum with 2 arguments
          select x(                            | 8  | expected an operator (count, sum
          select count() order by p99(x)       | 25 | expected an operator (count, sum
          select count(x)                      | 8  | expected count(), found count with 1 argument
          select a b                           | 10 | expected ',' or a clause
          select a,                            | 10 | expected an attribute, an operator call or *, found end of query
          select sum(x                         | 13 | expected ',' or ')', found end of query
          select sum(x,)                       | 14 | expected an argument, found ')'
          select scale(x, fast)                | 17 | expected a number, found 'fast'
          select quantile(x, 1.5)              | 20 | expected a quantile between 0 and 1, found '1.5'
          select count() where                 | 21 | expected a condition
          select count() where a<              | 24 | expected a value after '<', found end of query
          select count() where a=1 b           | 26 | expected ',', AND or a clause
          select count() where (a=1            | 26 | expected ')', found end of query
          select count() where a ! 1           | 24 | expected '!=', found '!'
          select count() where "a              | 24 | expected a closing " for the quote at column 22, found end of query
          select count() group f               | 22 | expected 'BY' after group, found 'f'
          select count() order by              | 24 | expected a column to sort by, found end of query
          select count() limit ten             | 22 | expected a row count (a non-negative integer), found 'ten'
          select count() limit -1              | 22 | expected a row count (a non-negative integer), found '-1'
          select count() format xml            | 23 | expected a format (table, json, csv, tree), found 'xml'
          select count() where a select b      | 24 | expected each clause once (select is already at column 1), found a second 'select'
          let x scale(a,2)                     | 7  | expected '=' after the LET attribute, found 'scale'
          let x = sqrt(a)                      | 9  | expected a LET function (scale, ratio, first, truncate), found 'sqrt'
          let x = scale(a)                     | 9  | expected scale(attribute, scale), found scale with 1 argument
          select count();x                     | 16 | expected end of query, found 'x'
          """)
  void reportsTheColumnAndWhatWasExpected(String query, int column, String message) {
    assertThatThrownBy(() -> QueryParser.parse(query))
        .isInstanceOfSatisfying(
            QueryException.class,
            e -> {
              assertThat(e.column()).isEqualTo(column);
              assertThat(e.getMessage()).startsWith("at column " + column + ": " + message);
            });
  }

  @Test
  void deeplyNestedConditionsAreRefusedWithAColumnRatherThanOverflowingTheStack() {
    String deep = "select count() where " + "(".repeat(100_000) + "a" + ")".repeat(100_000);
    assertThatThrownBy(() -> QueryParser.parse(deep))
        .isInstanceOfSatisfying(
            QueryException.class,
            e ->
                assertThat(e.getMessage())
                    .isEqualTo(
                        "at column 122: expected a condition nested at most 100 deep (NOT and"
                            + " parentheses), found '('"));
    String nots = "select count() where " + "not ".repeat(100_000) + "a";
    assertThatThrownBy(() -> QueryParser.parse(nots)).isInstanceOf(QueryException.class);
  }

  @Test
  void conditionsNestedAsDeepAsAllowedParse() throws QueryException {
    String deep = "select count() where " + "(".repeat(99) + "not a" + ")".repeat(99);
    assertThat(QueryParser.parse(deep).where())
        .containsExactly(new Condition("a", Comparison.NOT_EXISTS, "", 125));
  }

  @Test
  void bindingErrorsAlsoCarryPositions() {
    assertThatThrownBy(() -> QueryEvaluator.of("select foo, count() group by function"))
        .isInstanceOfSatisfying(
            QueryException.class,
            e ->
                assertThat(e.getMessage())
                    .isEqualTo(
                        "at column 8: expected an attribute of GROUP BY (function) or an"
                            + " operator, found 'foo'"));
    assertThatThrownBy(() -> QueryEvaluator.of("select f, count() group by f order by sum#x"))
        .isInstanceOfSatisfying(
            QueryException.class,
            e ->
                assertThat(e.getMessage())
                    .isEqualTo("at column 39: expected a result column (f, count), found 'sum#x'"));
  }

  private static Comparison where(String condition) throws QueryException {
    List<Condition> w = QueryParser.parse("SELECT count() WHERE " + condition).where();
    assertThat(w).hasSize(1);
    return w.get(0).comparison();
  }
}
