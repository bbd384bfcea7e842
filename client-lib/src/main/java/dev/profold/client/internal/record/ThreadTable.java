package dev.profold.client.internal.record;

import dev.profold.client.internal.threads.Cell;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.ExpHistogram;
import dev.profold.reduce.LongIntMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One thread's cells for one interval: an {@link Aggregate} per (context, metric). Cells are kept
 * across intervals (reset, not freed) so a thread's steady state allocates nothing.
 *
 * <p>At most {@code maxCells} cells: values for further (context, metric) pairs are not recorded
 * and are counted in {@link #dropped()}.
 *
 * <p>Not thread-safe: written by its thread inside a {@link ThreadState} critical section, read and
 * reset by the flush only after the table was swapped out.
 */
final class ThreadTable {
  private final int maxCells;
  private final LongIntMap slots = new LongIntMap(64);
  private long[] keys = new long[16];
  private Aggregate[] cells = new Aggregate[16];
  private boolean[] touched = new boolean[16];
  private int size;
  private long dropped;

  ThreadTable(int maxCells) {
    this.maxCells = maxCells;
  }

  /** Adds one value to the cell of (context, metric). */
  void record(int context, int metric, double value) {
    long key = ((long) context << 32) | metric;
    int slot = slots.get(key);
    if (slot == LongIntMap.MISSING) {
      if (size == maxCells) {
        dropped++;
        return;
      }
      slot = addCell(key);
    }
    cells[slot].record(value);
    touched[slot] = true;
  }

  private int addCell(long key) {
    if (size == cells.length) {
      keys = Arrays.copyOf(keys, size * 2);
      cells = Arrays.copyOf(cells, size * 2);
      touched = Arrays.copyOf(touched, size * 2);
    }
    int slot = size++;
    keys[slot] = key;
    cells[slot] =
        new Aggregate(new ExpHistogram(ExpHistogram.DEFAULT_MAX_BUCKETS, ExpHistogram.TABLE_SCALE));
    slots.put(key, slot);
    return slot;
  }

  /**
   * Copies the touched cells out (into fresh aggregates the caller owns), then empties them for the
   * next interval.
   */
  List<Cell> drain() {
    List<Cell> out = new ArrayList<>();
    for (int slot = 0; slot < size; slot++) {
      if (touched[slot]) {
        Aggregate copy = new Aggregate();
        copy.copyFrom(cells[slot]);
        out.add(new Cell((int) (keys[slot] >>> 32), (int) keys[slot], copy));
        cells[slot].reset();
        touched[slot] = false;
      }
    }
    return out;
  }

  /** Values not recorded because the table was full; reset by {@link #takeDropped()}. */
  long dropped() {
    return dropped;
  }

  long takeDropped() {
    long d = dropped;
    dropped = 0;
    return d;
  }

  /** Cells held (touched or not). */
  int size() {
    return size;
  }
}
