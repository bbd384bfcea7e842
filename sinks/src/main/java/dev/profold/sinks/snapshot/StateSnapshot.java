package dev.profold.sinks.snapshot;

import dev.profold.reduce.Aggregate;
import dev.profold.reduce.ExpHistogram;
import java.util.Arrays;

/**
 * An immutable copy of one {@link Aggregate}: count, sum, min, max, sum of squares and the
 * exponential histogram's buckets. Taken by the collector when it publishes a snapshot, read by
 * sinks on their own threads.
 */
public final class StateSnapshot {
  private final long count;
  private final double sum;
  private final double min;
  private final double max;
  private final double sumOfSquares;
  private final int scale;
  private final long zeroCount;
  private final int positiveOffset;
  private final long[] positive;
  private final int negativeOffset;
  private final long[] negative;

  private StateSnapshot(Aggregate a) {
    count = a.count();
    sum = a.sum();
    min = a.min();
    max = a.max();
    sumOfSquares = a.sumOfSquares();
    ExpHistogram h = a.histogram();
    scale = h.scale();
    zeroCount = h.zeroCount();
    positiveOffset = h.positiveOffset();
    positive = new long[h.positiveSize()];
    for (int i = 0; i < positive.length; i++) {
      positive[i] = h.positiveCount(positiveOffset + i);
    }
    negativeOffset = h.negativeOffset();
    negative = new long[h.negativeSize()];
    for (int i = 0; i < negative.length; i++) {
      negative[i] = h.negativeCount(negativeOffset + i);
    }
  }

  /** A copy of {@code a}'s current state. */
  public static StateSnapshot of(Aggregate a) {
    return new StateSnapshot(a);
  }

  public long count() {
    return count;
  }

  public double sum() {
    return sum;
  }

  /** Smallest value (+Infinity when count is 0). */
  public double min() {
    return min;
  }

  /** Largest value (-Infinity when count is 0). */
  public double max() {
    return max;
  }

  public double sumOfSquares() {
    return sumOfSquares;
  }

  /** Population standard deviation, or NaN when count is 0. */
  public double stddev() {
    if (count == 0) {
      return Double.NaN;
    }
    double mean = sum / count;
    return Math.sqrt(Math.max(0.0, sumOfSquares / count - mean * mean));
  }

  /** True when at least some of the values came with a histogram. */
  public boolean hasHistogram() {
    return histogramTotal() > 0;
  }

  /**
   * Values the histogram accounts for: equal to {@link #count()} when every merged state carried a
   * histogram, smaller when some did not.
   */
  public long histogramTotal() {
    long total = zeroCount;
    for (long c : positive) {
      total += c;
    }
    for (long c : negative) {
      total += c;
    }
    return total;
  }

  public int scale() {
    return scale;
  }

  public long zeroCount() {
    return zeroCount;
  }

  public int positiveOffset() {
    return positiveOffset;
  }

  /** Positive bucket counts from {@link #positiveOffset()} on (a copy). */
  public long[] positiveCounts() {
    return positive.clone();
  }

  public int negativeOffset() {
    return negativeOffset;
  }

  /** Negative bucket counts (by absolute value) from {@link #negativeOffset()} on (a copy). */
  public long[] negativeCounts() {
    return negative.clone();
  }

  @Override
  public String toString() {
    return "StateSnapshot{count="
        + count
        + ", sum="
        + sum
        + ", min="
        + min
        + ", max="
        + max
        + ", scale="
        + scale
        + ", positive@"
        + positiveOffset
        + "="
        + Arrays.toString(positive)
        + "}";
  }
}
