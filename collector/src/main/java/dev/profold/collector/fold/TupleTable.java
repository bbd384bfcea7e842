package dev.profold.collector.fold;

import java.util.Arrays;

/**
 * Interns fixed-width tuples of longs to dense ids (0, 1, 2, ...), exactly (tuples are compared,
 * not only hashed). Looking up a known tuple allocates nothing.
 *
 * <p>Not thread-safe.
 */
final class TupleTable {
  private final int width;
  private long[] tuples;
  private int[] table; // id + 1, 0 empty
  private int size;

  /** A table of tuples of {@code width} longs. */
  TupleTable(int width) {
    this.width = width;
    this.tuples = new long[Math.max(1, width) * 16];
    this.table = new int[32];
  }

  /** The id of {@code tuple} (its first {@code width} longs), adding it when new. */
  int intern(long[] tuple) {
    int mask = table.length - 1;
    int i = hash(tuple) & mask;
    while (true) {
      int slot = table[i];
      if (slot == 0) {
        return add(tuple, i);
      }
      if (equalsAt(slot - 1, tuple)) {
        return slot - 1;
      }
      i = (i + 1) & mask;
    }
  }

  /** Tuples held. */
  int size() {
    return size;
  }

  private boolean equalsAt(int id, long[] tuple) {
    int base = id * width;
    for (int k = 0; k < width; k++) {
      if (tuples[base + k] != tuple[k]) {
        return false;
      }
    }
    return true;
  }

  private int add(long[] tuple, int at) {
    int id = size++;
    if ((long) size * width > tuples.length) {
      tuples = Arrays.copyOf(tuples, Math.max(tuples.length * 2, size * width));
    }
    System.arraycopy(tuple, 0, tuples, id * width, width);
    table[at] = id + 1;
    if (size * 2 > table.length) {
      rehash();
    }
    return id;
  }

  private void rehash() {
    int[] bigger = new int[table.length * 2];
    int mask = bigger.length - 1;
    long[] t = new long[width];
    for (int id = 0; id < size; id++) {
      System.arraycopy(tuples, id * width, t, 0, width);
      int i = hash(t) & mask;
      while (bigger[i] != 0) {
        i = (i + 1) & mask;
      }
      bigger[i] = id + 1;
    }
    table = bigger;
  }

  private int hash(long[] tuple) {
    long h = 0x9E3779B97F4A7C15L;
    for (int k = 0; k < width; k++) {
      h = (h ^ tuple[k]) * 0xBF58476D1CE4E5B9L;
      h ^= h >>> 31;
    }
    return (int) (h ^ (h >>> 32));
  }
}
