package dev.profold.reduce;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class LongIntMapTest {
  /** One operation on the map: put (value >= 0), or remove (value < 0). */
  record Op(long key, int value) {}

  @Provide
  Arbitrary<List<Op>> operations() {
    // Few distinct keys, so that puts replace and removes hit, and runs of slots collide.
    Arbitrary<Long> keys =
        Arbitraries.oneOf(
            Arbitraries.longs().between(-40, 40),
            Arbitraries.longs().between(0, 40).map(k -> k << 32),
            Arbitraries.longs());
    return Combinators.combine(keys, Arbitraries.integers().between(-3, 1000))
        .as(Op::new)
        .list()
        .ofMaxSize(400);
  }

  @Property
  void behavesAsAMapSeededOrNot(@ForAll("operations") List<Op> ops, @ForAll boolean seeded) {
    LongIntMap map = seeded ? LongIntMap.seeded() : new LongIntMap(4);
    Map<Long, Integer> model = new HashMap<>();
    for (Op op : ops) {
      if (op.value() >= 0) {
        map.put(op.key(), op.value());
        model.put(op.key(), op.value());
      } else {
        Integer removed = model.remove(op.key());
        assertThat(map.remove(op.key())).isEqualTo(removed == null ? LongIntMap.MISSING : removed);
      }
      assertThat(map.size()).isEqualTo(model.size());
    }
    for (Op op : ops) {
      assertThat(map.get(op.key())).isEqualTo(model.getOrDefault(op.key(), LongIntMap.MISSING));
    }
    Map<Long, Integer> seen = new HashMap<>();
    map.forEach(seen::put);
    assertThat(seen).isEqualTo(model);
  }

  @Test
  void aFailureToGrowLeavesTheMapAsItWas() {
    // The key went in first and the map grew after: out of memory there left a key mapped in a
    // map its owner thought unchanged (a client's table then recorded into a cell it never drains).
    LongIntMap map = new LongIntMap(4); // 8 slots: the fifth key grows it
    for (long k = 1; k <= 4; k++) {
      map.put(k, (int) k);
    }
    LongIntMap.beforeGrow =
        () -> {
          throw new OutOfMemoryError("planted by the test");
        };
    try {
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> map.put(5, 5))
          .isInstanceOf(OutOfMemoryError.class);
    } finally {
      LongIntMap.beforeGrow = null;
    }
    assertThat(map.get(5)).isEqualTo(LongIntMap.MISSING);
    assertThat(map.size()).isEqualTo(4);
    map.put(3, 30); // a key it holds: no growth needed
    map.put(5, 5);
    for (long k = 1; k <= 5; k++) {
      assertThat(map.get(k)).isEqualTo(k == 3 ? 30 : (int) k);
    }
    assertThat(map.size()).isEqualTo(5);
  }

  @Test
  void aPutAfterReservingNeedsNoGrowth() {
    LongIntMap map = LongIntMap.seeded();
    for (long k = 1; k <= 100; k++) {
      map.reserveOne();
      LongIntMap.beforeGrow =
          () -> {
            throw new OutOfMemoryError("planted by the test");
          };
      long key = k;
      try {
        org.assertj.core.api.Assertions.assertThatCode(() -> map.put(key, (int) key))
            .as("a put after reserveOne grows nothing")
            .doesNotThrowAnyException();
      } finally {
        LongIntMap.beforeGrow = null;
      }
    }
    for (long k = 1; k <= 100; k++) {
      assertThat(map.get(k)).isEqualTo((int) k);
    }
    assertThat(map.size()).isEqualTo(100);
  }

  @Test
  void keysChosenToCollideWithoutASeedSpreadWithOne() {
    // 4096 keys whose unseeded slots agree in their low 16 bits: in a map of up to 65,536 slots
    // they would all start at one slot, and each look-up would scan the run they form.
    int want = 4096;
    long[] colliding = new long[want];
    int found = 0;
    for (long k = 1; found < want; k++) {
      if ((LongIntMap.mixKey(k) & 0xFFFF) == 0) {
        colliding[found++] = k;
      }
    }
    java.util.Random random = new java.util.Random(42);
    for (int m = 0; m < 8; m++) {
      long multiplier = random.nextLong() | 1;
      Set<Integer> slots = new HashSet<>();
      for (long k : colliding) {
        slots.add(LongIntMap.homeSeeded(k, multiplier, 64 - 16));
      }
      // Random slots for 4096 keys among 65,536: about 3,970 distinct; one without the seed.
      assertThat(slots.size()).as("multiplier %x", multiplier).isGreaterThan(3800);
    }
  }
}
