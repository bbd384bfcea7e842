package dev.profold.collector.query.online;

import static dev.profold.collector.query.online.SnapshotFixtures.LABELS;
import static dev.profold.collector.query.online.SnapshotFixtures.S;
import static dev.profold.collector.query.online.SnapshotFixtures.T0;
import static dev.profold.collector.query.online.SnapshotFixtures.interval;
import static dev.profold.collector.query.online.SnapshotFixtures.scheme;
import static dev.profold.collector.query.online.SnapshotFixtures.series;
import static dev.profold.collector.query.online.SnapshotFixtures.time;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.collector.query.PreAggregated;
import dev.profold.collector.query.QueryEvaluator;
import dev.profold.collector.query.QueryResult;
import dev.profold.reduce.Aggregate;
import dev.profold.sinks.snapshot.IntervalSnapshot;
import dev.profold.sinks.snapshot.Measure;
import dev.profold.sinks.snapshot.SchemeSnapshot;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import dev.profold.sinks.snapshot.StateSnapshot;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Records built from snapshots: shape, which intervals a range reads, and histogram handling. */
class SnapshotRecordsTest {
  private static final Measure BYTES = new Measure("bytes", "bytes");

  private static QueryResult eval(String query, List<Map<String, Object>> records)
      throws Exception {
    return QueryEvaluator.of(query).evaluate(records);
  }

  @Test
  void oneRecordPerLabelTupleWithLabelsCountAndAStatePerMeasure() {
    List<Map<String, Object>> records =
        SnapshotRecords.records(
            LABELS,
            List.of(
                List.of(
                    time("checkout", "main", 0.25, 0.5, 1.0),
                    time("search", "main", 2.0),
                    series("checkout", "main", BYTES, 100, 200))));

    assertThat(records).hasSize(2);
    Map<String, Object> checkout = records.get(0);
    assertThat(checkout.keySet())
        .containsExactly("service", "instance", "path", "kind", "count", "time", "bytes");
    assertThat(checkout)
        .containsEntry("service", "checkout")
        .containsEntry("instance", "i-1")
        .containsEntry("path", "main")
        .containsEntry("kind", "compute")
        .containsEntry("count", 3L); // the largest count among the measurements
    PreAggregated time = (PreAggregated) checkout.get("time");
    assertThat(time.count()).isEqualTo(3);
    assertThat(time.sum()).isEqualTo(1.75);
    assertThat(time.min()).isEqualTo(0.25);
    assertThat(time.max()).isEqualTo(1.0);
    assertThat(time.sumOfSquares()).isEqualTo(0.0625 + 0.25 + 1.0);
    assertThat(time.hasHistogram()).isTrue();
    assertThat(time.integral()).isFalse();
    assertThat(((PreAggregated) checkout.get("bytes")).sum()).isEqualTo(300.0);
    assertThat(records.get(1)).containsEntry("service", "search").containsEntry("count", 1L);
  }

  @Test
  void statesOfOneTupleAcrossPartsMergeAndEmptyStatesAddNothing() {
    SeriesSnapshot empty =
        new SeriesSnapshot(
            List.of("idle", "i-1", "main", "compute"),
            SnapshotFixtures.TIME,
            StateSnapshot.of(new Aggregate()));
    List<Map<String, Object>> records =
        SnapshotRecords.records(
            LABELS,
            List.of(
                List.of(time("checkout", "main", 0.25), empty),
                List.of(time("checkout", "main", 0.5, 0.75))));

    assertThat(records).hasSize(1);
    PreAggregated time = (PreAggregated) records.get(0).get("time");
    assertThat(time.count()).isEqualTo(3);
    assertThat(time.sum()).isEqualTo(1.5);
    assertThat(records.get(0)).containsEntry("count", 3L);
  }

  @Test
  void pathLabelsBecomeNestedPathsAndAnEmptyPathIsNoAttribute() {
    List<Map<String, Object>> records =
        SnapshotRecords.records(
            LABELS,
            List.of("path"),
            List.of(List.of(time("checkout", "main/db.query", 0.5), time("checkout", "", 1.0))));
    assertThat(records).hasSize(2);
    assertThat(records.get(0).get("path")).isEqualTo(List.of("main", "db.query"));
    assertThat(records.get(0).get("service")).isEqualTo("checkout");
    assertThat(records.get(1)).doesNotContainKey("path");
  }

  @Test
  void aSeriesWithTheWrongNumberOfLabelValuesIsRefused() {
    SeriesSnapshot bad =
        new SeriesSnapshot(List.of("x"), SnapshotFixtures.TIME, SnapshotFixtures.state(1));
    assertThatThrownBy(() -> SnapshotRecords.records(LABELS, List.of(List.of(bad))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1 label values for the 4 labels");
  }

  @Test
  void aMeasurementNamedCountTakesPrecedenceOverTheRecordCount() {
    List<Map<String, Object>> records =
        SnapshotRecords.records(
            LABELS, List.of(List.of(series("a", "main", new Measure("count", ""), 5, 7))));
    assertThat(records.get(0).get("count")).isInstanceOf(PreAggregated.class);
  }

  /** Intervals 0..2 of 10 s from T0, with time values 1, 2 and 4 of service "a". */
  private static SchemeSnapshot threeIntervals() {
    return scheme(
        "region",
        "SELECT sum(time) GROUP BY service",
        List.of(time("a", "main", 1, 2, 4, 8)),
        List.of(
            interval(0, time("a", "main", 1)),
            interval(1, time("a", "main", 2)),
            interval(2, time("a", "main", 4))));
  }

  private static double sumOver(TimeRange range) throws Exception {
    SnapshotRecords.Selection s = SnapshotRecords.select(threeIntervals(), range);
    QueryResult r = eval("SELECT sum(time)", s.records());
    Object sum = r.rows().isEmpty() ? null : r.rows().get(0).get("sum#time");
    return sum == null ? 0 : ((Number) sum).doubleValue();
  }

  private static List<Interval> covered(TimeRange range) {
    return SnapshotRecords.select(threeIntervals(), range).intervals();
  }

  private static Interval iv(int k) {
    return new Interval(T0 + k * 10 * S, T0 + (k + 1) * 10 * S);
  }

  @Test
  void withoutBoundsTheCumulativeStateIsRead() throws Exception {
    assertThat(covered(TimeRange.cumulative())).isEmpty();
    assertThat(sumOver(TimeRange.cumulative())).isEqualTo(15.0);
  }

  @Test
  void aRangeReadsExactlyTheRetainedIntervalsLyingWhollyInsideIt() throws Exception {
    // Aligned bounds: [10 s, 30 s) holds intervals 1 and 2.
    TimeRange aligned = TimeRange.of(T0 + 10 * S, T0 + 30 * S);
    assertThat(covered(aligned)).containsExactly(iv(1), iv(2));
    assertThat(sumOver(aligned)).isEqualTo(6.0);

    // A start inside interval 0 leaves interval 0 out: partial overlaps are never read.
    TimeRange midStart = TimeRange.of(T0 + 5 * S, T0 + 30 * S);
    assertThat(covered(midStart)).containsExactly(iv(1), iv(2));

    // An end inside interval 2 leaves interval 2 out.
    TimeRange midEnd = TimeRange.of(T0, T0 + 25 * S);
    assertThat(covered(midEnd)).containsExactly(iv(0), iv(1));
    assertThat(sumOver(midEnd)).isEqualTo(3.0);

    // One nanosecond short on either side drops the interval.
    assertThat(covered(TimeRange.of(T0 + 10 * S + 1, T0 + 30 * S))).containsExactly(iv(2));
    assertThat(covered(TimeRange.of(T0 + 10 * S, T0 + 30 * S - 1))).containsExactly(iv(1));

    // A range inside one interval reads nothing.
    TimeRange inside = TimeRange.of(T0 + 12 * S, T0 + 18 * S);
    assertThat(covered(inside)).isEmpty();
    assertThat(SnapshotRecords.select(threeIntervals(), inside).records()).isEmpty();
  }

  @Test
  void anAbsentBoundIsOpen() throws Exception {
    assertThat(covered(TimeRange.of(T0 + 20 * S, null))).containsExactly(iv(2));
    assertThat(covered(TimeRange.of(null, T0 + 20 * S))).containsExactly(iv(0), iv(1));
    assertThat(sumOver(TimeRange.of(null, T0 + 20 * S))).isEqualTo(3.0);
    // Both bounds open but given as a range: all retained intervals, not the cumulative state.
    assertThat(sumOver(TimeRange.of(Long.MIN_VALUE, null))).isEqualTo(7.0);
  }

  @Test
  void anEmptyRangeIsRefused() {
    assertThatThrownBy(() -> TimeRange.of(T0, T0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("the range is empty")
        .hasMessageContaining("2024-01-01T00:00:00Z");
  }

  @Test
  void aHistogramIsKeptOnlyWhenItAccountsForEveryValue() throws Exception {
    Aggregate momentsOnly = new Aggregate();
    momentsOnly.mergeMoments(2, 3.0, 1.0, 2.0, 5.0); // a state sent without a histogram
    SeriesSnapshot withoutHistogram =
        new SeriesSnapshot(
            List.of("a", "i-1", "main", "compute"),
            SnapshotFixtures.TIME,
            StateSnapshot.of(momentsOnly));
    List<Map<String, Object>> records =
        SnapshotRecords.records(
            LABELS, List.of(List.of(time("a", "main", 4, 8)), List.of(withoutHistogram)));

    PreAggregated time = (PreAggregated) records.get(0).get("time");
    assertThat(time.count()).isEqualTo(4);
    assertThat(time.hasHistogram()).isFalse();
    QueryResult r = eval("SELECT avg(time), quantile(time, 0.5), max(time)", records);
    assertThat(r.rows().get(0))
        .containsEntry("avg#time", 15.0 / 4)
        .containsEntry("max#time", 8.0)
        .doesNotContainKey("p50#time"); // empty rather than a quantile of half the values
  }

  @Test
  void integerValuedStatesPrintAsFloatingPoint() throws Exception {
    List<Map<String, Object>> records =
        SnapshotRecords.records(LABELS, List.of(List.of(time("a", "main", 1, 2))));
    QueryResult r = eval("SELECT count(), sum(time)", records);
    assertThat(r.rows().get(0)).containsEntry("count", 2L).containsEntry("sum#time", 3.0);
  }

  @Test
  void recordsKeepTheOrderInWhichTuplesFirstAppear() {
    List<IntervalSnapshot> parts = new ArrayList<>();
    parts.add(interval(0, time("b", "main", 1), time("a", "main", 1)));
    parts.add(interval(1, time("c", "main", 1), time("a", "main", 1)));
    List<List<SeriesSnapshot>> series = new ArrayList<>();
    for (IntervalSnapshot i : parts) {
      series.add(i.series());
    }
    List<String> services = new ArrayList<>();
    for (Map<String, Object> r : SnapshotRecords.records(LABELS, series)) {
      services.add((String) r.get("service"));
    }
    assertThat(services).containsExactly("b", "a", "c");
  }
}
