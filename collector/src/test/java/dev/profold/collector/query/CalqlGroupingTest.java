package dev.profold.collector.query;

import static dev.profold.collector.query.CalqlFixtures.golden;
import static dev.profold.collector.query.CalqlFixtures.rec;
import static dev.profold.collector.query.CalqlFixtures.run;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Grouping keys, column selection, ORDER BY and LIMIT. */
class CalqlGroupingTest {

  @Test
  void recordsWithoutAKeyAttributeFormTheirOwnGroup() {
    QueryResult r = run("SELECT loop.iteration, count() GROUP BY loop.iteration", golden());
    assertThat(r.rows())
        .containsExactly(
            Map.of("loop.iteration", 0L, "count", 3L),
            Map.of("loop.iteration", 3L, "count", 3L),
            Map.of("count", 1L),
            Map.of("loop.iteration", 4L, "count", 1L));
  }

  @Test
  void withoutGroupBySelectedAttributesAreTheKey() {
    QueryResult implicit = run("SELECT mpi.rank, count()", golden());
    QueryResult explicit = run("SELECT mpi.rank, count() GROUP BY mpi.rank", golden());
    assertThat(implicit).isEqualTo(explicit);
  }

  @Test
  void operatorsWithoutKeyMakeOneGroup() {
    assertThat(run("SELECT count(), sum(time.duration)", golden()).rows())
        .containsExactly(Map.of("count", 8L, "sum#time.duration", 920L));
  }

  @Test
  void groupByWithoutOperatorsCounts() {
    QueryResult r = run("GROUP BY mpi.rank", golden());
    assertThat(r.columns()).containsExactly("mpi.rank", "count");
    QueryResult selected = run("SELECT mpi.rank GROUP BY mpi.rank", golden());
    assertThat(selected.columns()).containsExactly("mpi.rank");
    assertThat(selected.rows()).hasSize(3);
  }

  @Test
  void selectStarWithOperatorsKeysOnEveryNonNumericAttribute() {
    List<Map<String, Object>> in =
        List.of(
            rec("svc", "a", "kind", "wait", "t", 1L),
            rec("svc", "a", "kind", "wait", "t", 2L),
            rec("svc", "a", "t", 4L));
    QueryResult r = run("SELECT *, sum(t)", in);
    assertThat(r.columns()).containsExactly("kind", "svc", "sum#t");
    assertThat(r.rows())
        .containsExactly(
            Map.of("kind", "wait", "svc", "a", "sum#t", 3L), Map.of("svc", "a", "sum#t", 4L));
  }

  @Test
  void propNestedGroupsByEveryPathAttribute() {
    QueryResult r = run("AGGREGATE count GROUP BY prop:nested", golden());
    assertThat(r.columns()).containsExactly("function", "count");
    assertThat(r.rows()).hasSize(3);
  }

  @Test
  void selectWithoutOperatorsListsRecords() {
    QueryResult r = run("SELECT function, time.duration WHERE mpi.rank=1", golden());
    assertThat(r.columns()).containsExactly("function", "time.duration");
    assertThat(r.rows())
        .containsExactly(
            Map.of("function", List.of("main", "foo"), "time.duration", 251L),
            Map.of("function", List.of("main", "foo")));
  }

  @Test
  void selectStarWithoutOperatorsListsEveryAttribute() {
    QueryResult r = run("SELECT * WHERE NOT loop.iteration", golden());
    assertThat(r.columns()).containsExactly("function", "mpi.rank", "time.duration");
  }

  @Test
  void aliasesRenameColumnsAndCanBeSortedOn() {
    QueryResult r =
        run(
            "SELECT mpi.rank AS rank, sum(time.duration) AS total GROUP BY mpi.rank"
                + " ORDER BY total DESC",
            golden());
    assertThat(r.columns()).containsExactly("rank", "total");
    assertThat(r.rows()).extracting(row -> row.get("rank")).containsExactly(0L, 2L, 1L);
  }

  @Test
  void orderByOperatorColumnsAscendingAndDescendingThenLimit() {
    QueryResult r =
        run(
            "SELECT function, mpi.rank, sum(time.duration) GROUP BY function, mpi.rank"
                + " ORDER BY sum#time.duration DESC, mpi.rank LIMIT 4",
            golden());
    assertThat(r.rows())
        .extracting(row -> row.get("sum#time.duration"), row -> row.get("mpi.rank"))
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple(251L, 0L),
            org.assertj.core.groups.Tuple.tuple(251L, 1L),
            org.assertj.core.groups.Tuple.tuple(251L, 2L),
            org.assertj.core.groups.Tuple.tuple(100L, 0L));
  }

  @Test
  void rowsTiedOnOrderByAreCutByTheirKeysWhateverOrderTheyArrivedIn() {
    // The collector's rows arrive in group-id order, and ids are reused: LIMIT among tied rows
    // gave different rows from one call to the next.
    List<Map<String, Object>> forward =
        List.of(rec("f", "c", "n", 1L), rec("f", "a", "n", 1L), rec("f", "b", "n", 1L));
    List<Map<String, Object>> backward = new java.util.ArrayList<>(forward);
    java.util.Collections.reverse(backward);
    String q = "SELECT f, sum(n) GROUP BY f ORDER BY sum#n DESC LIMIT 2";
    assertThat(run(q, forward).rows()).extracting(row -> row.get("f")).containsExactly("a", "b");
    assertThat(run(q, backward).rows()).extracting(row -> row.get("f")).containsExactly("a", "b");
  }

  @Test
  void missingValuesSortLastInBothDirections() {
    QueryResult asc = run("SELECT function, loop.iteration ORDER BY loop.iteration", golden());
    QueryResult desc =
        run("SELECT function, loop.iteration ORDER BY loop.iteration DESC", golden());
    assertThat(asc.rows().get(asc.rows().size() - 1)).doesNotContainKey("loop.iteration");
    assertThat(desc.rows().get(desc.rows().size() - 1)).doesNotContainKey("loop.iteration");
    assertThat(desc.rows().get(0)).containsEntry("loop.iteration", 4L);
  }

  @Test
  void pathsSortElementByElement() {
    QueryResult r =
        run("SELECT function, count() GROUP BY function ORDER BY function DESC", golden());
    assertThat(r.rows())
        .extracting(row -> Values.text(row.get("function")))
        .containsExactly("main/foo/bar", "main/foo", "main");
  }

  @Test
  void aListingWithALimitAndNoOrderByHoldsOnlyItsFirstRows() throws Exception {
    QueryEvaluator ev = QueryEvaluator.of("SELECT * WHERE n LIMIT 2");
    PartialResult first = ev.newPartial();
    for (int i = 0; i < 10_000; i++) {
      first.add(Map.of("n", (long) i, i == 5 ? "extra" : "other", "x"));
    }
    PartialResult second = ev.newPartial();
    second.add(Map.of("n", -1L));
    first.merge(second);

    // Before, all 10,000 rows were held until LIMIT cut them at the end.
    assertThat(first.size()).isEqualTo(2);
    QueryResult r = ev.finish(first);
    assertThat(r.rows()).extracting(row -> row.get("n")).containsExactly(0L, 1L);
    assertThat(r.columns()).as("the rows shown name the columns").doesNotContain("extra");
    // With ORDER BY, the first two in its order so far.
    QueryEvaluator sorted = QueryEvaluator.of("SELECT * WHERE n ORDER BY n DESC LIMIT 2");
    PartialResult top = sorted.newPartial();
    for (int i = 0; i < 100; i++) {
      top.add(Map.of("n", (long) i));
    }
    assertThat(top.size()).isEqualTo(2);
    assertThat(sorted.finish(top).rows()).extracting(row -> row.get("n")).containsExactly(99L, 98L);
    // Unless an alias could meet an attribute of SELECT *: which column sorts depends on the data.
    PartialResult aliased =
        QueryEvaluator.of("SELECT *, n AS m WHERE n ORDER BY m DESC LIMIT 2").newPartial();
    for (int i = 0; i < 100; i++) {
      aliased.add(Map.of("n", (long) i));
    }
    assertThat(aliased.size()).isEqualTo(100);
  }

  @Test
  void limitZeroGivesNoRows() {
    assertThat(run("SELECT count() GROUP BY function LIMIT 0", golden()).rows()).isEmpty();
  }

  @Test
  void apiValuesAreNormalised() {
    List<Map<String, Object>> in =
        List.of(rec("k", 1, "x", 2), rec("k", 1L, "x", 3.0f), rec("p", List.of("a", 1)));
    QueryResult r = run("SELECT k, sum(x) GROUP BY k", in);
    assertThat(r.rows()).first().isEqualTo(Map.of("k", 1L, "sum#x", 5.0));
    QueryResult p = run("SELECT p, count() GROUP BY p", in);
    assertThat(p.rows()).contains(Map.of("p", List.of("a", "1"), "count", 1L));
  }
}
