package dev.profold.reduce;

/**
 * The mergeable state of one measurement: count, sum, min, max, sum of squares and a base-2
 * exponential histogram of the values.
 *
 * <p>Merge is associative and commutative and the empty aggregate is its identity; merging the
 * aggregates of two halves of a set of values gives the aggregate of the whole (exactly for count,
 * min, max and the histogram; for the floating-point sums up to rounding, and exactly when the
 * values are dyadic rationals small enough that no sum rounds). Every stage of Profold (per-thread
 * tables, thread aggregation, windows, cumulative totals) uses this one merge.
 *
 * <p>Variance comes from the sum of squares rather than Welford's M2 because the sum of squares
 * merges exactly where M2's merge formula rounds; {@link #variance()} clamps the small negative
 * results cancellation can give.
 *
 * <p>Merged counts saturate at {@link Long#MAX_VALUE} rather than wrap ({@link #saturated()}); a
 * saturated aggregate takes no more single records.
 *
 * <p>Not thread-safe. Recording and merging allocate only when the histogram's bucket array grows.
 */
public final class Aggregate {
  private long count;
  private double sum;
  private double min = Double.POSITIVE_INFINITY;
  private double max = Double.NEGATIVE_INFINITY;
  private double sumOfSquares;
  private final ExpHistogram histogram;

  /** An empty aggregate with a histogram of default size. */
  public Aggregate() {
    this(new ExpHistogram());
  }

  /** An empty aggregate around the given (empty) histogram. */
  public Aggregate(ExpHistogram histogram) {
    this.histogram = histogram;
  }

  /**
   * Adds one value; NaN and infinities are ignored (callers count them). The count goes up by one
   * unchecked: do not record into a {@link #saturated()} aggregate (a merge can saturate one; the
   * per-interval tables of the recording path cannot reach it).
   */
  public void record(double value) {
    if (!Double.isFinite(value)) {
      return;
    }
    count++;
    sum += value;
    sumOfSquares += value * value;
    min = Math.min(min, value);
    max = Math.max(max, value);
    histogram.record(value);
  }

  /**
   * Adds one duration of {@code nanos} nanoseconds as the value {@code nanos * 1e-9} (seconds):
   * exactly what {@code record(nanos * 1e-9)} adds, and cheaper (see {@link
   * ExpHistogram#recordNanos}).
   */
  public void recordNanos(long nanos) {
    // The moments written out as in record(double): with them in a shared private method the
    // region pair measured 0.8 ns dearer (6 interleaved rounds, median 11.7 against 10.8 ns).
    double value = nanos * NanoBuckets.SECONDS_PER_NANO;
    count++;
    sum += value;
    sumOfSquares += value * value;
    min = Math.min(min, value);
    max = Math.max(max, value);
    histogram.recordNanos(nanos);
  }

  /** Adds all values summarised by {@code other}. */
  public void merge(Aggregate other) {
    mergeMoments(other.count, other.sum, other.min, other.max, other.sumOfSquares);
    histogram.merge(other.histogram);
  }

  /**
   * Adds the scalar part of another state. The caller merges its histogram separately through
   * {@link #histogram()} (or has none to merge).
   */
  public void mergeMoments(long n, double s, double lo, double hi, double squares) {
    if (n == 0) {
      return;
    }
    count = ExpHistogram.addCounts(count, n);
    double total = sum + s;
    // +Infinity and -Infinity: the sum overflowed both ways and its value is unknown. NaN would be
    // refused on the wire and hidden by the exposition; +Infinity keeps the merge commutative and
    // associative.
    sum = Double.isNaN(total) ? Double.POSITIVE_INFINITY : total;
    sumOfSquares += squares;
    min = Math.min(min, lo);
    max = Math.max(max, hi);
  }

  /** Empties the aggregate, keeping its arrays for reuse. */
  public void reset() {
    count = 0;
    sum = 0;
    sumOfSquares = 0;
    min = Double.POSITIVE_INFINITY;
    max = Double.NEGATIVE_INFINITY;
    histogram.reset();
  }

  /** Makes this aggregate an exact copy of {@code other}. */
  @SuppressWarnings("ReferenceEquality") // the same object, not an equal one
  public void copyFrom(Aggregate other) {
    if (other == this) {
      return; // reset first would empty both
    }
    reset();
    mergeMoments(other.count, other.sum, other.min, other.max, other.sumOfSquares);
    histogram.copyFrom(other.histogram);
  }

  /**
   * True when the count reached {@link Long#MAX_VALUE}: merges went past it and stopped there, as
   * the histogram's counts do (they saturate rather than wrap), so the counts are lower bounds.
   */
  public boolean saturated() {
    return count == Long.MAX_VALUE;
  }

  public boolean isEmpty() {
    return count == 0;
  }

  public long count() {
    return count;
  }

  public double sum() {
    return sum;
  }

  /** Smallest value, or +Infinity when empty. */
  public double min() {
    return min;
  }

  /** Largest value, or -Infinity when empty. */
  public double max() {
    return max;
  }

  public double sumOfSquares() {
    return sumOfSquares;
  }

  /** Mean, or NaN when empty. */
  public double mean() {
    return count == 0 ? Double.NaN : sum / count;
  }

  /** Population variance (clamped at 0), or NaN when empty. */
  public double variance() {
    if (count == 0) {
      return Double.NaN;
    }
    double mean = sum / count;
    return Math.max(0.0, sumOfSquares / count - mean * mean);
  }

  /** The histogram of the values; it may be empty when only moments were merged. */
  public ExpHistogram histogram() {
    return histogram;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof Aggregate a)) {
      return false;
    }
    return count == a.count
        && Double.compare(sum, a.sum) == 0
        && Double.compare(min, a.min) == 0
        && Double.compare(max, a.max) == 0
        && Double.compare(sumOfSquares, a.sumOfSquares) == 0
        && histogram.equals(a.histogram);
  }

  @Override
  public int hashCode() {
    return Long.hashCode(count) * 31 + Double.hashCode(sum) + 7 * histogram.hashCode();
  }

  @Override
  public String toString() {
    return "Aggregate{count="
        + count
        + ", sum="
        + sum
        + ", min="
        + min
        + ", max="
        + max
        + ", sumOfSquares="
        + sumOfSquares
        + ", "
        + histogram
        + "}";
  }
}
