package dev.profold.collector.query;

import static org.assertj.core.api.Assertions.assertThat;

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
 * A partial result finds a record's group without building its {@link GroupKey} when the key
 * attributes are fixed. The groups, their order and their record counts must be those of grouping
 * by {@link QueryEvaluator#keyOf} directly, whatever the value types: integers of any width
 * (normalised to Long), floats, booleans, immutable and mutable paths, paths with non-text
 * elements, missing attributes, nulls and pre-aggregated states (which do not key).
 */
class GroupLookupPropertyTest {

  private static final List<String> QUERIES =
      List.of(
          "SELECT a, b, count() GROUP BY a, b",
          "SELECT a, count() GROUP BY a",
          "SELECT count()",
          "SELECT b, a, sum(t) GROUP BY b, a, c",
          "SELECT count() GROUP BY prop:nested",
          "SELECT *, count()");

  private static final PreAggregated STATE = PreAggregated.of(2, 3, 1, 2, 5, null, true);

  @Provide
  Arbitrary<List<Map<String, Object>>> records() {
    Arbitrary<Object> value =
        Arbitraries.of(
                "x",
                "y",
                "1",
                1,
                1L,
                (short) 1,
                2L,
                1.0,
                1.0f,
                -0.0,
                0.0,
                true,
                List.of("p", "q"),
                List.of("p"),
                List.of(1, "q"),
                List.of("1", "q"),
                "null",
                "state",
                "mutable")
            .map(
                v ->
                    switch (String.valueOf(v)) {
                      case "null" -> NULL;
                      case "state" -> STATE;
                      case "mutable" -> new ArrayList<>(List.of("p", "q"));
                      default -> v;
                    });
    Arbitrary<Object> maybe = value.injectNull(0.15);
    return Combinators.combine(maybe, maybe, maybe, Arbitraries.longs().between(0, 9))
        .as(
            (a, b, c, t) -> {
              Map<String, Object> m = new LinkedHashMap<>();
              put(m, "a", a);
              put(m, "b", b);
              put(m, "c", c);
              m.put("t", t);
              return m;
            })
        .list()
        .ofMaxSize(80);
  }

  /** Stands for an explicit null value (as opposed to a missing attribute). */
  private static final Object NULL = new Object();

  private static void put(Map<String, Object> m, String k, Object v) {
    if (v == NULL) {
      m.put(k, null);
    } else if (v != null) {
      m.put(k, v);
    }
  }

  @Property(tries = 500)
  void groupsAreThoseOfTheGroupKey(
      @ForAll("records") List<Map<String, Object>> records,
      @ForAll @IntRange(min = 0, max = 5) int queryIndex)
      throws Exception {
    QueryEvaluator q = QueryEvaluator.of(QUERIES.get(queryIndex));
    Map<GroupKey, Long> expected = new LinkedHashMap<>();
    PartialResult p = q.newPartial();
    for (Map<String, Object> r : records) {
      expected.merge(q.keyOf(r), 1L, Long::sum);
      p.add(r);
    }
    Map<GroupKey, Long> actual = new LinkedHashMap<>();
    for (Map<String, Object> r : p.toRecords()) {
      Map<String, Object> key = new LinkedHashMap<>(r);
      Object count = key.remove(CountState.COUNT);
      key.values().removeIf(v -> v instanceof PreAggregated);
      actual.put(new GroupKey(key), (Long) count);
    }
    assertThat(new ArrayList<>(actual.entrySet())).isEqualTo(new ArrayList<>(expected.entrySet()));
    assertThat(p.groups().keySet()).containsExactlyElementsOf(expected.keySet());
  }
}
