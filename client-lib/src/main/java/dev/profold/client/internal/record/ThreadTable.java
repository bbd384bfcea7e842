package dev.profold.client.internal.record;

import dev.profold.client.internal.threads.Cell;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.ExpHistogram;
import dev.profold.reduce.LongIntMap;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One thread's cells for one interval: an {@link Aggregate} per (context, metric). A cell that
 * recorded in the table's last interval is kept (reset, not freed), so a thread that keeps
 * recording the same cells allocates nothing in steady state; a cell idle for a whole interval of
 * the table is freed at {@link #drain()} once the table holds more than {@link #IDLE_KEPT}.
 *
 * <p>At most {@code maxCells} cells: values for further (context, metric) pairs are not recorded
 * and are counted in {@link #dropped()}.
 *
 * <p>Not thread-safe: written by its thread inside a {@link ThreadState} critical section, read and
 * reset by the flush only after the table was swapped out.
 */
final class ThreadTable {
  private final int maxCells;
  // Small at first, grown as cells are added: the agent makes a table for every thread that ends
  // while it listens, most of which record one or two cells.
  private final LongIntMap slots = new LongIntMap(4);
  private long[] keys = new long[4];
  private Aggregate[] cells = new Aggregate[4];
  private final int timeMetric;

  /**
   * Contexts below this id get the direct path: the array grows with the highest such id a thread
   * times, so it is capped (32 KiB of references per table); higher ids take the hash probe.
   */
  static final int DIRECT_CONTEXTS = 4096;

  /**
   * Cells a table holds at most without freeing its idle ones: a thread's few cells are allocated
   * once, and its idle cells hold little memory.
   */
  static final int IDLE_KEPT = 64;

  /** {@link #lastKey} when no cell was recorded since the last drain: no key of ids 0 or more. */
  private static final long NO_KEY = -1L;

  private Aggregate[] timeCells = new Aggregate[0]; // by context id: the time metric's cell

  /**
   * The (context, metric) key of the cell recorded last, and its slot: a thread recording the same
   * measurement in the same context again and again (a loop) skips the hash probe. A slot, not the
   * cell: storing a reference on every miss costs the garbage collector's write barrier. Cleared by
   * {@link #drain()}, which may move or free the cell.
   */
  private long lastKey = NO_KEY;

  /**
   * Test seams, null otherwise: run where a new cell is allocated, and after each cell a drain
   * copied, so that tests can fail those allocations. Read only on those paths, never when a value
   * goes to an existing cell.
   */
  static volatile Runnable onNewCell;

  static volatile Runnable afterCellCopied;

  private int lastSlot;
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
   * Adds one duration ({@code nanos} nanoseconds, not negative, recorded as {@code nanos * 1e-9}
   * seconds) to the time metric's cell of {@code context}: an array index instead of a hash probe,
   * and a bucket index without floating point ({@link Aggregate#recordNanos}), as every region
   * close does this.
   */
  void recordTime(int context, long nanos) {
    Aggregate[] byContext = timeCells;
    if (context < byContext.length) {
      Aggregate cell = byContext[context];
      if (cell != null) {
        cell.recordNanos(nanos);
        return;
      }
    }
    record(context, timeMetric, nanos * 1e-9);
  }

  /**
   * Adds one value to the cell of (context, metric).
   *
   * @throws IllegalArgumentException for a negative context or metric, before anything changes
   */
  void record(int context, int metric, double value) {
    if (context < 0 || metric < 0) {
      throw new IllegalArgumentException(
          "context and metric ids are 0 or more, got " + context + " and " + metric);
    }
    long key = ((long) context << 32) | metric;
    if (key == lastKey) {
      cells[lastSlot].record(value);
      return;
    }
    int slot = slots.get(key);
    if (slot == LongIntMap.MISSING) {
      if (size == maxCells) {
        dropped++;
        return;
      }
      slot = addCell(key);
    }
    lastKey = key;
    lastSlot = slot;
    cells[slot].record(value);
  }

  /**
   * Adds a cell for {@code key} and returns its slot. Everything that may fail (the allocations: an
   * {@link OutOfMemoryError}, or a {@link StackOverflowError} on a nearly full stack) comes before
   * the table changes, so a failure leaves it as it was: a slot counted before its cell was made
   * would make every later {@link #drain()} fail on it.
   */
  private int addCell(long key) {
    Runnable hook = onNewCell;
    if (hook != null) {
      hook.run();
    }
    Aggregate cell =
        new Aggregate(new ExpHistogram(ExpHistogram.DEFAULT_MAX_BUCKETS, ExpHistogram.TABLE_SCALE));
    int slot = size;
    if (slot == cells.length) {
      long[] grownKeys = Arrays.copyOf(keys, slot * 2);
      Aggregate[] grownCells = Arrays.copyOf(cells, slot * 2);
      keys = grownKeys;
      cells = grownCells;
    }
    int context = (int) (key >>> 32);
    boolean direct = (int) key == timeMetric && context < DIRECT_CONTEXTS;
    if (direct && context >= timeCells.length) {
      timeCells =
          Arrays.copyOf(
              timeCells, Math.min(DIRECT_CONTEXTS, Math.max(context + 1, timeCells.length * 2)));
    }
    keys[slot] = key; // beyond size: not part of the table until size counts it
    cells[slot] = cell;
    slots.put(key, slot);
    size = slot + 1;
    if (direct) {
      timeCells[context] = cell;
    }
    return slot;
  }

  /**
   * Copies the cells that recorded anything (count > 0; every recorded value counts) out, into
   * fresh aggregates the caller owns, then empties them for the next interval. When the table holds
   * more than {@link #IDLE_KEPT} cells (or half its {@code maxCells}, if less), cells that recorded
   * nothing (idle for this table's whole interval) are freed, so {@code maxCells} bounds the cells
   * in recent use rather than every cell the thread ever touched; below that they are kept, so a
   * thread's few cells are allocated once.
   *
   * <p>Everything is copied before anything is emptied: should a copy fail (an {@link
   * OutOfMemoryError}), the table is left as it was, and the caller {@linkplain #discard()
   * discards} it, counting its values.
   */
  List<Cell> drain() {
    lastKey = NO_KEY;
    List<Cell> out = new ArrayList<>();
    Runnable hook = afterCellCopied;
    for (int slot = 0; slot < size; slot++) {
      Aggregate cell = cells[slot];
      if (cell.count() > 0) {
        Aggregate copy = new Aggregate();
        copy.copyFrom(cell);
        long key = keys[slot];
        out.add(new Cell((int) (key >>> 32), (int) key, copy));
        if (hook != null) {
          hook.run();
        }
      }
    }
    empty();
    return out;
  }

  /**
   * Empties the table as {@link #drain()} does, without copying the values out, and returns how
   * many values it held: for a table whose drain failed, its values counted as lost. Allocates
   * nothing.
   */
  long discard() {
    lastKey = NO_KEY;
    return empty();
  }

  /**
   * Resets the cells that recorded anything, frees the idle ones as {@link #drain()} says, and
   * returns the values the cells held. Allocates nothing, so it cannot fail part-way.
   */
  private long empty() {
    long values = 0;
    boolean free = size > Math.min(IDLE_KEPT, maxCells / 2);
    int kept = 0;
    for (int slot = 0; slot < size; slot++) {
      Aggregate cell = cells[slot];
      long key = keys[slot];
      long count = cell.count();
      boolean used = count > 0;
      if (used) {
        values += count;
        cell.reset();
      }
      if (used || !free) {
        if (kept != slot) {
          keys[kept] = key;
          cells[kept] = cell;
          slots.put(key, kept); // a key it holds: replaced in place, nothing allocated
        }
        kept++;
      } else {
        slots.remove(key);
        int context = (int) (key >>> 32);
        if ((int) key == timeMetric && context < timeCells.length) {
          timeCells[context] = null;
        }
      }
    }
    Arrays.fill(cells, kept, size, null);
    size = kept;
    return values;
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
