package dev.profold.reduce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/**
 * The edges of the histogram's index space: the lowest scale, the buckets of the extreme doubles,
 * merges that lower the scale by many steps, indices no double has, and counts at their limit.
 */
class ExpHistogramRangeTest {

  @Test
  void minAndMaxIndexAreTheBucketsOfTheSmallestAndLargestDouble() {
    for (int s = ExpHistogram.MIN_SCALE; s <= ExpHistogram.MAX_SCALE; s++) {
      assertThat(ExpHistogram.indexOf(Double.MIN_VALUE, s))
          .as("scale %d", s)
          .isEqualTo(ExpHistogram.minIndex(s));
      assertThat(ExpHistogram.indexOf(Double.MAX_VALUE, s))
          .as("scale %d", s)
          .isEqualTo(ExpHistogram.maxIndex(s));
      assertThat(ExpHistogram.lowerBoundary(ExpHistogram.maxIndex(s), s)).isFinite();
      assertThat(ExpHistogram.lowerBoundary(ExpHistogram.maxIndex(s) + 1, s)).isInfinite();
    }
    assertThat(ExpHistogram.minIndex(ExpHistogram.MIN_SCALE)).isEqualTo(-2);
    assertThat(ExpHistogram.maxIndex(ExpHistogram.MIN_SCALE)).isZero();
  }

  /** With two buckets a sign, the whole double range used to push the scale to -11. */
  @Test
  void theScaleNeverGoesBelowMinScale() {
    ExpHistogram h = new ExpHistogram(2, ExpHistogram.MAX_SCALE);
    for (double v : new double[] {Double.MIN_VALUE, 1.0, Double.MAX_VALUE, -Double.MIN_VALUE}) {
      h.record(v);
    }
    h.record(-Double.MAX_VALUE);
    assertThat(h.scale()).isEqualTo(ExpHistogram.MIN_SCALE);
    assertThat(h.positiveOffset()).isEqualTo(ExpHistogram.minIndex(ExpHistogram.MIN_SCALE));
    assertThat(h.positiveSize()).isEqualTo(3);
    assertThat(h.positiveCount(0)).isEqualTo(1); // MAX_VALUE: (1, 2^1024]
    assertThat(h.positiveCount(-1)).isEqualTo(1); // 1.0: (2^-1024, 1]
    assertThat(h.positiveCount(-2)).isEqualTo(1); // MIN_VALUE
    assertThat(h.negativeSize()).isEqualTo(3);
    assertThat(h.totalCount()).isEqualTo(5);
  }

  @Test
  void downscaleBelowMinScaleIsRefused() {
    ExpHistogram h = new ExpHistogram();
    h.record(3.0);
    ExpHistogram before = copy(h);
    assertThatThrownBy(() -> h.downscale(31))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("cannot lower scale 20 by 31: the lowest scale is -10");
    assertThat(h).isEqualTo(before);
    h.downscale(30);
    assertThat(h.scale()).isEqualTo(ExpHistogram.MIN_SCALE);
    assertThat(h.positiveCount(0)).isEqualTo(1);
  }

  /** From scale 20 to -10 in one merge: thirty steps, each index shifted by all of them. */
  @Test
  void mergeAcrossTheWholeScaleRangeIsExact() {
    double[] fine = {3.0, 3.0000001, -2.5};
    double[] coarse = {1e-300, 1e-5, 1e5, 7e200, -1e300};
    ExpHistogram h = new ExpHistogram(160, ExpHistogram.MAX_SCALE);
    ExpHistogram other = new ExpHistogram(160, ExpHistogram.MIN_SCALE);
    ExpHistogram union = new ExpHistogram(160, ExpHistogram.MIN_SCALE);
    for (double v : fine) {
      h.record(v);
      union.record(v);
    }
    for (double v : coarse) {
      other.record(v);
      union.record(v);
    }
    assertThat(h.scale()).isEqualTo(ExpHistogram.MAX_SCALE);
    h.merge(other);
    assertThat(h).isEqualTo(union);
    assertThat(h.scale()).isEqualTo(ExpHistogram.MIN_SCALE);
  }

  /**
   * The reviewer's input: a group histogram at scale 3 with buckets 0..150 and a run at scale -10
   * with index -2^26, which no double has. The merge lowered the scale by 32, which Java's int
   * shift took as 0, and then overran the bucket array half-way through. Now it is refused before
   * anything changes.
   */
  @Test
  void aMergeOfIndicesNoDoubleHasIsRefusedAndChangesNothing() {
    ExpHistogram h = new ExpHistogram(ExpHistogram.DEFAULT_MAX_BUCKETS, 3);
    int[] index = new int[151];
    long[] counts = new long[151];
    for (int i = 0; i < index.length; i++) {
      index[i] = i;
      counts[i] = 1;
    }
    h.mergeSparse(3, 0, index, counts, 0, index.length, 0, 0);
    ExpHistogram before = copy(h);

    assertThatThrownBy(
            () -> h.mergeSparse(-10, 5, new int[] {-(1 << 26)}, new long[] {1}, 0, 1, 0, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("positive bucket indices -67108864..-67108864 at scale -10")
        .hasMessageContaining("outside -2..0");
    assertThatThrownBy(
            () ->
                h.mergeRaw(
                    0, 5, 0, new long[0], 0, 0, 2000, new long[] {1}, 0, 1)) // 2^2001: no double
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("negative bucket indices 2000..2000 at scale 0");
    assertThatThrownBy(() -> h.mergeSparse(21, 0, new int[0], new long[0], 0, 0, 0, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("scale must be within -10..20, was 21");
    assertThatThrownBy(() -> h.mergeSparse(0, 0, new int[] {3, 2}, new long[] {1, 1}, 0, 2, 0, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("positive bucket indices must ascend, found 3 then 2");
    assertThat(h).isEqualTo(before);
  }

  @Test
  void countsSaturateRatherThanWrap() {
    ExpHistogram h = new ExpHistogram();
    h.record(1.0, Long.MAX_VALUE);
    h.record(1.0, 1);
    h.record(0.0, Long.MAX_VALUE);
    h.record(0.0, 1);
    assertThat(h.positiveCount(ExpHistogram.indexOf(1.0, h.scale()))).isEqualTo(Long.MAX_VALUE);
    assertThat(h.zeroCount()).isEqualTo(Long.MAX_VALUE);
    assertThat(h.totalCount()).isEqualTo(Long.MAX_VALUE);

    ExpHistogram two = new ExpHistogram(160, 0);
    two.record(1.5, Long.MAX_VALUE - 1); // bucket 0: (1, 2]
    two.record(3.0, 5); // bucket 1: (2, 4]
    two.downscale(1); // both land in bucket 0: (1, 4]
    assertThat(two.positiveSize()).isEqualTo(1);
    assertThat(two.positiveCount(two.positiveOffset())).isEqualTo(Long.MAX_VALUE);
  }

  private static ExpHistogram copy(ExpHistogram h) {
    ExpHistogram c = new ExpHistogram(ExpHistogram.DEFAULT_MAX_BUCKETS, h.scale());
    c.copyFrom(h);
    return c;
  }
}
