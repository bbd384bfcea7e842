package dev.profold.collector.fold;

import dev.profold.collector.dictionary.Attribute;
import dev.profold.collector.dictionary.AttributeType;
import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.dictionary.PathNode;
import dev.profold.collector.ingest.DecodedDelta;
import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.LongIntMap;
import dev.profold.sinks.snapshot.IntervalSnapshot;
import dev.profold.sinks.snapshot.Measure;
import dev.profold.sinks.snapshot.SchemeSnapshot;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One online scheme at work: its groups, its interval windows and its retained intervals.
 *
 * <p><b>Grouping an entry without allocating.</b> The entry's values of the attributes the scheme
 * reads (GROUP BY and WHERE; {@code path} and {@code kind} read the {@code region} attribute) form
 * a tuple, interned per source instance to a small id. The first time an instance sends a tuple,
 * the scheme builds the record, runs WHERE on it and renders the group labels; later entries with
 * the same tuple cost one interning and one map probe per measurement.
 *
 * <p><b>Group lifetime.</b> A group lives while a live instance feeds it: when the last instance
 * that sent data to it expires, it is removed (and leaves /metrics). When an instance restarts, the
 * cumulative state of its groups restarts too if the scheme groups by {@code instance} (the groups
 * are that instance's own); shared groups keep counting. Overflow groups (one per measurement,
 * labelled {@value FoldEngine#OVERFLOW}) stay.
 *
 * <p><b>Windows</b> follow {@link FoldEngine}'s rules with the scheme's own interval. Each closed
 * window with data is retained, up to the scheme's retention.
 *
 * <p>Not thread-safe: owned by the fold thread.
 */
final class SchemeFold {
  private static final long NO_WINDOW = Long.MIN_VALUE;
  private static final byte UNKNOWN = 0;
  private static final byte PASS = 1;
  private static final byte FAIL = 2;

  final SchemeDefinition def;
  private final GlobalDictionary dictionary;
  private final CollectorMetrics metrics;
  private final long intervalNanos;
  private final GroupTable groups;
  private final List<String> slotNames;
  private final long[] tuple;
  private int[] attrSlot = new int[64]; // global attribute id -> slot + 1; -1 none; 0 unknown
  private Measure[] measures = new Measure[64];
  private final Map<Instance, PerInstance> perInstance = new HashMap<>();
  private final Map<GroupKey, Integer> groupIds = new HashMap<>();
  private GroupKey[] keyOf = new GroupKey[64];
  private int[] feeders = new int[64];
  private final LongIntMap overflowGroups = new LongIntMap();
  private final long[] slotWindow = new long[GroupTable.SLOTS];
  private long currentWindow;
  private final ArrayDeque<IntervalSnapshot> retained = new ArrayDeque<>();
  private long removals; // groups removed so far: room may have come free

  /** Labels and measurement attribute of a group. */
  private record GroupKey(List<String> labels, int measurement) {}

  /** What the scheme keeps per instance: its tuples and where they go. */
  private static final class PerInstance {
    final TupleTable tuples;
    byte[] verdict = new byte[64]; // by tuple id

    @SuppressWarnings({"unchecked", "rawtypes"})
    List<String>[] labels = new List[64]; // by tuple id

    final LongIntMap groupOf = new LongIntMap(); // (tuple id << 32 | measurement) -> group
    final LongIntMap fed = new LongIntMap(); // groups this instance fed (as a set)
    LongIntMap overflowed = new LongIntMap(); // (tuple id << 32 | measurement) -> overflow group
    long removalsSeen; // overflowed is valid while no group was removed since

    PerInstance(int width) {
      tuples = new TupleTable(width);
    }
  }

  SchemeFold(
      SchemeDefinition def,
      GlobalDictionary dictionary,
      CollectorMetrics metrics,
      int histogramMaxScale,
      long nowNanos) {
    this.def = def;
    this.dictionary = dictionary;
    this.metrics = metrics;
    this.intervalNanos = def.interval().toNanos();
    this.groups = new GroupTable(def.cardinalityLimit(), histogramMaxScale);
    List<String> names = new ArrayList<>();
    List<String> read = new ArrayList<>(def.groupBy());
    read.addAll(def.whereAttributes());
    for (String a : read) {
      if (a.equals(SchemeDefinition.SERVICE) || a.equals(SchemeDefinition.INSTANCE)) {
        continue; // the same for every entry of an instance
      }
      if (a.equals(SchemeDefinition.PATH) || a.equals(SchemeDefinition.KIND)) {
        addOnce(names, SchemeDefinition.REGION);
      }
      if (!a.equals(SchemeDefinition.PATH)) {
        addOnce(names, a);
      }
    }
    this.slotNames = List.copyOf(names);
    this.tuple = new long[2 * slotNames.size()];
    Arrays.fill(slotWindow, NO_WINDOW);
    currentWindow = Math.floorDiv(nowNanos, intervalNanos);
  }

  private static void addOnce(List<String> names, String name) {
    if (!names.contains(name)) {
      names.add(name);
    }
  }

  // ---- folding ----

  /**
   * Folds {@code d} (from {@code inst}) into cumulative state and, when its midpoint falls in an
   * open window, that window.
   *
   * @return measurements that went to an overflow group; {@code late[0]} is set when the delta
   *     missed the open windows
   */
  int fold(Instance inst, DecodedDelta d, boolean[] late) {
    int slot = slotFor(d, late);
    PerInstance pi = perInstance.get(inst);
    if (pi == null) {
      pi = new PerInstance(tuple.length);
      perInstance.put(inst, pi);
    }
    int overflowed = 0;
    for (int e = 0; e < d.entries; e++) {
      Arrays.fill(tuple, 0L);
      for (int k = d.keyStart[e]; k < d.keyStart[e + 1]; k++) {
        int s = slotOf(d.keyAttr[k]);
        if (s >= 0) {
          tuple[2 * s] = d.keyAttr[k];
          tuple[2 * s + 1] = d.keyValue[k];
        }
      }
      int id = pi.tuples.intern(tuple);
      if (id >= pi.verdict.length) {
        pi.verdict = Arrays.copyOf(pi.verdict, Math.max(id + 1, pi.verdict.length * 2));
        pi.labels = Arrays.copyOf(pi.labels, pi.verdict.length);
      }
      if (pi.verdict[id] == UNKNOWN) {
        judge(inst, pi, id);
      }
      if (pi.verdict[id] == FAIL) {
        continue;
      }
      for (int j = d.measStart[e]; j < d.measStart[e + 1]; j++) {
        int attr = d.measAttr[j];
        long key = ((long) id << 32) | attr;
        int g = pi.groupOf.get(key);
        if (g == LongIntMap.MISSING) {
          g = overflowedBefore(pi, key);
          if (g == LongIntMap.MISSING) {
            g = resolve(pi, pi.labels[id], attr);
            if (g < 0) { // kept apart, so that room coming free lets the tuple in
              g = -g - 1;
              pi.overflowed.put(key, g);
            } else {
              pi.groupOf.put(key, g);
            }
          }
          if (groups.isOverflow(g)) {
            overflowed++;
          }
        }
        merge(groups.cumulative(g), d, j);
        if (slot >= 0) {
          merge(groups.window(slot, g), d, j);
        }
      }
    }
    if (overflowed > 0) {
      metrics.overflowed(def.name(), overflowed);
    }
    return overflowed;
  }

  /** The overflow group {@code key} went to, while no group was removed since; else MISSING. */
  private int overflowedBefore(PerInstance pi, long key) {
    if (pi.removalsSeen != removals) {
      pi.overflowed = new LongIntMap();
      pi.removalsSeen = removals;
      return LongIntMap.MISSING;
    }
    return pi.overflowed.get(key);
  }

  /** Runs WHERE on the record of tuple {@code id} and renders its labels. */
  private void judge(Instance inst, PerInstance pi, int id) {
    Map<String, Object> record = new LinkedHashMap<>();
    record.put(SchemeDefinition.SERVICE, inst.key.service());
    record.put(SchemeDefinition.INSTANCE, inst.key.instance());
    for (int s = 0; s < slotNames.size(); s++) {
      int attr = (int) tuple[2 * s];
      if (attr != 0) {
        record.put(slotNames.get(s), value(attr, tuple[2 * s + 1]));
      }
    }
    Object region = record.get(SchemeDefinition.REGION);
    if (region instanceof PathValue p) {
      record.put(SchemeDefinition.PATH, p.node.path());
      if (!record.containsKey(SchemeDefinition.KIND) && !p.node.kind().isEmpty()) {
        record.put(SchemeDefinition.KIND, p.node.kind());
      }
    }
    Map<String, Object> forWhere = new LinkedHashMap<>();
    record.forEach((k, v) -> forWhere.put(k, v instanceof PathValue p ? p.segments() : v));
    boolean pass = def.whereAttributes().isEmpty() || def.evaluator().passesWhere(forWhere);
    pi.verdict[id] = pass ? PASS : FAIL;
    if (pass) {
      List<String> labels = new ArrayList<>(def.groupBy().size());
      for (String g : def.groupBy()) {
        Object v = record.get(g);
        labels.add(v == null ? "" : v instanceof PathValue p ? p.node.path() : String.valueOf(v));
      }
      pi.labels[id] = Collections.unmodifiableList(labels);
    }
  }

  /** A path-valued attribute: WHERE sees its segments, labels its joined path. */
  private record PathValue(PathNode node) {
    List<String> segments() {
      return List.of(node.path().split("/", -1));
    }
  }

  private Object value(int attr, long v) {
    AttributeType type = dictionary.attribute(attr).type();
    return switch (type) {
      case STRING -> dictionary.string((int) v);
      case INT -> v;
      case DOUBLE -> Double.longBitsToDouble(v);
      case BOOL -> v != 0;
      case PATH -> v == 0 ? "" : new PathValue(dictionary.pathNode((int) v));
    };
  }

  /**
   * The group of (labels, measurement) fed by {@code pi}, created when new; an overflow group is
   * returned as {@code -id - 1}.
   */
  private int resolve(PerInstance pi, List<String> labels, int attr) {
    GroupKey key = new GroupKey(labels, attr);
    Integer known = groupIds.get(key);
    int g;
    if (known != null) {
      g = known;
    } else if (groups.hasRoom()) {
      g = groups.add(labels, measure(attr), false);
      groupIds.put(key, g);
      if (g >= keyOf.length) {
        keyOf = Arrays.copyOf(keyOf, Math.max(g + 1, keyOf.length * 2));
        feeders = Arrays.copyOf(feeders, keyOf.length);
      }
      keyOf[g] = key;
      feeders[g] = 0;
    } else {
      return -overflowGroup(attr) - 1;
    }
    if (pi.fed.get(g) == LongIntMap.MISSING) {
      pi.fed.put(g, 1);
      feeders[g]++;
    }
    return g;
  }

  private int overflowGroup(int attr) {
    int g = overflowGroups.get(attr);
    if (g == LongIntMap.MISSING) {
      List<String> labels = Collections.nCopies(def.groupBy().size(), FoldEngine.OVERFLOW);
      g = groups.add(labels, measure(attr), true);
      overflowGroups.put(attr, g);
    }
    return g;
  }

  private static void merge(Aggregate into, DecodedDelta d, int j) {
    into.mergeMoments(d.count[j], d.sum[j], d.min[j], d.max[j], d.sumOfSquares[j]);
    if (d.posLen[j] > 0 || d.negLen[j] > 0 || d.zeroCount[j] > 0) {
      into.histogram()
          .mergeSparse(
              d.scale[j],
              d.zeroCount[j],
              d.bucketIndex,
              d.bucketCount,
              d.posFrom[j],
              d.posLen[j],
              d.negFrom[j],
              d.negLen[j]);
    }
  }

  /**
   * Slot of the tuple that attribute {@code attr} fills, or -1 when the scheme does not read it.
   */
  private int slotOf(int attr) {
    if (attr >= attrSlot.length) {
      attrSlot = Arrays.copyOf(attrSlot, Math.max(attr + 1, attrSlot.length * 2));
    }
    int known = attrSlot[attr];
    if (known == 0) {
      Attribute a = dictionary.attribute(attr);
      int s = a.measurement() ? -1 : slotNames.indexOf(a.name());
      if (s >= 0 && a.name().equals(SchemeDefinition.REGION) && a.type() != AttributeType.PATH) {
        s = -1; // path and kind come from the region path only
      }
      known = s >= 0 ? s + 1 : -1;
      attrSlot[attr] = known;
    }
    return known - 1 < 0 ? -1 : known - 1;
  }

  private Measure measure(int attr) {
    if (attr >= measures.length) {
      measures = Arrays.copyOf(measures, Math.max(attr + 1, measures.length * 2));
    }
    Measure m = measures[attr];
    if (m == null) {
      Attribute a = dictionary.attribute(attr);
      m = new Measure(a.name(), a.unit());
      measures[attr] = m;
    }
    return m;
  }

  // ---- instances ----

  /** The instance restarted: its own groups start their cumulative state again. */
  void restart(Instance inst) {
    PerInstance pi = perInstance.get(inst);
    if (pi != null && def.perInstance()) {
      pi.fed.forEach((g, one) -> groups.resetCumulative((int) g));
    }
  }

  /** The instance expired: groups nobody else feeds go. */
  void forget(Instance inst) {
    PerInstance pi = perInstance.remove(inst);
    if (pi == null) {
      return;
    }
    pi.fed.forEach(
        (group, one) -> {
          int g = (int) group;
          if (--feeders[g] == 0) {
            groupIds.remove(keyOf[g]);
            keyOf[g] = null;
            groups.remove(g);
            removals++;
          }
        });
  }

  // ---- windows ----

  /** Window slot for the delta, or -1 when outside the open windows ({@code late[0]} set). */
  private int slotFor(DecodedDelta d, boolean[] late) {
    long mid = d.startUnixNanos + (d.endUnixNanos - d.startUnixNanos) / 2;
    long w = Math.floorDiv(mid, intervalNanos);
    if (w < currentWindow - 1 || w > currentWindow + 1) {
      late[w < currentWindow - 1 ? 0 : 1] = true;
      return -1;
    }
    int slot = (int) Math.floorMod(w, (long) GroupTable.SLOTS);
    slotWindow[slot] = w; // any older window in this slot was closed by advance()
    return slot;
  }

  /**
   * Closes the windows that passed their lateness, retaining each (an interval without data is
   * retained empty, so the retained intervals are consecutive); true when one closed.
   */
  boolean advance(long now, IntervalListener listener) {
    long cur = Math.floorDiv(now, intervalNanos);
    if (cur <= currentWindow) { // a clock stepping back closes nothing
      return false;
    }
    long firstClosed = Math.max(currentWindow - 1, cur - 1 - def.retention());
    currentWindow = cur;
    for (long w = firstClosed; w < cur - 1; w++) {
      retain(w, closeSlotOf(w), listener);
    }
    closeStale(cur - 1);
    return true;
  }

  /** Closes every open window with data (at shutdown), the newest possibly partial. */
  boolean closeAll(IntervalListener listener) {
    boolean closed = false;
    while (true) {
      int oldest = -1;
      for (int s = 0; s < GroupTable.SLOTS; s++) {
        if (slotWindow[s] != NO_WINDOW && (oldest < 0 || slotWindow[s] < slotWindow[oldest])) {
          oldest = s;
        }
      }
      if (oldest < 0) {
        return closed;
      }
      retain(slotWindow[oldest], closeSlotOf(slotWindow[oldest]), listener);
      closed = true;
    }
  }

  /** The series of window {@code w}, closing its slot; empty when it had no data. */
  private List<SeriesSnapshot> closeSlotOf(long w) {
    int slot = (int) Math.floorMod(w, (long) GroupTable.SLOTS);
    if (slotWindow[slot] != w) {
      return List.of();
    }
    slotWindow[slot] = NO_WINDOW;
    return groups.close(slot);
  }

  /** Empties slots still holding windows before {@code firstOpen} (after a clock jump). */
  private void closeStale(long firstOpen) {
    for (int s = 0; s < GroupTable.SLOTS; s++) {
      if (slotWindow[s] != NO_WINDOW && slotWindow[s] < firstOpen) {
        groups.close(s);
        slotWindow[s] = NO_WINDOW;
      }
    }
  }

  private void retain(long w, List<SeriesSnapshot> series, IntervalListener listener) {
    IntervalSnapshot closed =
        new IntervalSnapshot(w * intervalNanos, (w + 1) * intervalNanos, series);
    retained.addLast(closed);
    if (!series.isEmpty()) {
      listener.closed(def.name(), def.labelNames(), closed);
    }
    while (retained.size() > def.retention()) {
      retained.removeFirst();
    }
  }

  // ---- snapshots ----

  SchemeSnapshot snapshot() {
    IntervalSnapshot last = retained.peekLast();
    return new SchemeSnapshot(
        def.name(),
        def.labelNames(),
        groups.cumulativeSnapshot(),
        last == null ? List.of() : last.series(),
        last == null ? 0 : last.endUnixNanos(),
        groups.size(),
        def.query(),
        intervalNanos,
        List.copyOf(retained));
  }

  /** Groups held, overflow groups included. */
  int size() {
    return groups.size();
  }
}
