package dev.profold.collector.query.online;

import static dev.profold.collector.query.online.SnapshotFixtures.LABELS;
import static dev.profold.collector.query.online.SnapshotFixtures.S;
import static dev.profold.collector.query.online.SnapshotFixtures.T0;
import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.query.QueryEvaluator;
import dev.profold.collector.query.QueryResult;
import dev.profold.reduce.Aggregate;
import dev.profold.sinks.snapshot.IntervalSnapshot;
import dev.profold.sinks.snapshot.SchemeSnapshot;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import dev.profold.sinks.snapshot.StateSnapshot;
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
 * Exactness: a query over the records built from interval states gives the same rows as the same
 * query over the raw values those states summarise, for every operator that works on states (count,
 * sum, min, max, avg, variance, stddev, histogram, quantile, percent_total). Values are dyadic
 * (multiples of 1/8, |v| below 2^13), so no floating-point sum rounds and equality is exact.
 */
class SnapshotRecordsExactnessTest {
  private static final String QUERY =
      "SELECT service, path, count(), sum(time), min(time), max(time), avg(time),"
          + " variance(time), stddev(time), quantile(time, 0.5), quantile(time, 0.99),"
          + " histogram(time), percent_total(time)"
          + " GROUP BY service, path ORDER BY service, path";

  /** One raw value: which interval, which series, the value. */
  record Value(int interval, String service, String path, double value) {}

  @Provide
  Arbitrary<List<Value>> values() {
    Arbitrary<Double> v =
        Arbitraries.integers().between(-65_536, 65_536).map(k -> k / 8.0).injectDuplicates(0.2);
    return Combinators.combine(
            Arbitraries.integers().between(0, 5),
            Arbitraries.of("checkout", "search"),
            Arbitraries.of("main", "main/db"),
            v)
        .as(Value::new)
        .list()
        .ofMinSize(1)
        .ofMaxSize(300);
  }

  /** The retained intervals 0..5 (10 s each) holding the values' states, as the fold keeps them. */
  private static SchemeSnapshot scheme(List<Value> values) {
    List<IntervalSnapshot> retained = new ArrayList<>();
    for (int k = 0; k <= 5; k++) {
      Map<List<String>, Aggregate> states = new LinkedHashMap<>();
      for (Value x : values) {
        if (x.interval() == k) {
          states
              .computeIfAbsent(
                  List.of(x.service(), "i-1", x.path(), "compute"), key -> new Aggregate())
              .record(x.value());
        }
      }
      List<SeriesSnapshot> series = new ArrayList<>();
      states.forEach(
          (labels, a) ->
              series.add(new SeriesSnapshot(labels, SnapshotFixtures.TIME, StateSnapshot.of(a))));
      retained.add(new IntervalSnapshot(T0 + k * 10 * S, T0 + (k + 1) * 10 * S, series));
    }
    return SnapshotFixtures.scheme("region", QUERY, List.of(), retained);
  }

  /** The raw values of intervals {@code first..last} as one record each. */
  private static List<Map<String, Object>> raw(List<Value> values, int first, int last) {
    List<Map<String, Object>> records = new ArrayList<>();
    for (Value x : values) {
      if (x.interval() >= first && x.interval() <= last) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("service", x.service());
        r.put("instance", "i-1");
        r.put("path", x.path());
        r.put("kind", "compute");
        r.put("time", x.value());
        records.add(r);
      }
    }
    return records;
  }

  @Property(tries = 200)
  void mergedIntervalStatesGiveTheRowsOfTheRawValues(
      @ForAll("values") List<Value> values,
      @ForAll @IntRange(min = 0, max = 5) int first,
      @ForAll @IntRange(min = 0, max = 5) int length)
      throws Exception {
    int last = Math.min(5, first + length);
    TimeRange range = TimeRange.of(T0 + first * 10 * S, T0 + (last + 1) * 10 * S);
    SnapshotRecords.Selection selection = SnapshotRecords.select(scheme(values), range);

    QueryEvaluator q = QueryEvaluator.of(QUERY);
    QueryResult fromStates = q.evaluate(selection.records());
    QueryResult fromRaw = q.evaluate(raw(values, first, last));

    assertThat(selection.intervals()).hasSize(last - first + 1);
    assertThat(fromStates.columns()).isEqualTo(fromRaw.columns());
    assertThat(fromStates.rows()).isEqualTo(fromRaw.rows());
  }

  @Property(tries = 50)
  void theCumulativeStateGivesTheRowsOfAllRawValues(@ForAll("values") List<Value> values)
      throws Exception {
    List<List<SeriesSnapshot>> all = new ArrayList<>();
    for (IntervalSnapshot i : scheme(values).retained()) {
      all.add(i.series());
    }
    // A cumulative state is one merged state per series; build it from every interval's values.
    Map<List<String>, Aggregate> merged = new LinkedHashMap<>();
    for (Value x : values) {
      merged
          .computeIfAbsent(List.of(x.service(), "i-1", x.path(), "compute"), k -> new Aggregate())
          .record(x.value());
    }
    List<SeriesSnapshot> cumulative = new ArrayList<>();
    merged.forEach(
        (labels, a) ->
            cumulative.add(new SeriesSnapshot(labels, SnapshotFixtures.TIME, StateSnapshot.of(a))));
    SchemeSnapshot s =
        SnapshotFixtures.scheme("region", QUERY, cumulative, scheme(values).retained());

    QueryEvaluator q = QueryEvaluator.of(QUERY);
    List<Map<String, Object>> records = SnapshotRecords.select(s, TimeRange.cumulative()).records();
    assertThat(q.evaluate(records).rows()).isEqualTo(q.evaluate(raw(values, 0, 5)).rows());
    assertThat(q.evaluate(SnapshotRecords.records(LABELS, all)).rows())
        .isEqualTo(q.evaluate(raw(values, 0, 5)).rows());
  }
}
