package dev.profold.collector.query.online;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The {@code Profold-Intervals} header: touching intervals are one run, so it stays short. */
class IntervalsHeaderTest {
  @Test
  void touchingIntervalsAreOneRunAndAGapStartsAnother() {
    List<Interval> read =
        List.of(
            new Interval(10, 20), new Interval(20, 30), new Interval(30, 40), new Interval(50, 60));
    assertThat(QueryHttpHandler.intervals(false, read)).isEqualTo("10-40,50-60");
    assertThat(QueryHttpHandler.intervals(false, List.of(new Interval(10, 20)))).isEqualTo("10-20");
    assertThat(QueryHttpHandler.intervals(false, List.of())).isEmpty();
    assertThat(QueryHttpHandler.intervals(true, List.of())).isEqualTo("cumulative");
  }

  @Test
  void aDayOfRetainedIntervalsFitsInAShortHeader() {
    long s = 1_000_000_000L;
    long t0 = 1_704_067_200L * s;
    List<Interval> day = new ArrayList<>();
    for (int k = 0; k < 360; k++) {
      day.add(new Interval(t0 + k * 240 * s, t0 + (k + 1) * 240 * s));
    }
    String h = QueryHttpHandler.intervals(false, day);
    assertThat(h).isEqualTo(t0 + "-" + (t0 + 360 * 240 * s));
    assertThat(h.length()).isLessThan(64); // was 360 pairs, about 14 KB
  }
}
