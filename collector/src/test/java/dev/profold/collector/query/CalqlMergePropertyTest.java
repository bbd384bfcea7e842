package dev.profold.collector.query;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Laws of partial results: evaluating parts of the input and merging the partial states gives the
 * rows of evaluating the whole, whether the parts are merged in memory or passed on as
 * pre-aggregated records (the next stage). Values are integers, so sums are exact.
 */
class CalqlMergePropertyTest {

  private static final List<String> QUERIES =
      List.of(
          "SELECT f, rank, count(), sum(t), min(t), max(t), avg(t), variance(t), stddev(t),"
              + " scale(t, 0.5), scale_count(3), ratio(t, n, 2) GROUP BY f, rank",
          "SELECT f, percent_total(t), inclusive_sum(t), inclusive_min(t), inclusive_max(t),"
              + " inclusive_percent_total(t), inclusive_scale(t, 2), inclusive_ratio(t, n)"
              + " GROUP BY f",
          "SELECT rank, histogram(t), quantile(t, 0.5), quantile(t, 0.9), count() GROUP BY rank",
          "SELECT count(), sum(n), avg(n) WHERE NOT rank=1, t>3",
          "LET u = scale(t, 2) SELECT f, sum(u), max(u) WHERE f=b GROUP BY f");

  @Provide
  Arbitrary<List<Map<String, Object>>> records() {
    Arbitrary<List<String>> path = Arbitraries.of("a", "b", "c").list().ofMinSize(1).ofMaxSize(3);
    Arbitrary<Long> rank = Arbitraries.longs().between(0, 2);
    Arbitrary<Long> t = Arbitraries.longs().between(-1000, 100_000).injectNull(0.1);
    Arbitrary<Long> n = Arbitraries.longs().between(0, 50).injectNull(0.3);
    return Combinators.combine(path, rank, t, n)
        .as(
            (p, r, tv, nv) -> {
              Map<String, Object> m = new LinkedHashMap<>();
              m.put("f", List.copyOf(p));
              m.put("rank", r);
              if (tv != null) {
                m.put("t", tv);
              }
              if (nv != null) {
                m.put("n", nv);
              }
              return (Map<String, Object>) m;
            })
        .list()
        .ofMaxSize(60);
  }

  @Property(tries = 200)
  void mergingPartialsOfTwoPartsEqualsTheWhole(
      @ForAll("records") List<Map<String, Object>> records,
      @ForAll @IntRange(min = 0, max = 100) int cutPercent,
      @ForAll @IntRange(min = 0, max = 4) int queryIndex)
      throws Exception {
    QueryEvaluator q = QueryEvaluator.of(QUERIES.get(queryIndex));
    int cut = records.size() * cutPercent / 100;
    PartialResult left = q.newPartial();
    records.subList(0, cut).forEach(left::add);
    PartialResult right = q.newPartial();
    records.subList(cut, records.size()).forEach(right::add);

    QueryResult whole = q.evaluate(records);
    left.merge(right);
    QueryResult merged = q.finish(left);

    assertThat(merged.columns()).isEqualTo(whole.columns());
    assertThat(merged.rows()).containsExactlyInAnyOrderElementsOf(whole.rows());
  }

  @Property(tries = 200)
  void partialRecordsOfPartsFeedTheNextStage(
      @ForAll("records") List<Map<String, Object>> records,
      @ForAll @IntRange(min = 1, max = 4) int parts,
      @ForAll @IntRange(min = 0, max = 2) int queryIndex)
      throws Exception {
    QueryEvaluator q = QueryEvaluator.of(QUERIES.get(queryIndex));
    List<Map<String, Object>> stage1 = new ArrayList<>();
    for (int i = 0; i < parts; i++) {
      PartialResult p = q.newPartial();
      for (int j = i; j < records.size(); j += parts) {
        p.add(records.get(j));
      }
      StringWriter text = new StringWriter();
      JsonRecords.writeLines(p.toRecords(), new PrintWriter(text));
      stage1.addAll(CalqlFixtures.parse(text.toString()));
    }
    QueryResult whole = q.evaluate(records);
    QueryResult twoStage = q.evaluate(stage1);
    assertThat(twoStage.columns()).isEqualTo(whole.columns());
    assertThat(twoStage.rows()).containsExactlyInAnyOrderElementsOf(whole.rows());
  }

  @Property(tries = 100)
  void mergeIsAssociativeAndCommutative(
      @ForAll("records") List<Map<String, Object>> a,
      @ForAll("records") List<Map<String, Object>> b,
      @ForAll("records") List<Map<String, Object>> c,
      @ForAll @IntRange(min = 0, max = 2) int queryIndex)
      throws Exception {
    QueryEvaluator q = QueryEvaluator.of(QUERIES.get(queryIndex));
    // (a + b) + c
    PartialResult x = partial(q, a);
    x.merge(partial(q, b));
    x.merge(partial(q, c));
    // c + (b + a)
    PartialResult ba = partial(q, b);
    ba.merge(partial(q, a));
    PartialResult y = partial(q, c);
    y.merge(ba);
    assertThat(q.finish(y).rows()).containsExactlyInAnyOrderElementsOf(q.finish(x).rows());
    // the empty partial is the identity
    PartialResult z = partial(q, a);
    z.merge(q.newPartial());
    assertThat(q.finish(z)).isEqualTo(q.finish(partial(q, a)));
  }

  private static PartialResult partial(QueryEvaluator q, List<Map<String, Object>> records) {
    PartialResult p = q.newPartial();
    records.forEach(p::add);
    return p;
  }

  /**
   * A listing with ORDER BY and LIMIT holds only the rows it can show while it reads, in parts
   * merged in order or not, and shows what sorting every row and cutting shows, ties included.
   */
  @Property(tries = 200)
  void aBoundedListingShowsWhatSortingEveryRowShows(
      @ForAll("records") List<Map<String, Object>> input,
      @ForAll @IntRange(min = 0, max = 8) int limit,
      @ForAll @IntRange(min = 0, max = 60) int cut)
      throws Exception {
    for (String order : List.of("rank DESC", "t", "n DESC, rank", "f")) {
      QueryEvaluator bounded =
          QueryEvaluator.of("SELECT * WHERE rank ORDER BY " + order + " LIMIT " + limit);
      QueryEvaluator unbounded = QueryEvaluator.of("SELECT * WHERE rank ORDER BY " + order);
      int k = Math.min(cut, input.size());
      PartialResult first = bounded.newPartial();
      input.subList(0, k).forEach(first::add);
      PartialResult second = bounded.newPartial();
      input.subList(k, input.size()).forEach(second::add);
      first.merge(second);
      PartialResult all = unbounded.newPartial();
      input.forEach(all::add);

      assertThat(first.size()).isLessThanOrEqualTo(limit);
      List<Map<String, Object>> expected = unbounded.finish(all).rows();
      assertThat(bounded.finish(first).rows())
          .as(order)
          .isEqualTo(expected.subList(0, Math.min(limit, expected.size())));
    }
  }
}
