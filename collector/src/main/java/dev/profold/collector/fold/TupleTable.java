package dev.profold.collector.fold;

/**
 * A map from fixed-width tuples of longs to int values, exact (tuples are compared, not only
 * hashed). Open addressing with each tuple stored inline next to its value, so a lookup of a known
 * tuple touches one place in memory and allocates nothing.
 *
 * <p>Tuples hold values clients choose (an integer dimension's values, say), so a tuple's slot
 * depends on a random seed of the table's own: a client cannot pick tuples that all land in one run
 * of slots and turn every look-up of the fold thread into a scan.
 *
 * <p>Not thread-safe.
 */
final class TupleTable {
  /** What {@link #get} returns for a tuple without a value. */
  static final int NO_VALUE = Integer.MIN_VALUE;

  private static final long EMPTY = Long.MIN_VALUE; // in a slot's value word: a free slot

  private final int width;
  private final int stride;
  private long[] slots; // per slot: width tuple longs, then the value (EMPTY when free)
  private int mask;
  private int size;
  private final long seed;

  /** A table of tuples of {@code width} longs, with a random seed. */
  TupleTable(int width) {
    this(width, java.util.concurrent.ThreadLocalRandom.current().nextLong());
  }

  /** A table of tuples of {@code width} longs whose slots follow {@code seed}. */
  TupleTable(int width, long seed) {
    this.seed = seed;
    this.width = width;
    this.stride = width + 1;
    allocate(32);
  }

  private void allocate(int capacity) {
    slots = new long[capacity * stride];
    for (int i = width; i < slots.length; i += stride) {
      slots[i] = EMPTY;
    }
    mask = capacity - 1;
  }

  /** The value of {@code tuple} (its first {@code width} longs), or {@link #NO_VALUE}. */
  int get(long[] tuple) {
    int i = hash(tuple, width, seed) & mask;
    while (true) {
      int base = i * stride;
      long v = slots[base + width];
      if (v == EMPTY) {
        return NO_VALUE;
      }
      if (equalsAt(base, tuple)) {
        return (int) v;
      }
      i = (i + 1) & mask;
    }
  }

  /** Sets the value of {@code tuple} (not {@link #NO_VALUE}), adding the tuple when new. */
  void put(long[] tuple, int value) {
    int i = hash(tuple, width, seed) & mask;
    while (true) {
      int base = i * stride;
      if (slots[base + width] == EMPTY) {
        System.arraycopy(tuple, 0, slots, base, width);
        slots[base + width] = value;
        if (++size * 2 > mask + 1) {
          rehash();
        }
        return;
      }
      if (equalsAt(base, tuple)) {
        slots[base + width] = value;
        return;
      }
      i = (i + 1) & mask;
    }
  }

  /** The seed, for tests. */
  long seedForTest() {
    return seed;
  }

  /** Tuples held. */
  int size() {
    return size;
  }

  private boolean equalsAt(int base, long[] tuple) {
    for (int k = 0; k < width; k++) {
      if (slots[base + k] != tuple[k]) {
        return false;
      }
    }
    return true;
  }

  private void rehash() {
    long[] old = slots;
    allocate((mask + 1) * 2);
    long[] t = new long[width];
    for (int base = 0; base < old.length; base += stride) {
      if (old[base + width] != EMPTY) {
        System.arraycopy(old, base, t, 0, width);
        int i = hash(t, width, seed) & mask;
        while (slots[i * stride + width] != EMPTY) {
          i = (i + 1) & mask;
        }
        System.arraycopy(old, base, slots, i * stride, stride);
      }
    }
  }

  /** The hash of the first {@code width} longs of {@code tuple} under {@code seed}. */
  static int hash(long[] tuple, int width, long seed) {
    long h = 0x9E3779B97F4A7C15L ^ seed;
    for (int k = 0; k < width; k++) {
      h = (h ^ tuple[k]) * 0xBF58476D1CE4E5B9L;
      h ^= h >>> 31;
    }
    return (int) (h ^ (h >>> 32));
  }
}
