package dev.profold.collector.fold;

import dev.profold.reduce.Aggregate;
import dev.profold.reduce.ExpHistogram;
import dev.profold.sinks.snapshot.Measure;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import dev.profold.sinks.snapshot.StateSnapshot;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The groups of one scheme: for each group its labels, its measurement, its cumulative {@link
 * Aggregate} and one Aggregate per open interval window.
 *
 * <p>Group ids are dense ints, recycled through a free list when groups are removed. At most {@code
 * limit} groups exist besides the overflow groups (one per measurement), which take whatever does
 * not fit. Windows live in a ring of {@link #SLOTS} slots; each slot tracks the groups touched in
 * it so closing costs O(touched) and allocates only the snapshot.
 *
 * <p>Not thread-safe: owned by the fold thread.
 */
final class GroupTable {
  static final int SLOTS = 3;

  private final int limit;
  private final int histogramMaxScale;
  private int capacity = 0;
  private int highWater = 0; // ids below this have been handed out
  private int live = 0;
  private int overflowGroups = 0;
  private List<String>[] labels;
  private Measure[] measure;
  private Aggregate[] cumulative;
  private final Aggregate[][] windows = new Aggregate[SLOTS][];
  private final boolean[][] touched = new boolean[SLOTS][];
  private final int[][] touchedList = new int[SLOTS][];
  private final int[] touchedCount = new int[SLOTS];
  private int[] free = new int[16];
  private int freeCount = 0;

  GroupTable(int limit, int histogramMaxScale) {
    this.limit = limit;
    this.histogramMaxScale = histogramMaxScale;
    grow(64);
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private void grow(int to) {
    labels = labels == null ? new List[to] : Arrays.copyOf(labels, to);
    measure = measure == null ? new Measure[to] : Arrays.copyOf(measure, to);
    cumulative = cumulative == null ? new Aggregate[to] : Arrays.copyOf(cumulative, to);
    for (int s = 0; s < SLOTS; s++) {
      windows[s] = windows[s] == null ? new Aggregate[to] : Arrays.copyOf(windows[s], to);
      touched[s] = touched[s] == null ? new boolean[to] : Arrays.copyOf(touched[s], to);
      touchedList[s] = touchedList[s] == null ? new int[to] : Arrays.copyOf(touchedList[s], to);
    }
    capacity = to;
  }

  private Aggregate newAggregate() {
    return new Aggregate(new ExpHistogram(ExpHistogram.DEFAULT_MAX_BUCKETS, histogramMaxScale));
  }

  /** True when a regular (non-overflow) group can still be added. */
  boolean hasRoom() {
    return live - overflowGroups < limit;
  }

  /** Adds a group and returns its id. Overflow groups do not count against the limit. */
  int add(List<String> labelValues, Measure m, boolean overflowGroup) {
    int id;
    if (freeCount > 0) {
      id = free[--freeCount];
    } else {
      if (highWater == capacity) {
        grow(capacity * 2);
      }
      id = highWater++;
    }
    labels[id] = List.copyOf(labelValues);
    measure[id] = m;
    if (cumulative[id] == null) {
      cumulative[id] = newAggregate();
    }
    live++;
    if (overflowGroup) {
      overflowGroups++;
    }
    return id;
  }

  /** Removes a group: its states are cleared and its id is recycled. */
  void remove(int id) {
    cumulative[id].reset();
    for (int s = 0; s < SLOTS; s++) {
      if (touched[s][id]) {
        // Stays in the touched list: close() skips it while removed, and reports its
        // successor if the id is reused within the same window.
        windows[s][id].reset();
      }
    }
    labels[id] = null;
    measure[id] = null;
    live--;
    if (freeCount == free.length) {
      free = Arrays.copyOf(free, free.length * 2);
    }
    free[freeCount++] = id;
  }

  /** True when an open window slot holds data of the group. */
  boolean hasWindowData(int id) {
    for (int s = 0; s < SLOTS; s++) {
      if (touched[s][id] && !windows[s][id].isEmpty()) {
        return true;
      }
    }
    return false;
  }

  /** Empties a group's cumulative state (its source restarted); windows are kept. */
  void resetCumulative(int id) {
    cumulative[id].reset();
  }

  Aggregate cumulative(int id) {
    return cumulative[id];
  }

  /** The group's aggregate in window slot {@code slot}, marking it touched. */
  Aggregate window(int slot, int id) {
    if (!touched[slot][id]) {
      touched[slot][id] = true;
      touchedList[slot][touchedCount[slot]++] = id;
      if (windows[slot][id] == null) {
        windows[slot][id] = newAggregate();
      }
    }
    return windows[slot][id];
  }

  /** Snapshots and empties window slot {@code slot}. */
  List<SeriesSnapshot> close(int slot) {
    List<SeriesSnapshot> out = new ArrayList<>(touchedCount[slot]);
    for (int i = 0; i < touchedCount[slot]; i++) {
      int id = touchedList[slot][i];
      if (touched[slot][id] && labels[id] != null) {
        Aggregate a = windows[slot][id];
        if (!a.isEmpty()) {
          out.add(new SeriesSnapshot(labels[id], measure[id], StateSnapshot.of(a)));
        }
        a.reset();
      }
      touched[slot][id] = false;
    }
    touchedCount[slot] = 0;
    return out;
  }

  /** Snapshots every group's cumulative state (groups without data are left out). */
  List<SeriesSnapshot> cumulativeSnapshot() {
    List<SeriesSnapshot> out = new ArrayList<>(live);
    for (int id = 0; id < highWater; id++) {
      if (labels[id] != null && !cumulative[id].isEmpty()) {
        out.add(new SeriesSnapshot(labels[id], measure[id], StateSnapshot.of(cumulative[id])));
      }
    }
    return out;
  }

  /** Groups held, overflow groups included. */
  int size() {
    return live;
  }
}
