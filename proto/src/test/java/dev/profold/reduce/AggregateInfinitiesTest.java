package dev.profold.reduce;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Sums beyond a double: what a merge of overflowed sums gives. */
class AggregateInfinitiesTest {
  private static Aggregate twice(double v) {
    Aggregate a = new Aggregate();
    a.record(v);
    a.record(v);
    return a;
  }

  @Test
  void sumsOverflowedBothWaysMergeToPositiveInfinityInEitherOrder() {
    Aggregate up = twice(1e308); // +Infinity
    Aggregate down = twice(-1e308); // -Infinity
    assertThat(up.sum()).isEqualTo(Double.POSITIVE_INFINITY);
    assertThat(down.sum()).isEqualTo(Double.NEGATIVE_INFINITY);

    Aggregate a = twice(1e308);
    a.merge(down);
    Aggregate b = twice(-1e308);
    b.merge(up);

    // Before: NaN, which the collector refuses, so the whole delta was lost.
    assertThat(a.sum()).isEqualTo(Double.POSITIVE_INFINITY);
    assertThat(b.sum()).isEqualTo(Double.POSITIVE_INFINITY);
    assertThat(a).isEqualTo(b);
    assertThat(a.count()).isEqualTo(4);
    assertThat(a.min()).isEqualTo(-1e308);
    assertThat(a.max()).isEqualTo(1e308);
  }

  @Test
  void anInfiniteSumStaysInfiniteWithFiniteOnes() {
    Aggregate a = twice(-1e308);
    a.merge(twice(5));
    assertThat(a.sum()).isEqualTo(Double.NEGATIVE_INFINITY);
  }
}
