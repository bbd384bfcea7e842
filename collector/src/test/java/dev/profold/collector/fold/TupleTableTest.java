package dev.profold.collector.fold;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** The fold's tuple table: a map, and one whose slots a client cannot choose. */
class TupleTableTest {
  record Op(long a, long b, int value) {}

  @Property
  void behavesAsAMap(@ForAll("operations") List<Op> ops, @ForAll long seed) {
    TupleTable table = new TupleTable(2, seed);
    Map<List<Long>, Integer> model = new HashMap<>();
    for (Op op : ops) {
      long[] t = {op.a(), op.b()};
      assertThat(table.get(t))
          .isEqualTo(model.getOrDefault(List.of(op.a(), op.b()), TupleTable.NO_VALUE));
      table.put(t, op.value());
      model.put(List.of(op.a(), op.b()), op.value());
    }
    assertThat(table.size()).isEqualTo(model.size());
    model.forEach((k, v) -> assertThat(table.get(new long[] {k.get(0), k.get(1)})).isEqualTo(v));
  }

  @Provide
  Arbitrary<List<Op>> operations() {
    Arbitrary<Long> small = Arbitraries.longs().between(-20, 20);
    return Combinators.combine(
            Arbitraries.oneOf(small, Arbitraries.longs()),
            small,
            Arbitraries.integers().between(0, 1000))
        .as(Op::new)
        .list()
        .ofMaxSize(300);
  }

  @Test
  void tuplesChosenToCollideUnderOneSeedSpreadUnderOthers() {
    // A client that knew the hash could pick integer values whose tuples all start at one slot:
    // every look-up of the fold thread then scans the run they form.
    long knownSeed = 0;
    int want = 1024;
    long[][] colliding = new long[want][];
    int found = 0;
    for (long k = 1; found < want; k++) {
      long[] t = {k, 7};
      if ((TupleTable.hash(t, 2, knownSeed) & 0xFFF) == 0) {
        colliding[found++] = t;
      }
    }
    Random random = new Random(42);
    for (int m = 0; m < 8; m++) {
      long seed = random.nextLong();
      Set<Integer> slots = new HashSet<>();
      for (long[] t : colliding) {
        slots.add(TupleTable.hash(t, 2, seed) & 0xFFF);
      }
      // Random slots for 1024 tuples among 4096: about 906 distinct; one under the known seed.
      assertThat(slots.size()).as("seed %x", seed).isGreaterThan(800);
    }
  }

  @Test
  void twoTablesPlaceTheSameTuplesDifferently() {
    long[] t = {3, 4};
    Set<Integer> homes = new HashSet<>();
    for (int i = 0; i < 16; i++) {
      homes.add(TupleTable.hash(t, 2, new TupleTable(2).seedForTest()));
    }
    assertThat(homes).hasSizeGreaterThan(1);
  }
}
