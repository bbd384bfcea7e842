package dev.profold.reduce;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Durations recorded from nanoseconds ({@link NanoBuckets}, {@link ExpHistogram#recordNanos},
 * {@link Aggregate#recordNanos}) against the same durations recorded as {@code nanos * 1e-9}: the
 * same bucket for every duration, the same histogram and aggregate for every sequence.
 */
class NanoBucketsTest {

  private static int viaSeconds(long nanos) {
    return ExpHistogram.tableIndex(
        Double.doubleToRawLongBits(nanos * 1e-9), ExpHistogram.TABLE_SCALE);
  }

  /** Durations over the whole indexed range: every bit length, any low bits. */
  @Provide
  Arbitrary<Long> indexed() {
    Arbitrary<Long> anyLength =
        Arbitraries.integers()
            .between(0, 52)
            .flatMap(
                k -> Arbitraries.longs().between(0, (1L << k) - 1).map(low -> (1L << k) | low));
    return Arbitraries.oneOf(
        anyLength,
        Arbitraries.longs().between(1, 10_000_000_000L),
        Arbitraries.of(1L, 2L, 3L, 1_000L, 1_000_000_000L, NanoBuckets.LIMIT - 1));
  }

  @Property(tries = 20_000)
  void theIndexIsTheIndexOfTheDurationInSeconds(@ForAll("indexed") long nanos) {
    assertThat(NanoBuckets.index(nanos)).isEqualTo(viaSeconds(nanos));
  }

  /**
   * Every bucket boundary at the table scale in seconds from 1 ns up to the table's limit, and
   * every table cell edge in every octave of nanoseconds the table covers, with the whole
   * nanoseconds next to each on both sides: where the index steps, it steps at the same duration as
   * the computation in seconds.
   */
  @Example
  void theIndexStepsWhereTheIndexInSecondsSteps() {
    long checked = 0;
    for (int e = -31; e <= 23; e++) { // 2^-31 s is below 1 ns, 2^23 s above the limit
      for (int i = 0; i < 256; i++) {
        double seconds = Math.scalb(ExpHistogram.lowerBoundary(i, ExpHistogram.TABLE_SCALE), e);
        checked += checkAround((long) (seconds * 1e9));
      }
    }
    for (int k = 0; k < 53; k++) {
      for (int c = 0; c < 1024; c++) {
        checked += checkAround((long) Math.scalb(1.0 + c / 1024.0, k));
      }
    }
    assertThat(checked).isGreaterThan(330_000L); // some near 1 ns fall outside the table
  }

  /** Checks the nanoseconds within 2 of {@code n} that the table covers; returns how many. */
  private static int checkAround(long n) {
    int checked = 0;
    for (long nanos = n - 2; nanos <= n + 2; nanos++) {
      if (nanos <= 0 || nanos >= NanoBuckets.LIMIT) {
        continue;
      }
      if (NanoBuckets.index(nanos) != viaSeconds(nanos)) {
        assertThat(NanoBuckets.index(nanos)).as("%d ns", nanos).isEqualTo(viaSeconds(nanos));
      }
      checked++;
    }
    return checked;
  }

  @Provide
  Arbitrary<List<Long>> durations() {
    Arbitrary<Long> special =
        Arbitraries.of(
            0L, -1L, -1_000L, NanoBuckets.LIMIT - 1, NanoBuckets.LIMIT, Long.MAX_VALUE, 1L << 60);
    Arbitrary<Long> near = Arbitraries.longs().between(900, 1_100); // few buckets: no downscale
    return Arbitraries.oneOf(indexed(), indexed(), near, near, special).list().ofMaxSize(300);
  }

  /**
   * Recording nanoseconds gives exactly the histogram and the aggregate that recording their
   * seconds gives, through downscaling, for every start scale and small bucket limits, zero and
   * negative durations and durations beyond the table included.
   */
  @Property(tries = 500)
  void recordingNanosIsRecordingTheirSeconds(
      @ForAll("durations") List<Long> durations,
      @ForAll @IntRange(min = 2, max = 200) int maxBuckets,
      @ForAll @IntRange(min = -2, max = 20) int startScale) {
    ExpHistogram fromNanos = new ExpHistogram(maxBuckets, startScale);
    ExpHistogram fromSeconds = new ExpHistogram(maxBuckets, startScale);
    Aggregate aggregateFromNanos = new Aggregate(new ExpHistogram(maxBuckets, startScale));
    Aggregate aggregateFromSeconds = new Aggregate(new ExpHistogram(maxBuckets, startScale));
    for (long nanos : durations) {
      fromNanos.recordNanos(nanos);
      fromSeconds.record(nanos * 1e-9);
      aggregateFromNanos.recordNanos(nanos);
      aggregateFromSeconds.record(nanos * 1e-9);
    }
    assertThat(fromNanos).isEqualTo(fromSeconds);
    assertThat(fromNanos.totalCount()).isEqualTo(durations.size());
    assertThat(aggregateFromNanos).isEqualTo(aggregateFromSeconds);
  }
}
