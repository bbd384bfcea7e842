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
 * The recording fast path ({@link ExpHistogram#tableIndex} and {@link ExpHistogram#record(double)})
 * against the general {@link ExpHistogram#indexOf} and {@link ExpHistogram#record(double, long)}:
 * the same bucket for every value, the same histogram for every sequence.
 */
class ExpHistogramTableIndexTest {

  /** Positive normal finite doubles from their bits: every exponent, any mantissa. */
  @Provide
  Arbitrary<Double> normals() {
    Arbitrary<Long> exponent = Arbitraries.longs().between(1, 0x7FE);
    Arbitrary<Long> mantissa =
        Arbitraries.oneOf(
            Arbitraries.longs().between(0, 0x000FFFFFFFFFFFFFL),
            Arbitraries.of(0L, 1L, 0x000FFFFFFFFFFFFFL));
    return exponent.flatMap(e -> mantissa.map(m -> Double.longBitsToDouble((e << 52) | m)));
  }

  @Property(tries = 5000)
  void tableIndexEqualsIndexOfOverAllNormals(
      @ForAll("normals") double v, @ForAll @IntRange(min = 1, max = 8) int scale) {
    assertThat(ExpHistogram.tableIndex(Double.doubleToRawLongBits(v), scale))
        .isEqualTo(ExpHistogram.indexOf(v, scale));
  }

  /**
   * Every bucket boundary at the table scale (so every boundary of scales 1..8), every table cell
   * edge, and the neighbouring doubles on both sides, in every octave of the normal range.
   */
  @Example
  void tableIndexEqualsIndexOfAtEveryBoundaryAndCellEdge() {
    double[] withinOctave = new double[256 + 1024];
    for (int k = 0; k < 256; k++) {
      withinOctave[k] = ExpHistogram.lowerBoundary(k, ExpHistogram.TABLE_SCALE);
    }
    for (int c = 0; c < 1024; c++) {
      withinOctave[256 + c] = 1.0 + c / 1024.0;
    }
    long checked = 0;
    for (int exponent = Double.MIN_EXPONENT; exponent <= Double.MAX_EXPONENT; exponent += 1) {
      for (double m : withinOctave) {
        double b = Math.scalb(m, exponent);
        for (double v : new double[] {Math.nextDown(b), b, Math.nextUp(b)}) {
          if (v < Double.MIN_NORMAL || Double.isInfinite(v)) {
            continue;
          }
          long bits = Double.doubleToRawLongBits(v);
          for (int scale = 1; scale <= ExpHistogram.TABLE_SCALE; scale++) {
            int expected = ExpHistogram.indexOf(v, scale);
            if (ExpHistogram.tableIndex(bits, scale) != expected) {
              assertThat(ExpHistogram.tableIndex(bits, scale))
                  .as("value %s (bits %x) at scale %d", v, bits, scale)
                  .isEqualTo(expected);
            }
            checked++;
          }
        }
      }
    }
    assertThat(checked).isGreaterThan(2046L * 1280 * 3 * 8 - 100_000);
  }

  @Provide
  Arbitrary<List<Double>> mixed() {
    Arbitrary<Double> durations =
        Arbitraries.longs().between(0, 10_000_000_000L).map(n -> n * 1e-9);
    Arbitrary<Double> special =
        Arbitraries.of(
            0.0,
            -0.0,
            Double.MIN_VALUE,
            Double.MIN_NORMAL,
            Math.nextDown(Double.MIN_NORMAL),
            Double.MAX_VALUE,
            Double.NaN,
            Double.POSITIVE_INFINITY,
            Double.NEGATIVE_INFINITY,
            1.0,
            2.0,
            -1.5);
    return Arbitraries.oneOf(durations, normals(), normals().map(d -> -d), special)
        .list()
        .ofMaxSize(300);
  }

  /**
   * Recording one value at a time through the fast path gives exactly the histogram the general
   * path gives, through downscaling, for both start scales and small bucket limits.
   */
  @Property(tries = 500)
  void recordEqualsTheGeneralPath(
      @ForAll("mixed") List<Double> xs,
      @ForAll @IntRange(min = 2, max = 200) int maxBuckets,
      @ForAll @IntRange(min = -2, max = 20) int startScale) {
    ExpHistogram fast = new ExpHistogram(maxBuckets, startScale);
    ExpHistogram general = new ExpHistogram(maxBuckets, startScale);
    for (double x : xs) {
      fast.record(x);
      general.record(x, 1);
    }
    assertThat(fast).isEqualTo(general);
    assertThat(fast.totalCount()).isEqualTo(general.totalCount());
  }

  /**
   * Found by {@link #recordEqualsTheGeneralPath}: at scale 11 with 6 buckets, a value near the
   * smallest normal double then one 64 times larger needed a downscale after which the index,
   * computed anew, still did not fit, and the bucket array overran.
   */
  @org.junit.jupiter.api.Test
  void aDownscaleThatStillDoesNotFitDownscalesAgain() {
    ExpHistogram h = new ExpHistogram(6, 11);
    h.record(2.225073858507389E-308);
    h.record(-1.5);
    h.record(1.4240472694446165E-306);
    assertThat(h.totalCount()).isEqualTo(3);
  }
}
