package dev.profold.reduce;

import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Open-addressing hash map from {@code long} keys to non-negative {@code int} values, for hot paths
 * that must not box or allocate per lookup. Linear probing, power-of-two capacity, load factor at
 * most 1/2. Deletion uses backward-shift, so no tombstones accumulate.
 *
 * <p>Keys chosen by someone else (ids a client sends) take {@link #seeded()}: a key's slot is the
 * top bits of its product with a random odd multiplier of the map's own (multiply-shift hashing, a
 * universal family: whatever keys are chosen, two collide with probability at most 2 / slots), so
 * that nobody can pick keys that all land on one run of slots and turn every look-up into a scan of
 * the whole map. The others mix the key alone with a fixed multiplier, for the client's hot paths.
 *
 * <p>Not thread-safe.
 */
public final class LongIntMap {
  /** Returned by {@link #get} when the key is absent. */
  public static final int MISSING = -1;

  private long[] keys;
  private int[] values; // MISSING marks a free slot
  private int size;
  private int mask;
  private int shift; // 64 - log2(capacity): the top bits of a seeded product are the slot
  private final long seed; // a random odd multiplier, or 0: the key alone decides its slot

  public LongIntMap() {
    this(16);
  }

  public LongIntMap(int expected) {
    this(expected, 0);
  }

  private LongIntMap(int expected, long seed) {
    this.seed = seed;
    int cap = Integer.highestOneBit(Math.max(4, expected) * 2 - 1) << 1;
    keys = new long[cap];
    values = new int[cap];
    Arrays.fill(values, MISSING);
    mask = cap - 1;
    shift = 64 - Integer.numberOfTrailingZeros(cap);
  }

  /** A map for keys others choose, with a random seed of its own (see the class comment). */
  public static LongIntMap seeded() {
    return new LongIntMap(16, ThreadLocalRandom.current().nextLong() | 1);
  }

  /** The slot a look-up of {@code key} starts at. */
  private int home(long key) {
    return seed == 0 ? mixKey(key) & mask : homeSeeded(key, seed, shift);
  }

  /** {@code key} alone, mixed: a Fibonacci multiplication with its halves folded together. */
  static int mixKey(long key) {
    long h = key * 0x9E3779B97F4A7C15L;
    return (int) (h ^ (h >>> 32));
  }

  /** The slot of {@code key} among {@code 2^(64 - shift)}: the top bits of key × multiplier. */
  static int homeSeeded(long key, long multiplier, int shift) {
    return (int) ((key * multiplier) >>> shift);
  }

  /** The value for {@code key}, or {@link #MISSING}. */
  public int get(long key) {
    int i = home(key);
    while (true) {
      int v = values[i];
      if (v == MISSING || keys[i] == key) {
        return v;
      }
      i = (i + 1) & mask;
    }
  }

  /** Maps {@code key} to {@code value} (>= 0), replacing any previous value. */
  public void put(long key, int value) {
    if (value < 0) {
      throw new IllegalArgumentException("values must be >= 0: " + value);
    }
    int i = home(key);
    while (values[i] != MISSING) {
      if (keys[i] == key) {
        values[i] = value;
        return;
      }
      i = (i + 1) & mask;
    }
    if ((size + 1) * 2 > keys.length) {
      // Grown before the key goes in, so that a failure to grow (out of memory) leaves the map
      // as it was, the key not in it: a caller that then gives up has changed nothing.
      grow();
      i = home(key);
      while (values[i] != MISSING) {
        i = (i + 1) & mask;
      }
    }
    keys[i] = key;
    values[i] = value;
    size++;
  }

  /** Run before the arrays of a larger map are made, for tests that make that fail. */
  static volatile Runnable beforeGrow;

  /**
   * Makes room for one more key now, so that the next {@link #put} of a new key needs no growth and
   * cannot fail: for a caller that must not be left half done when memory runs out (it reserves,
   * then takes what the entry stands for, then puts).
   */
  public void reserveOne() {
    if ((size + 1) * 2 > keys.length) {
      grow();
    }
  }

  /** Removes {@code key}; returns its value or {@link #MISSING}. */
  public int remove(long key) {
    int i = home(key);
    while (values[i] != MISSING) {
      if (keys[i] == key) {
        int old = values[i];
        shiftBack(i);
        size--;
        return old;
      }
      i = (i + 1) & mask;
    }
    return MISSING;
  }

  private void shiftBack(int hole) {
    int i = hole;
    while (true) {
      i = (i + 1) & mask;
      if (values[i] == MISSING) {
        break;
      }
      int home = home(keys[i]);
      // Move i into the hole unless its home lies cyclically in (hole, i].
      boolean stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
      if (!stays) {
        keys[hole] = keys[i];
        values[hole] = values[i];
        hole = i;
      }
    }
    values[hole] = MISSING;
  }

  /** Doubles the capacity; both arrays are made before the map changes. */
  private void grow() {
    Runnable hook = beforeGrow;
    if (hook != null) {
      hook.run();
    }
    long[] oldKeys = keys;
    int[] oldValues = values;
    long[] grownKeys = new long[oldKeys.length * 2];
    int[] grownValues = new int[oldValues.length * 2];
    Arrays.fill(grownValues, MISSING);
    keys = grownKeys;
    values = grownValues;
    mask = keys.length - 1;
    shift = 64 - Integer.numberOfTrailingZeros(keys.length);
    size = 0;
    for (int i = 0; i < oldKeys.length; i++) {
      if (oldValues[i] != MISSING) {
        put(oldKeys[i], oldValues[i]);
      }
    }
  }

  public int size() {
    return size;
  }

  /** Calls {@code action} for every entry, in no particular order. */
  public void forEach(Entry action) {
    for (int i = 0; i < keys.length; i++) {
      if (values[i] != MISSING) {
        action.accept(keys[i], values[i]);
      }
    }
  }

  /** Receives one entry. */
  @FunctionalInterface
  public interface Entry {
    void accept(long key, int value);
  }
}
