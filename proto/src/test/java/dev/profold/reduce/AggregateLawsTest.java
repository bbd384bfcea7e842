package dev.profold.reduce;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * The algebra every stage of Profold relies on: merge is associative and commutative, the empty
 * aggregate is its identity, and merging the aggregates of two halves gives the aggregate of the
 * whole, all checked against a naive reference.
 *
 * <p>Values are dyadic rationals (k / 1024 with |k| < 2^20) so every floating-point sum and sum of
 * squares is exact and equality can be exact; {@link #sumsAreCloseForArbitraryDoubles} covers
 * general doubles with a tolerance.
 */
class AggregateLawsTest {

  @Provide
  Arbitrary<List<Double>> values() {
    Arbitrary<Double> dyadic =
        Arbitraries.integers().between(-(1 << 20) + 1, (1 << 20) - 1).map(k -> k / 1024.0);
    Arbitrary<Double> wide =
        Arbitraries.integers()
            .between(-40, 40)
            .flatMap(
                e -> Arbitraries.integers().between(1, 1023).map(m -> Math.scalb(m / 1024.0, e)));
    return Arbitraries.oneOf(dyadic, wide, Arbitraries.just(0.0)).list().ofMaxSize(200);
  }

  /** Dyadic values and zeros only: every sum and sum of squares of them is exact. */
  @Provide
  Arbitrary<List<Double>> exact() {
    Arbitrary<Double> dyadic =
        Arbitraries.integers().between(-(1 << 20) + 1, (1 << 20) - 1).map(k -> k / 1024.0);
    return Arbitraries.oneOf(dyadic, Arbitraries.just(0.0)).list().ofMaxSize(200);
  }

  static Aggregate of(List<Double> xs) {
    Aggregate a = new Aggregate();
    for (double x : xs) {
      a.record(x);
    }
    return a;
  }

  static Aggregate merged(Aggregate... parts) {
    Aggregate out = new Aggregate();
    for (Aggregate p : parts) {
      out.merge(p);
    }
    return out;
  }

  @Property
  boolean mergeIsAssociative(
      @ForAll("exact") List<Double> a,
      @ForAll("exact") List<Double> b,
      @ForAll("exact") List<Double> c) {
    Aggregate left = merged(merged(of(a), of(b)), of(c));
    Aggregate right = merged(of(a), merged(of(b), of(c)));
    return left.equals(right);
  }

  @Property
  boolean mergeIsCommutative(@ForAll("exact") List<Double> a, @ForAll("exact") List<Double> b) {
    return merged(of(a), of(b)).equals(merged(of(b), of(a)));
  }

  @Property
  boolean emptyIsIdentity(@ForAll("exact") List<Double> a) {
    Aggregate x = of(a);
    return merged(new Aggregate(), x).equals(x) && merged(x, new Aggregate()).equals(x);
  }

  @Property
  boolean zerosAtAnyScaleMergeAsRecordedZeros(
      @ForAll("exact") List<Double> xs,
      @ForAll @IntRange(min = 1, max = 5) int zeros,
      @ForAll @IntRange(min = ExpHistogram.MIN_SCALE, max = ExpHistogram.MAX_SCALE) int scale) {
    // Before: a histogram of zeros alone at scale -10 (no bucket) brought the other to -10.
    Aggregate withZeros = of(xs);
    Aggregate onlyZeros = new Aggregate(new ExpHistogram(ExpHistogram.DEFAULT_MAX_BUCKETS, scale));
    for (int i = 0; i < zeros; i++) {
      onlyZeros.record(0.0);
      withZeros.record(0.0);
    }
    // In place, in both orders: a copy of the zeros keeps their scale and has no bucket; merged
    // into, it takes the values' scale (it kept its own, lowering theirs).
    Aggregate zerosFirst = new Aggregate();
    zerosFirst.copyFrom(onlyZeros);
    zerosFirst.merge(of(xs));
    Aggregate valuesFirst = of(xs);
    valuesFirst.merge(onlyZeros);
    return merged(of(xs), onlyZeros).equals(withZeros)
        && zerosFirst.equals(withZeros)
        && valuesFirst.equals(withZeros);
  }

  @Property
  boolean inPlaceMergeIsCommutativeAndAssociativeWithCopiesOfAnyScale(
      @ForAll("values") List<Double> a,
      @ForAll("values") List<Double> b,
      @ForAll @IntRange(min = ExpHistogram.MIN_SCALE, max = ExpHistogram.MAX_SCALE) int scale) {
    // Copies keep the scale of what they copy: histograms of one start scale at any scale.
    Aggregate low = new Aggregate(new ExpHistogram(ExpHistogram.DEFAULT_MAX_BUCKETS, scale));
    b.forEach(low::record);
    Aggregate c = new Aggregate();
    c.copyFrom(low);
    Aggregate ab = of(a);
    ab.merge(c);
    Aggregate ba = new Aggregate();
    ba.copyFrom(c);
    ba.merge(of(a));
    Aggregate left = of(a);
    left.merge(of(b));
    left.merge(c);
    Aggregate bc = of(b);
    bc.merge(c);
    Aggregate right = of(a);
    right.merge(bc);
    return ab.histogram().equals(ba.histogram()) && left.histogram().equals(right.histogram());
  }

  @Property
  boolean mergeOfHalvesEqualsWhole(
      @ForAll("exact") List<Double> xs, @ForAll @IntRange(min = 0, max = 200) int cut) {
    int k = Math.min(cut, xs.size());
    Aggregate whole = of(xs);
    Aggregate halves = merged(of(xs.subList(0, k)), of(xs.subList(k, xs.size())));
    return whole.equals(halves);
  }

  @Property
  void agreesWithNaiveReference(@ForAll("exact") List<Double> xs) {
    Aggregate a = of(xs);
    assertThat(a.count()).isEqualTo(xs.size());
    double sum = 0;
    double squares = 0;
    double min = Double.POSITIVE_INFINITY;
    double max = Double.NEGATIVE_INFINITY;
    for (double x : xs) {
      sum += x;
      squares += x * x;
      min = Math.min(min, x);
      max = Math.max(max, x);
    }
    assertThat(a.sum()).isEqualTo(sum);
    assertThat(a.sumOfSquares()).isEqualTo(squares);
    assertThat(a.min()).isEqualTo(min);
    assertThat(a.max()).isEqualTo(max);
    assertThat(a.histogram().totalCount()).isEqualTo(xs.size());
  }

  @Property
  void histogramOfUnionEqualsMergeOfHistograms(
      @ForAll("values") List<Double> a,
      @ForAll("values") List<Double> b,
      @ForAll @IntRange(min = 2, max = 40) int maxBuckets) {
    ExpHistogram ha = new ExpHistogram(maxBuckets);
    ExpHistogram hb = new ExpHistogram(maxBuckets);
    ExpHistogram union = new ExpHistogram(maxBuckets);
    a.forEach(ha::record);
    b.forEach(hb::record);
    a.forEach(union::record);
    b.forEach(union::record);
    ha.merge(hb);
    assertThat(ha).isEqualTo(union);
    assertThat(ha.positiveSize()).isLessThanOrEqualTo(maxBuckets);
    assertThat(ha.negativeSize()).isLessThanOrEqualTo(maxBuckets);
  }

  /** Every value lands in the bucket whose boundaries contain it (reference: the definition). */
  @Property
  void histogramBucketsMatchTheirDefinition(@ForAll("values") List<Double> xs) {
    ExpHistogram h = new ExpHistogram();
    xs.forEach(h::record);
    int scale = h.scale();
    List<Double> nonZero = new ArrayList<>();
    long zeros = 0;
    for (double x : xs) {
      if (x == 0) {
        zeros++;
      } else {
        nonZero.add(x);
      }
    }
    assertThat(h.zeroCount()).isEqualTo(zeros);
    long[] expectedPositive = new long[Math.max(1, h.positiveSize())];
    for (double x : nonZero) {
      if (x > 0) {
        int index = ExpHistogram.indexOf(x, scale);
        assertThat(index).isBetween(h.positiveOffset(), h.positiveOffset() + h.positiveSize() - 1);
        expectedPositive[index - h.positiveOffset()]++;
        // The boundary definition, with slack for the logarithm at positive scales.
        double lower = ExpHistogram.lowerBoundary(index, scale);
        double upper = ExpHistogram.lowerBoundary(index + 1, scale);
        assertThat(x).isBetween(lower * (1 - 1e-12), upper * (1 + 1e-12));
      }
    }
    for (int i = 0; i < h.positiveSize(); i++) {
      assertThat(h.positiveCount(h.positiveOffset() + i)).isEqualTo(expectedPositive[i]);
    }
  }

  @Property
  void exactPowersOfTwoArePlacedExactly(
      @ForAll @IntRange(min = -60, max = 60) int exponent,
      @ForAll @IntRange(min = -4, max = 8) int scale) {
    double v = Math.scalb(1.0, exponent);
    int index = ExpHistogram.indexOf(v, scale);
    // (base^index, base^(index+1)] contains 2^exponent, exactly computed.
    assertThat(ExpHistogram.lowerBoundary(index, scale)).isLessThan(v);
    assertThat(ExpHistogram.lowerBoundary(index + 1, scale)).isGreaterThanOrEqualTo(v);
  }

  @Property
  void sumsAreCloseForArbitraryDoubles(
      @ForAll("doubles") List<Double> a, @ForAll("doubles") List<Double> b) {
    Aggregate left = merged(of(a), of(b));
    Aggregate right = merged(of(b), of(a));
    assertThat(left.count()).isEqualTo(right.count());
    assertThat(left.sum()).isCloseTo(right.sum(), org.assertj.core.data.Offset.offset(1e-6));
    assertThat(left.histogram()).isEqualTo(right.histogram());
  }

  @Provide
  Arbitrary<List<Double>> doubles() {
    return Arbitraries.doubles().between(-1e6, 1e6).list().ofMaxSize(100);
  }

  @Property
  boolean wireRoundTripPreservesTheState(@ForAll("exact") List<Double> xs) {
    Aggregate a = of(xs);
    Aggregate back = new Aggregate();
    WireStates.mergeInto(WireStates.toProto(a), back);
    return back.equals(a);
  }

  /** The fold's sparse merge (non-zero buckets only) equals the dense merge of the same data. */
  @Property
  void sparseMergeEqualsDenseMerge(
      @ForAll("values") List<Double> a,
      @ForAll("values") List<Double> b,
      @ForAll @IntRange(min = 2, max = 40) int maxBuckets) {
    ExpHistogram hb = new ExpHistogram(maxBuckets);
    b.forEach(hb::record);
    ExpHistogram dense = new ExpHistogram(maxBuckets);
    ExpHistogram sparse = new ExpHistogram(maxBuckets);
    a.forEach(dense::record);
    a.forEach(sparse::record);
    dense.merge(hb);
    int n = hb.positiveSize() + hb.negativeSize();
    int[] index = new int[n];
    long[] counts = new long[n];
    int k = 0;
    for (int i = 0; i < hb.positiveSize(); i++) {
      long c = hb.positiveCount(hb.positiveOffset() + i);
      if (c != 0) {
        index[k] = hb.positiveOffset() + i;
        counts[k++] = c;
      }
    }
    int posLen = k;
    for (int i = 0; i < hb.negativeSize(); i++) {
      long c = hb.negativeCount(hb.negativeOffset() + i);
      if (c != 0) {
        index[k] = hb.negativeOffset() + i;
        counts[k++] = c;
      }
    }
    sparse.mergeSparse(hb.scale(), hb.zeroCount(), index, counts, 0, posLen, posLen, k - posLen);
    assertThat(sparse).isEqualTo(dense);
  }

  @Provide
  Arbitrary<Double> positive() {
    return Arbitraries.integers()
        .between(-60, 60)
        .flatMap(e -> Arbitraries.doubles().between(1.0, 2.0).map(m -> Math.scalb(m, e)));
  }

  /** Up to the table scale, indexing agrees exactly with the boundaries, no tolerance. */
  @Property
  void tableIndexingIsExactAgainstItsBoundaries(
      @ForAll("positive") double v, @ForAll @IntRange(min = 1, max = 8) int scale) {
    int index = ExpHistogram.indexOf(v, scale);
    assertThat(ExpHistogram.lowerBoundary(index, scale)).isLessThan(v);
    assertThat(ExpHistogram.lowerBoundary(index + 1, scale)).isGreaterThanOrEqualTo(v);
  }

  /** A client histogram starting at the table scale merges with a collector one exactly. */
  @Property
  boolean histogramsStartingAtDifferentScalesMergeAsTheUnion(
      @ForAll("values") List<Double> a, @ForAll("values") List<Double> b) {
    ExpHistogram client = new ExpHistogram(160, ExpHistogram.TABLE_SCALE);
    ExpHistogram collector = new ExpHistogram();
    a.forEach(client::record);
    b.forEach(collector::record);
    ExpHistogram union = new ExpHistogram(160, ExpHistogram.TABLE_SCALE);
    a.forEach(union::record);
    b.forEach(union::record);
    collector.merge(client);
    if (a.stream().allMatch(x -> x == 0.0)) {
      // No bucket came with the client's values (zeros or none): the collector's scale stays, as
      // recording those values into it would leave it.
      ExpHistogram recorded = new ExpHistogram();
      b.forEach(recorded::record);
      a.forEach(recorded::record);
      return collector.equals(recorded);
    }
    // The union at the client's start scale, lowered to where the merge ended.
    union.downscale(union.scale() - collector.scale());
    return collector.equals(union);
  }
}
