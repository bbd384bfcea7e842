package dev.profold.reduce;

/**
 * Bucket indices at {@link ExpHistogram#TABLE_SCALE} of durations counted in nanoseconds and
 * recorded in seconds: for {@code 0 < nanos <} {@link #LIMIT}, {@link #index} is exactly the index
 * {@link ExpHistogram#tableIndex} gives for the double {@code nanos * 1e-9}, from integer
 * operations and two independent table reads rather than a conversion to floating point, a
 * multiplication and two dependent reads. A region's close records its duration this way: the work
 * that follows the close's clock read is a large share of what a region costs beyond its two clock
 * reads.
 *
 * <p>Why it is exact. Below 2^53 a count of nanoseconds is exact as a double, {@code m * 2^k} with
 * {@code m} in [1, 2). Multiplying a normal double by a power of two is exact, so the rounded
 * product {@code nanos * 1e-9} is 2^k times the rounded {@code m * 1e-9}: the same mantissa, an
 * exponent k higher. Its bucket is therefore {@code k * 2^TABLE_SCALE + g(m)}, where {@code g(m)}
 * is the bucket of the rounded {@code m * 1e-9}: it depends only on the 52 mantissa bits of m and
 * never decreases as they grow. The tables hold {@code g} at the first mantissa of each cell (the
 * top {@value #CELL_BITS} mantissa bits) and the first mantissa of the cell at which {@code g}
 * steps up, found by bisection against the double computation itself. A cell spans at most 0.1% of
 * a value and a bucket 0.27%, so {@code g} steps at most once in a cell; building the tables checks
 * that.
 */
final class NanoBuckets {
  /** Durations from 1 ns up to (not including) 2^53 ns, about 104 days, are indexed here. */
  static final long LIMIT = 1L << 53;

  /** What a nanosecond is in seconds: the factor the values recorded are defined by. */
  static final double SECONDS_PER_NANO = 1e-9;

  private static final int MANTISSA_BITS = 52;
  private static final int CELL_BITS = 10;
  private static final int CELL_SHIFT = MANTISSA_BITS - CELL_BITS;

  /** {@code g} at the first mantissa of each cell. */
  private static final int[] FIRST = new int[1 << CELL_BITS];

  /** The first mantissa of each cell where {@code g} is one more; above every mantissa if none. */
  private static final long[] STEP = new long[1 << CELL_BITS];

  static {
    for (int c = 0; c < FIRST.length; c++) {
      long first = (long) c << CELL_SHIFT;
      long last = first + (1L << CELL_SHIFT) - 1;
      int low = bucketOfMantissa(first);
      int high = bucketOfMantissa(last);
      FIRST[c] = low;
      if (high == low) {
        STEP[c] = Long.MAX_VALUE;
      } else if (high == low + 1) {
        long below = first; // the bucket of below is low, the bucket of above is low + 1
        long above = last;
        while (above - below > 1) {
          long mid = (below + above) >>> 1;
          if (bucketOfMantissa(mid) == low) {
            below = mid;
          } else {
            above = mid;
          }
        }
        STEP[c] = above;
      } else {
        throw new AssertionError("more than one bucket boundary in mantissa cell " + c);
      }
    }
  }

  private NanoBuckets() {}

  /** The bucket at TABLE_SCALE of {@code m * 1e-9}, m being 1 + mantissa / 2^52. */
  private static int bucketOfMantissa(long mantissa) {
    double m = Double.longBitsToDouble(Double.doubleToRawLongBits(1.0) | mantissa);
    return ExpHistogram.tableIndex(
        Double.doubleToRawLongBits(m * SECONDS_PER_NANO), ExpHistogram.TABLE_SCALE);
  }

  /**
   * The bucket at {@link ExpHistogram#TABLE_SCALE} of the value {@code nanos * 1e-9}.
   *
   * @param nanos from 1 to {@link #LIMIT} - 1; other values give meaningless results
   */
  static int index(long nanos) {
    int leadingZeros = Long.numberOfLeadingZeros(nanos);
    // The bits below the leading one, at the top of 52: the mantissa of nanos as a double. For
    // nanos = 1 the shift distance is 64, which Java takes as 0: 1 >>> 12 is the mantissa 0.
    long mantissa = (nanos << (leadingZeros + 1)) >>> (Long.SIZE - MANTISSA_BITS);
    int cell = (int) (mantissa >>> CELL_SHIFT);
    int g = FIRST[cell] + (mantissa >= STEP[cell] ? 1 : 0);
    return ((Long.SIZE - 1 - leadingZeros) << ExpHistogram.TABLE_SCALE) + g;
  }
}
