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
  private final int timeMetric;
  private Aggregate[] timeCells = new Aggregate[64]; // by context id: the time metric's cell
  private int size;
  private long dropped;

  /**
   * A table of at most {@code maxCells} cells; {@code timeMetric} gets a direct per-context path.
   */
  ThreadTable(int maxCells, int timeMetric) {
    this.maxCells = maxCells;
    this.timeMetric = timeMetric;
  }

  /**
   * Adds one duration (seconds, finite and not negative) to the time metric's cell of {@code
   * context}: an array index instead of a hash probe, as every region close does this.
   */
  void recordTime(int context, double seconds) {
    Aggregate[] byContext = timeCells;
    if (context < byContext.length) {
      Aggregate cell = byContext[context];
      if (cell != null) {
        cell.record(seconds);
        return;
      }
    }
    record(context, timeMetric, seconds);
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
  }

  private int addCell(long key) {
    if (size == cells.length) {
      keys = Arrays.copyOf(keys, size * 2);
      cells = Arrays.copyOf(cells, size * 2);
    }
    int slot = size++;
    keys[slot] = key;
    Aggregate cell =
        new Aggregate(new ExpHistogram(ExpHistogram.DEFAULT_MAX_BUCKETS, ExpHistogram.TABLE_SCALE));
    cells[slot] = cell;
    slots.put(key, slot);
    int context = (int) (key >>> 32);
    if ((int) key == timeMetric) {
      if (context >= timeCells.length) {
        timeCells = Arrays.copyOf(timeCells, Math.max(context + 1, timeCells.length * 2));
      }
      timeCells[context] = cell;
    }
    return slot;
  }

  /**
   * Copies the cells that recorded anything (count > 0; every recorded value counts) out, into
   * fresh aggregates the caller owns, then empties them for the next interval.
   */
  List<Cell> drain() {
    List<Cell> out = new ArrayList<>();
    for (int slot = 0; slot < size; slot++) {
      if (cells[slot].count() > 0) {
        Aggregate copy = new Aggregate();
        copy.copyFrom(cells[slot]);
        out.add(new Cell((int) (keys[slot] >>> 32), (int) keys[slot], copy));
        cells[slot].reset();
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
