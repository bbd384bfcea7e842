package dev.profold.collector.query;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The order CalQL sorts and compares numbers by is total across integers and doubles, and follows
 * their exact values, near 2^53 (where a double stops holding every integer) included.
 */
class ValuesOrderPropertyTest {
  private static final long TWO_53 = 1L << 53;

  @Provide
  Arbitrary<Object> numbers() {
    Arbitrary<Object> nearLongs =
        Arbitraries.longs().between(-3, 3).map(d -> (Object) (TWO_53 + d));
    Arbitrary<Object> nearDoubles =
        Arbitraries.longs().between(-3, 3).map(d -> (Object) (double) (TWO_53 + 2 * d));
    Arbitrary<Object> negatives = nearLongs.map(v -> (Object) (-(Long) v));
    Arbitrary<Object> small =
        Arbitraries.of(0L, 1L, -1L, 0.0, -0.0, 0.5, -0.5, 1.0, Double.NaN, 1e300, -1e300)
            .map(v -> (Object) v);
    Arbitrary<Object> extremes =
        Arbitraries.of(Long.MAX_VALUE, Long.MIN_VALUE, 0x1p63, -0x1p63, 9.2233720368547748E18)
            .map(v -> (Object) v);
    return Arbitraries.oneOf(nearLongs, nearDoubles, negatives, small, extremes);
  }

  @Property(tries = 2000)
  void antisymmetricAndTransitive(
      @ForAll("numbers") Object a, @ForAll("numbers") Object b, @ForAll("numbers") Object c) {
    assertThat(Integer.signum(Values.compare(a, b)))
        .isEqualTo(-Integer.signum(Values.compare(b, a)));
    if (Values.compare(a, b) <= 0 && Values.compare(b, c) <= 0) {
      assertThat(Values.compare(a, c)).as("%s <= %s <= %s", a, b, c).isLessThanOrEqualTo(0);
    }
  }

  @Property(tries = 2000)
  void followsExactValues(@ForAll("numbers") Object a, @ForAll("numbers") Object b) {
    if (isNaN(a) || isNaN(b) || isZero(a) || isZero(b)) {
      return; // NaN above all and -0.0 below 0.0, as Double.compare has them
    }
    int exact = exact(a).compareTo(exact(b));
    assertThat(Integer.signum(Values.compare(a, b))).as("%s vs %s", a, b).isEqualTo(exact);
  }

  @Provide
  Arbitrary<List<Object>> numberLists() {
    return numbers().list().ofMaxSize(200);
  }

  @Property(tries = 200)
  void aSortOfMixedNumbersNeverFails(@ForAll("numberLists") List<Object> xs) {
    List<Object> copy = new ArrayList<>(xs);
    Collections.shuffle(copy);
    copy.sort(Values::compare);
    for (int i = 1; i < copy.size(); i++) {
      assertThat(Values.compare(copy.get(i - 1), copy.get(i))).isLessThanOrEqualTo(0);
    }
  }

  private static BigDecimal exact(Object v) {
    return v instanceof Long l ? BigDecimal.valueOf(l) : new BigDecimal((Double) v);
  }

  private static boolean isNaN(Object v) {
    return v instanceof Double d && d.isNaN();
  }

  private static boolean isZero(Object v) {
    return v instanceof Double d && d == 0;
  }
}
