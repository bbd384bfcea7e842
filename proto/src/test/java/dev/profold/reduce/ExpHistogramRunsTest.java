package dev.profold.reduce;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** Runs of bucket counts merged as given on the wire, where counts of 0 may lie anywhere. */
class ExpHistogramRunsTest {
  private static final long[] NONE = new long[0];

  private static void mergeRun(ExpHistogram h, int scale, int offset, long... counts) {
    h.mergeRaw(scale, 0, offset, counts, 0, counts.length, 0, NONE, 0, 0);
  }

  /** A histogram that recorded {@code value}. */
  private static ExpHistogram recorded(double value) {
    ExpHistogram h = new ExpHistogram();
    h.record(value);
    return h;
  }

  /** An exact copy of {@code h}, to compare it with after a refused change. */
  private static ExpHistogram copyOf(ExpHistogram h) {
    ExpHistogram copy = new ExpHistogram();
    copy.copyFrom(h);
    return copy;
  }

  @Test
  void zerosAtTheEndsOfARunTakeNoRoom() {
    long[] padded = new long[200];
    padded[0] = 7;
    ExpHistogram fromRun = new ExpHistogram();
    mergeRun(fromRun, 0, 5, padded);
    ExpHistogram sparse = new ExpHistogram();
    sparse.mergeSparse(0, 0, new int[] {5}, new long[] {7}, 0, 1, 1, 0);

    // Before: the 200 buckets did not fit in 160, and the scale went down to -1 for nothing.
    assertThat(fromRun.scale()).isZero();
    assertThat(fromRun).isEqualTo(sparse);
  }

  @Test
  void aRunOfZerosAloneLowersNothing() {
    ExpHistogram h = recorded(3.0);
    ExpHistogram before = copyOf(h);

    mergeRun(h, ExpHistogram.MIN_SCALE, 0, 0, 0, 0);

    assertThat(h).isEqualTo(before); // before: scale -10
  }

  @Test
  void aZeroCountBeyondTheIndicesOfFiniteDoublesIsAccepted() {
    int top = ExpHistogram.maxIndex(0);
    ExpHistogram h = new ExpHistogram();

    mergeRun(h, 0, top, 1, 0); // bucket top + 1 holds nothing: before, the run was refused

    assertThat(h.totalCount()).isEqualTo(1);
    assertThat(h.positiveCount(top)).isEqualTo(1);
  }

  @Test
  void aNegativeZeroCountIsRefusedWithoutAChange() {
    ExpHistogram h = recorded(2.0);
    ExpHistogram before = copyOf(h);

    assertThatThrownBy(() -> h.mergeRaw(0, -1, 0, NONE, 0, 0, 0, NONE, 0, 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("zero count must be >= 0, was -1");
    assertThatThrownBy(() -> h.mergeSparse(0, -1, new int[0], NONE, 0, 0, 0, 0))
        .isInstanceOf(IllegalArgumentException.class);
    // Before, the sum with -1 read as an overflow and saturated: 2^63-1 zeros.
    assertThat(h).isEqualTo(before);
  }

  @Test
  void aRunPastTheEndOfItsArrayIsRefusedWithoutAChange() {
    ExpHistogram h = recorded(2.0);
    ExpHistogram before = copyOf(h);

    // The sparse run names three buckets but gives two counts: before, the zero count and the
    // first two buckets went in, then the third threw.
    assertThatThrownBy(
            () -> h.mergeSparse(0, 5, new int[] {1, 2, 3}, new long[] {1, 1}, 0, 3, 3, 0))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> h.mergeRaw(0, 5, 0, new long[] {1, 1}, 0, 3, 0, NONE, 0, 0))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> h.mergeRaw(0, 5, 0, NONE, 0, 0, 0, new long[] {1}, 1, 1))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThat(h).isEqualTo(before);
  }

  @Test
  void aHistogramResetWithAnEmptiedSideMergesAndCopies() {
    ExpHistogram h = new ExpHistogram();
    h.record(1000.0);
    h.record(-3.0);
    h.reset(); // both sides emptied, their starts left where they were
    h.record(0.0);

    ExpHistogram merged = new ExpHistogram();
    merged.merge(h); // before: IndexOutOfBoundsException from the empty sides' stale starts
    ExpHistogram copy = new ExpHistogram();
    copy.copyFrom(h);

    assertThat(merged.totalCount()).isEqualTo(1);
    assertThat(merged.zeroCount()).isEqualTo(1);
    assertThat(copy).isEqualTo(h);
    assertThat(merged).isEqualTo(h);
  }

  @Test
  void aHistogramWithoutBucketsTakesTheScaleOfWhatIsMergedIntoIt() {
    ExpHistogram zerosAtLowScale = new ExpHistogram(ExpHistogram.DEFAULT_MAX_BUCKETS, -5);
    zerosAtLowScale.record(0.0);
    ExpHistogram copy = new ExpHistogram();
    copy.copyFrom(zerosAtLowScale); // an exact copy: scale -5, no buckets
    ExpHistogram values = new ExpHistogram();
    values.record(3.0);

    copy.merge(values);

    assertThat(copy.scale()).isEqualTo(values.scale()); // before: -5
    ExpHistogram other = new ExpHistogram();
    other.copyFrom(values);
    other.merge(zerosAtLowScale);
    assertThat(copy).isEqualTo(other);
  }

  @Test
  void copyingFromItselfKeepsEverything() {
    ExpHistogram h = new ExpHistogram();
    h.record(1.5);
    h.record(0.0);
    Aggregate a = new Aggregate();
    a.record(4.0);

    h.copyFrom(h);
    a.copyFrom(a);

    assertThat(h.totalCount()).isEqualTo(2); // before: reset first, then nothing to copy
    assertThat(a.count()).isEqualTo(1);
    assertThat(a.sum()).isEqualTo(4.0);
    assertThat(Arrays.asList(h.zeroCount(), h.positiveSize())).containsExactly(1L, 1);
  }
}
