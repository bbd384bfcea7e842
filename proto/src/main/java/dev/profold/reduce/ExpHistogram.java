package dev.profold.reduce;

import java.util.Objects;

/**
 * A mutable base-2 exponential histogram: the bucket scheme of OpenTelemetry's exponential
 * histogram and Prometheus native histograms.
 *
 * <p>At scale {@code s} the base is {@code 2^(2^-s)} and bucket {@code i} holds values {@code v}
 * with {@code base^i < |v| <= base^(i+1)}. Positive and negative values have separate buckets at a
 * common scale; exact zeros are counted apart. Recording starts at a chosen scale (by default
 * {@link #MAX_SCALE}) and the histogram lowers its scale (halving resolution, merging bucket pairs
 * {@code 2j, 2j+1} into {@code j}) whenever the occupied index range of either sign would exceed
 * {@code maxBuckets}.
 *
 * <p>Merge is exact, associative and commutative among histograms of one start scale: the merged
 * histogram has the largest scale not above the start scale nor the scale of an input with buckets
 * at which the union of occupied ranges fits, and bucket counts are sums (a histogram without
 * buckets, zeros only or nothing, brings no scale down; the target's start scale caps the result).
 * Recording and merging allocate only when a bucket array grows, so in steady state they allocate
 * nothing. Counts saturate in merges; a single record adds one unchecked (see {@link
 * Aggregate#record}).
 *
 * <p>The scale never goes below {@link #MIN_SCALE}: there every finite double falls into one of
 * three buckets per sign ({@link #minIndex} to {@link #maxIndex}), so a histogram of at least three
 * buckets per sign always fits; one of two buckets holds three at {@link #MIN_SCALE} rather than go
 * lower. Merges take only bucket indices that finite doubles have at their scale, and check them
 * before they change anything. Merged counts saturate at {@link Long#MAX_VALUE} rather than wrap.
 *
 * <p>Not thread-safe.
 */
public final class ExpHistogram {
  /** Highest scale used when recording raw values. */
  public static final int MAX_SCALE = 20;

  /** Lowest scale this implementation will go down to. */
  public static final int MIN_SCALE = -10;

  /** Default cap on occupied buckets per sign (as OpenTelemetry's default). */
  public static final int DEFAULT_MAX_BUCKETS = 160;

  private static final double LN_2 = Math.log(2);

  private final int maxBuckets;

  /** Scales up to this one are indexed with a lookup table instead of a logarithm. */
  public static final int TABLE_SCALE = 8;

  private static final int CELL_BITS = 10;
  private static final double[] BOUNDARY = new double[(1 << TABLE_SCALE) + 1]; // 2^(k/256)
  private static final short[] CELL_START = new short[1 << CELL_BITS];
  // The 52 mantissa bits of BOUNDARY[k]: within one octave, comparing a value's mantissa bits
  // with these is comparing the doubles.
  private static final long[] BOUNDARY_MANTISSA = new long[BOUNDARY.length];
  private static final long MANTISSA_MASK = 0x000FFFFFFFFFFFFFL;

  static {
    for (int k = 0; k < BOUNDARY.length; k++) {
      BOUNDARY[k] = Math.pow(2.0, k / (double) (1 << TABLE_SCALE));
    }
    BOUNDARY[0] = 1.0;
    BOUNDARY[BOUNDARY.length - 1] = 2.0;
    // CELL_START[c]: bucket (within the octave, at TABLE_SCALE) of mantissas just above the
    // cell's lower end 1 + c / 1024. Buckets are wider than cells, so a cell holds at most one
    // boundary and one comparison finishes the lookup.
    for (int c = 0; c < CELL_START.length; c++) {
      double lower = 1.0 + c / (double) (1 << CELL_BITS);
      int j = 0;
      while (j + 1 < BOUNDARY.length - 1 && BOUNDARY[j + 1] < lower) {
        j++;
      }
      CELL_START[c] = (short) j;
    }
    for (int k = 0; k < BOUNDARY.length - 1; k++) {
      BOUNDARY_MANTISSA[k] = Double.doubleToRawLongBits(BOUNDARY[k]) & MANTISSA_MASK;
    }
    BOUNDARY_MANTISSA[BOUNDARY.length - 1] = MANTISSA_MASK + 1; // 2.0: above every mantissa
  }

  private final int startScale;
  private int scale;
  private long zeroCount;
  private final Buckets positive = new Buckets();
  private final Buckets negative = new Buckets();

  /** An empty histogram holding at most {@link #DEFAULT_MAX_BUCKETS} buckets per sign. */
  public ExpHistogram() {
    this(DEFAULT_MAX_BUCKETS);
  }

  /** An empty histogram holding at most {@code maxBuckets} (>= 2) buckets per sign. */
  public ExpHistogram(int maxBuckets) {
    this(maxBuckets, MAX_SCALE);
  }

  /**
   * An empty histogram holding at most {@code maxBuckets} (>= 2) buckets per sign that starts
   * recording at {@code startScale} ({@link #MIN_SCALE}..{@link #MAX_SCALE}). Clients record at
   * {@link #TABLE_SCALE}, where indexing needs no logarithm.
   */
  public ExpHistogram(int maxBuckets, int startScale) {
    if (maxBuckets < 2) {
      throw new IllegalArgumentException("maxBuckets must be >= 2, was " + maxBuckets);
    }
    if (startScale < MIN_SCALE || startScale > MAX_SCALE) {
      throw new IllegalArgumentException("startScale must be within -10..20, was " + startScale);
    }
    this.maxBuckets = maxBuckets;
    this.startScale = startScale;
    this.scale = startScale;
  }

  /**
   * The lowest bucket index a finite non-zero double has at {@code scale} ({@link
   * #MIN_SCALE}..{@link #MAX_SCALE}): the bucket of {@link Double#MIN_VALUE}, 2^-1074.
   */
  public static int minIndex(int scale) {
    return scale >= 0 ? (-1074 << scale) - 1 : -1075 >> -scale;
  }

  /**
   * The highest bucket index a finite double has at {@code scale} ({@link #MIN_SCALE}..{@link
   * #MAX_SCALE}): the bucket of {@link Double#MAX_VALUE}, just below 2^1024. Its upper boundary,
   * 2^1024, is beyond the doubles: {@link #lowerBoundary} of the index above it is infinite.
   */
  public static int maxIndex(int scale) {
    return scale >= 0 ? (1024 << scale) - 1 : 1023 >> -scale;
  }

  /**
   * {@code index >> by} for any {@code by >= 0}: Java shifts an int by the low five bits of the
   * distance only, so a plain shift by 32 or more would leave the index as it was.
   */
  private static int shiftDown(int index, int by) {
    return index >> Math.min(by, 31);
  }

  /** {@code a + b} for counts {@code a, b >= 0}, held at {@link Long#MAX_VALUE} (saturated). */
  static long addCounts(long a, long b) {
    long r = a + b;
    return r < 0 ? Long.MAX_VALUE : r;
  }

  /**
   * Bucket index of {@code |value|} (finite, non-zero) at {@code scale}. Exact powers of two and
   * all values at scales <= 0 are placed exactly; at positive scales the index comes from a
   * logarithm and a value within a few ulps of a bucket boundary may land in the neighbouring
   * bucket (as in OpenTelemetry's implementation).
   */
  public static int indexOf(double value, int scale) {
    double v = Math.abs(value);
    int adjust = 0;
    if (v < Double.MIN_NORMAL) { // subnormal: scale up exactly so the exponent is readable
      v *= 0x1p64;
      adjust = -64;
    }
    int exponent = Math.getExponent(v) + adjust;
    boolean powerOfTwo = (Double.doubleToRawLongBits(v) & 0x000FFFFFFFFFFFFFL) == 0;
    if (scale <= 0) {
      int index = powerOfTwo ? exponent - 1 : exponent;
      return index >> -scale;
    }
    if (powerOfTwo) {
      return (exponent << scale) - 1;
    }
    if (scale <= TABLE_SCALE) {
      return ((exponent << TABLE_SCALE) + withinOctave(v)) >> (TABLE_SCALE - scale);
    }
    double log2 = Math.log(v) / LN_2 + adjust;
    return (int) Math.ceil(Math.scalb(log2, scale)) - 1;
  }

  /**
   * {@link #indexOf} for a positive normal finite value given by its raw bits {@code bits}, at a
   * scale in 1..{@link #TABLE_SCALE}: the same bucket, from integer operations and two table reads
   * only (the recording hot path).
   */
  static int tableIndex(long bits, int scale) {
    int exponent = (int) (bits >>> 52) - 1023;
    long mantissa = bits & MANTISSA_MASK;
    if (mantissa == 0) { // a power of two is the upper end of the bucket below
      return (exponent << scale) - 1;
    }
    int j = CELL_START[(int) (mantissa >>> (52 - CELL_BITS))];
    if (mantissa > BOUNDARY_MANTISSA[j + 1]) {
      j++;
    }
    return ((exponent << TABLE_SCALE) + j) >> (TABLE_SCALE - scale);
  }

  /** Bucket within its octave at {@link #TABLE_SCALE} of normal {@code v}, not a power of two. */
  private static int withinOctave(double v) {
    long bits = Double.doubleToRawLongBits(v) & 0x000FFFFFFFFFFFFFL;
    double mantissa = Double.longBitsToDouble(bits | 0x3FF0000000000000L); // in (1, 2)
    int j = CELL_START[(int) (bits >>> (52 - CELL_BITS))];
    return mantissa > BOUNDARY[j + 1] ? j + 1 : j;
  }

  /** The lower (exclusive) boundary of bucket {@code index} at {@code scale}. */
  public static double lowerBoundary(int index, int scale) {
    if (scale <= 0) {
      return Math.scalb(1.0, index << -scale);
    }
    if ((index & ((1 << scale) - 1)) == 0) { // an exact power of two
      return Math.scalb(1.0, index >> scale);
    }
    if (scale <= TABLE_SCALE) { // the same boundaries the table lookup compares against
      int at8 = index << (TABLE_SCALE - scale);
      return Math.scalb(BOUNDARY[at8 & ((1 << TABLE_SCALE) - 1)], at8 >> TABLE_SCALE);
    }
    return Math.exp(Math.scalb((double) index, -scale) * LN_2);
  }

  /** Records one occurrence of {@code value}; NaN and infinities are ignored. */
  public void record(double value) {
    long bits = Double.doubleToRawLongBits(value);
    // The common case first: a positive normal finite value (biased exponent 1..2046, sign bit
    // clear) at a table scale, into a bucket already in range.
    int biased = (int) (bits >>> 52);
    if (biased != 0 && biased < 0x7FF && scale > 0 && scale <= TABLE_SCALE) {
      if (positive.incrementIfOccupied(tableIndex(bits, scale))) {
        return;
      }
    }
    record(value, 1);
  }

  /**
   * Records one duration of {@code nanos} nanoseconds as the value {@code nanos * 1e-9} (seconds):
   * exactly what {@code record(nanos * 1e-9)} records, with the bucket found without floating point
   * in the common case ({@link NanoBuckets}).
   */
  public void recordNanos(long nanos) {
    if (nanos > 0 && nanos < NanoBuckets.LIMIT && scale > 0 && scale <= TABLE_SCALE) {
      if (positive.incrementIfOccupied(NanoBuckets.index(nanos) >> (TABLE_SCALE - scale))) {
        return;
      }
    }
    record(nanos * NanoBuckets.SECONDS_PER_NANO, 1);
  }

  /** Records {@code count} occurrences of {@code value}; NaN and infinities are ignored. */
  public void record(double value, long count) {
    if (count <= 0 || !Double.isFinite(value)) {
      return;
    }
    if (value == 0.0) {
      zeroCount = addCounts(zeroCount, count);
      return;
    }
    Buckets side = value > 0 ? positive : negative;
    int index = indexOf(value, scale);
    if (side.addIfOccupied(index, count)) { // the common case: a bucket already in range
      return;
    }
    int down = side.downscaleNeeded(index, index, 0, maxBuckets, scale - MIN_SCALE);
    while (down > 0) {
      downscale(down);
      // At the new scale the value's index is its old index shifted, except where the index
      // computation rounds differently at the two scales (values near the smallest normal
      // double): then check again rather than overrun the bucket array.
      index = indexOf(value, scale);
      down = side.downscaleNeeded(index, index, 0, maxBuckets, scale - MIN_SCALE);
    }
    side.add(index, count, maxBuckets);
  }

  /** Adds every count of {@code other} into this histogram. */
  public void merge(ExpHistogram other) {
    mergeRaw(
        other.scale,
        other.zeroCount,
        other.positive.lo,
        other.positive.counts,
        other.positive.lo - other.positive.offset,
        other.positive.size(),
        other.negative.lo,
        other.negative.counts,
        other.negative.lo - other.negative.offset,
        other.negative.size());
  }

  /**
   * Adds histogram data given as primitive runs: {@code posLen} positive bucket counts for indices
   * {@code posOffset...} read from {@code pos[posFrom...]}, likewise for negatives (counts >= 0;
   * those of 0 at a run's ends are left out first). Used to merge wire data without building an
   * intermediate histogram.
   *
   * @throws IllegalArgumentException without changing the histogram, when {@code otherScale} is
   *     outside {@link #MIN_SCALE}..{@link #MAX_SCALE}, {@code otherZeroCount} is negative or a run
   *     holds a count at an index no finite double has at that scale ({@link #minIndex}..{@link
   *     #maxIndex})
   * @throws IndexOutOfBoundsException without changing the histogram, when a run reaches past the
   *     end of its array
   */
  public void mergeRaw(
      int otherScale,
      long otherZeroCount,
      int posOffset,
      long[] pos,
      int posFrom,
      int posLen,
      int negOffset,
      long[] neg,
      int negFrom,
      int negLen) {
    checkScale(otherScale);
    checkZeroCount(otherZeroCount);
    checkRun(posFrom, posLen, pos.length);
    checkRun(negFrom, negLen, neg.length);
    // Buckets of count 0 at a run's ends hold nothing: without them a run neither reaches indices
    // it does not use (refused, or a scale lowered for nothing) nor differs from the same data
    // given sparse.
    int lead = zerosAtStart(pos, posFrom, posLen);
    posFrom += lead;
    posOffset += lead;
    posLen -= lead + zerosAtEnd(pos, posFrom, posLen - lead);
    lead = zerosAtStart(neg, negFrom, negLen);
    negFrom += lead;
    negOffset += lead;
    negLen -= lead + zerosAtEnd(neg, negFrom, negLen - lead);
    if (posLen > 0) {
      checkIndices(otherScale, posOffset, (long) posOffset + posLen - 1, "positive");
    }
    if (negLen > 0) {
      checkIndices(otherScale, negOffset, (long) negOffset + negLen - 1, "negative");
    }
    zeroCount = addCounts(zeroCount, otherZeroCount);
    if (posLen == 0 && negLen == 0) {
      return; // zeros only: no bucket to align, so the scale stays (recording zeros keeps it)
    }
    adoptScaleIfBucketless(otherScale);
    int target = Math.min(scale, otherScale);
    int otherShift = otherScale - target;
    int selfShift = scale - target;
    int room = target - MIN_SCALE;
    int extra = 0;
    if (posLen > 0) {
      extra =
          Math.max(
              extra,
              positive.downscaleNeeded(
                  posOffset >> otherShift,
                  (posOffset + posLen - 1) >> otherShift,
                  selfShift,
                  maxBuckets,
                  room));
    }
    if (negLen > 0) {
      extra =
          Math.max(
              extra,
              negative.downscaleNeeded(
                  negOffset >> otherShift,
                  (negOffset + negLen - 1) >> otherShift,
                  selfShift,
                  maxBuckets,
                  room));
    }
    if (selfShift + extra > 0) {
      downscale(selfShift + extra);
    }
    int shift = otherShift + extra;
    for (int k = 0; k < posLen; k++) {
      long c = pos[posFrom + k];
      if (c != 0) {
        positive.add(shiftDown(posOffset + k, shift), c, maxBuckets);
      }
    }
    for (int k = 0; k < negLen; k++) {
      long c = neg[negFrom + k];
      if (c != 0) {
        negative.add(shiftDown(negOffset + k, shift), c, maxBuckets);
      }
    }
  }

  /**
   * A histogram without buckets takes the scale of the buckets merged into it, up to its start
   * scale: its own scale, lowered by buckets since emptied or by a copy, held nothing, and merges
   * are commutative and associative among histograms of one start scale only if such a scale lowers
   * nothing.
   */
  private void adoptScaleIfBucketless(int otherScale) {
    if (bucketless()) {
      scale = Math.min(otherScale, startScale);
    }
  }

  /** The counts of 0 that {@code counts[from..from+len)} starts with. */
  private static int zerosAtStart(long[] counts, int from, int len) {
    int k = 0;
    while (k < len && counts[from + k] == 0) {
      k++;
    }
    return k;
  }

  /** The counts of 0 that {@code counts[from..from+len)} ends with. */
  private static int zerosAtEnd(long[] counts, int from, int len) {
    int k = 0;
    while (k < len && counts[from + len - 1 - k] == 0) {
      k++;
    }
    return k;
  }

  /**
   * Checks that a run of {@code len} from {@code from} lies within an array of {@code length}; an
   * empty run may start anywhere (an emptied side's start is stale, and nothing is read).
   */
  private static void checkRun(int from, int len, int length) {
    if (len != 0) {
      Objects.checkFromIndexSize(from, len, length);
    }
  }

  private static void checkZeroCount(long otherZeroCount) {
    if (otherZeroCount < 0) {
      throw new IllegalArgumentException("zero count must be >= 0, was " + otherZeroCount);
    }
  }

  private static void checkScale(int otherScale) {
    if (otherScale < MIN_SCALE || otherScale > MAX_SCALE) {
      throw new IllegalArgumentException(
          "scale must be within " + MIN_SCALE + ".." + MAX_SCALE + ", was " + otherScale);
    }
  }

  /** Checks that the indices {@code lo..hi} (of {@code side}) are those of finite doubles. */
  private static void checkIndices(int otherScale, long lo, long hi, String side) {
    if (lo < minIndex(otherScale) || hi > maxIndex(otherScale)) {
      throw new IllegalArgumentException(
          side
              + " bucket indices "
              + lo
              + ".."
              + hi
              + " at scale "
              + otherScale
              + " are outside "
              + minIndex(otherScale)
              + ".."
              + maxIndex(otherScale)
              + ", the buckets finite doubles have at that scale");
    }
  }

  /**
   * Adds histogram data given as sparse runs: bucket {@code index[k]} (at {@code otherScale}) holds
   * {@code counts[k]}, positive buckets for {@code k} in {@code posFrom..posFrom+posLen-1},
   * negative ones in {@code negFrom..negFrom+negLen-1}, each run sorted by ascending index. Used by
   * the collector's fold, which keeps only non-zero buckets of wire data.
   *
   * @throws IllegalArgumentException without changing the histogram, when {@code otherScale} is
   *     outside {@link #MIN_SCALE}..{@link #MAX_SCALE}, {@code otherZeroCount} is negative or a run
   *     is not ascending or holds an index no finite double has at that scale ({@link
   *     #minIndex}..{@link #maxIndex})
   * @throws IndexOutOfBoundsException without changing the histogram, when a run reaches past the
   *     end of {@code index} or {@code counts}
   */
  public void mergeSparse(
      int otherScale,
      long otherZeroCount,
      int[] index,
      long[] counts,
      int posFrom,
      int posLen,
      int negFrom,
      int negLen) {
    checkScale(otherScale);
    checkZeroCount(otherZeroCount);
    checkRun(posFrom, posLen, Math.min(index.length, counts.length));
    checkRun(negFrom, negLen, Math.min(index.length, counts.length));
    checkAscending(otherScale, index, posFrom, posLen, "positive");
    checkAscending(otherScale, index, negFrom, negLen, "negative");
    zeroCount = addCounts(zeroCount, otherZeroCount);
    if (posLen == 0 && negLen == 0) {
      return; // zeros only: no bucket to align, so the scale stays (recording zeros keeps it)
    }
    adoptScaleIfBucketless(otherScale);
    int target = Math.min(scale, otherScale);
    int otherShift = otherScale - target;
    int selfShift = scale - target;
    int room = target - MIN_SCALE;
    int extra = 0;
    if (posLen > 0) {
      extra =
          positive.downscaleNeeded(
              index[posFrom] >> otherShift,
              index[posFrom + posLen - 1] >> otherShift,
              selfShift,
              maxBuckets,
              room);
    }
    if (negLen > 0) {
      extra =
          Math.max(
              extra,
              negative.downscaleNeeded(
                  index[negFrom] >> otherShift,
                  index[negFrom + negLen - 1] >> otherShift,
                  selfShift,
                  maxBuckets,
                  room));
    }
    if (selfShift + extra > 0) {
      downscale(selfShift + extra);
    }
    int shift = otherShift + extra;
    for (int k = posFrom; k < posFrom + posLen; k++) {
      positive.add(shiftDown(index[k], shift), counts[k], maxBuckets);
    }
    for (int k = negFrom; k < negFrom + negLen; k++) {
      negative.add(shiftDown(index[k], shift), counts[k], maxBuckets);
    }
  }

  /** Checks that {@code index[from..from+len-1]} ascend within the finite doubles' buckets. */
  private static void checkAscending(int otherScale, int[] index, int from, int len, String side) {
    if (len == 0) {
      return;
    }
    checkIndices(otherScale, index[from], index[from + len - 1], side);
    for (int k = from + 1; k < from + len; k++) {
      if (index[k] <= index[k - 1]) {
        throw new IllegalArgumentException(
            side + " bucket indices must ascend, found " + index[k - 1] + " then " + index[k]);
      }
    }
  }

  /**
   * Lowers the scale by {@code by} steps, merging buckets accordingly.
   *
   * @throws IllegalArgumentException when that would go below {@link #MIN_SCALE} (nothing changes)
   */
  public void downscale(int by) {
    if (by <= 0) {
      return;
    }
    if (by > scale - MIN_SCALE) {
      throw new IllegalArgumentException(
          "cannot lower scale " + scale + " by " + by + ": the lowest scale is " + MIN_SCALE);
    }
    positive.downscale(by);
    negative.downscale(by);
    scale -= by;
  }

  /** Empties the histogram and returns it to its start scale; keeps its arrays. */
  public void reset() {
    scale = startScale;
    zeroCount = 0;
    positive.clear();
    negative.clear();
  }

  /** Makes this histogram an exact copy of {@code other}. */
  @SuppressWarnings("ReferenceEquality") // the same object, not an equal one
  public void copyFrom(ExpHistogram other) {
    if (other == this) {
      return; // reset first would empty both
    }
    reset();
    scale = other.scale;
    merge(other);
  }

  public int scale() {
    return scale;
  }

  public long zeroCount() {
    return zeroCount;
  }

  /** Total of all counts: zeros, positive and negative buckets (saturated at Long.MAX_VALUE). */
  public long totalCount() {
    return addCounts(addCounts(zeroCount, positive.total()), negative.total());
  }

  /** Index of the first occupied positive bucket; meaningless when {@link #positiveSize} is 0. */
  public int positiveOffset() {
    return positive.lo;
  }

  /** Number of buckets from the first to the last occupied positive bucket. */
  public int positiveSize() {
    return positive.size();
  }

  /** Count of positive bucket {@code index} (0 when outside the occupied range). */
  public long positiveCount(int index) {
    return positive.get(index);
  }

  public int negativeOffset() {
    return negative.lo;
  }

  public int negativeSize() {
    return negative.size();
  }

  public long negativeCount(int index) {
    return negative.get(index);
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof ExpHistogram h)) {
      return false;
    }
    // Without buckets the scale holds nothing: such histograms are equal by their zeros alone.
    return (scale == h.scale || (bucketless() && h.bucketless()))
        && zeroCount == h.zeroCount
        && positive.sameAs(h.positive)
        && negative.sameAs(h.negative);
  }

  @Override
  public int hashCode() {
    return 31 * (31 * (bucketless() ? 0 : scale) + Long.hashCode(zeroCount))
        + 17 * positive.contentHash()
        + negative.contentHash();
  }

  private boolean bucketless() {
    return positive.isEmpty() && negative.isEmpty();
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("ExpHistogram{scale=").append(scale);
    sb.append(", zero=").append(zeroCount).append(", positive={");
    positive.appendTo(sb);
    sb.append("}, negative={");
    negative.appendTo(sb);
    return sb.append("}}").toString();
  }

  /** Dense counts for one sign; {@code counts[i - offset]} is the count of index i. */
  private static final class Buckets {
    private static final long[] EMPTY = new long[0];
    private long[] counts = EMPTY;
    private int offset;
    private int lo = 0;
    private int hi = -1; // empty when hi < lo

    boolean isEmpty() {
      return hi < lo;
    }

    int size() {
      return isEmpty() ? 0 : hi - lo + 1;
    }

    long get(int index) {
      if (isEmpty() || index < lo || index > hi) {
        return 0;
      }
      return counts[index - offset];
    }

    long total() {
      long t = 0;
      for (int i = lo; i <= hi; i++) {
        t = addCounts(t, counts[i - offset]);
      }
      return t;
    }

    /**
     * How many further scale steps are needed so that this side's range, first lowered by {@code
     * selfShift}, together with {@code [newLo, newHi]} spans at most {@code max}; at most {@code
     * room}, the steps left above {@link #MIN_SCALE} (where the range may span more than {@code
     * max}, three buckets at most for finite doubles).
     */
    int downscaleNeeded(int newLo, int newHi, int selfShift, int max, int room) {
      long l = newLo;
      long h = newHi;
      if (!isEmpty()) {
        l = Math.min(l, shiftDown(lo, selfShift));
        h = Math.max(h, shiftDown(hi, selfShift));
      }
      int d = 0;
      while (d < room && ((h >> d) - (l >> d)) + 1 > max) {
        d++;
      }
      return d;
    }

    /** Adds to bucket {@code index} if it lies in the occupied range; false otherwise. */
    /**
     * {@link #addIfOccupied} of one occurrence, without the saturation check: the recording hot
     * path (a region's close). One at a time, a count cannot reach {@link Long#MAX_VALUE} (2^63
     * values, centuries at a billion a second); merges of counts from elsewhere saturate.
     */
    boolean incrementIfOccupied(int index) {
      if (index < lo || index > hi) {
        return false;
      }
      counts[index - offset]++;
      return true;
    }

    boolean addIfOccupied(int index, long count) {
      if (index < lo || index > hi) {
        return false;
      }
      counts[index - offset] = addCounts(counts[index - offset], count);
      return true;
    }

    void add(int index, long count, int max) {
      if (isEmpty()) {
        if (counts.length == 0) {
          counts = new long[Math.min(8, max)];
        }
        offset = index - counts.length / 2;
        lo = index;
        hi = index;
      } else if (index < lo || index > hi) {
        ensureRange(Math.min(lo, index), Math.max(hi, index), max);
      }
      counts[index - offset] = addCounts(counts[index - offset], count);
    }

    private void ensureRange(int newLo, int newHi, int max) {
      if (newLo >= offset && newHi < offset + counts.length) {
        lo = newLo;
        hi = newHi;
        return;
      }
      int span = newHi - newLo + 1;
      long[] target = counts;
      if (span > counts.length) { // more than max only at MIN_SCALE (see downscaleNeeded)
        target = new long[Math.max(span, Math.min(max, counts.length * 2))];
      }
      int newOffset = newLo - (target.length - span) / 2;
      if (target == counts) { // move in place (arraycopy handles the overlap), clear the rest
        System.arraycopy(counts, lo - offset, counts, lo - newOffset, hi - lo + 1);
        java.util.Arrays.fill(counts, 0, lo - newOffset, 0);
        java.util.Arrays.fill(counts, hi - newOffset + 1, counts.length, 0);
      } else {
        System.arraycopy(counts, lo - offset, target, lo - newOffset, hi - lo + 1);
      }
      counts = target;
      offset = newOffset;
      lo = newLo;
      hi = newHi;
    }

    void downscale(int by) {
      if (isEmpty()) {
        return;
      }
      int newLo = shiftDown(lo, by);
      int newHi = shiftDown(hi, by);
      // Compact into the front of the array: the write position never passes the read one.
      for (int i = lo; i <= hi; i++) {
        int read = i - offset;
        long c = counts[read];
        counts[read] = 0;
        int write = shiftDown(i, by) - newLo;
        counts[write] = addCounts(counts[write], c);
      }
      offset = newLo;
      lo = newLo;
      hi = newHi;
    }

    void clear() {
      if (!isEmpty()) {
        java.util.Arrays.fill(counts, lo - offset, hi - offset + 1, 0);
      }
      lo = 0;
      hi = -1;
    }

    boolean sameAs(Buckets o) {
      if (size() != o.size()) {
        return false;
      }
      if (isEmpty()) {
        return true;
      }
      if (lo != o.lo) {
        return false;
      }
      for (int i = lo; i <= hi; i++) {
        if (get(i) != o.get(i)) {
          return false;
        }
      }
      return true;
    }

    int contentHash() {
      int h = lo;
      for (int i = lo; i <= hi; i++) {
        h = 31 * h + Long.hashCode(get(i));
      }
      return h;
    }

    void appendTo(StringBuilder sb) {
      for (int i = lo; i <= hi; i++) {
        long c = get(i);
        if (c != 0) {
          sb.append(i).append('=').append(c).append(' ');
        }
      }
    }
  }
}
