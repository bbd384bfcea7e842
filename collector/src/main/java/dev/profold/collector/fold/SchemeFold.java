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
import java.util.BitSet;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * that sent data to it expires, its cumulative state goes (it leaves /metrics), and the group
 * itself is removed once no open window holds its data any more. A scheme's interval can be longer
 * than a source's time to live, so the last data of a source that went away is still reported in
 * its window; an instance sending the same labels before then feeds the group again. When an
 * instance restarts, the cumulative state of its groups restarts too if the scheme groups by {@code
 * instance} (the groups are that instance's own); shared groups keep counting. Overflow groups (one
 * per measurement, labelled {@value FoldEngine#OVERFLOW}) stay.
 *
 * <p><b>Windows</b> follow {@link FoldEngine}'s rules with the scheme's own interval. Each closed
 * window with data is retained, up to the scheme's retention.
 *
 * <p>Not thread-safe: owned by the fold thread.
 */
final class SchemeFold {
  private static final Logger log = LoggerFactory.getLogger(SchemeFold.class);

  private boolean warnedShorterThanDeltas;

  /** Unmerged deltas in a row over 1.5 scheme intervals long; {@link #LONG_DELTAS_TO_WARN} warn. */
  private int longDeltasInARow;

  static final int LONG_DELTAS_TO_WARN = 10;

  /** Groups removed so far, and that count when an overflow was last decided. */
  private long removedGroups;

  private long removedGroupsAtOverflow = -1;

  /** Keys judged so far (WHERE evaluated, labels built): the slow path, for tests. */
  private long resolutions;

  long resolutions() {
    return resolutions;
  }

  private static final long NO_WINDOW = Long.MIN_VALUE;

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
  private final Map<Measure, Integer> overflowGroups = new HashMap<>();
  private final BitSet retiring = new BitSet(); // groups no instance feeds, kept for open windows
  private final int maxKeysPerInstance;
  private final long[] slotWindow = new long[GroupTable.SLOTS];
  private long currentWindow;
  private final ArrayDeque<IntervalSnapshot> retained = new ArrayDeque<>();
  private boolean saturationLogged;

  /** Characters in the labels of the regular groups held, at most {@link #maxLabelChars}. */
  private long labelChars;

  private final long maxLabelChars;
  private boolean labelCharsLogged;

  /** Labels and measurement attribute of a group. */
  /**
   * A group's identity: its labels and its measurement's name and unit, not the attribute: two
   * clients may send a measurement of one name and unit as an integer and as a float (two
   * attributes), and its values are one measurement.
   */
  private record GroupKey(List<String> labels, Measure measure) {}

  /**
   * What the scheme keeps per instance: its (tuple, measurement) keys and where each goes: a group
   * id, {@link #FILTERED} (WHERE did not hold), or {@code OVERFLOWED - g} (overflow group g, used
   * while the scheme has no room).
   */
  private static final class PerInstance {
    private final int width;
    TupleTable keys;
    final LongIntMap fed = LongIntMap.seeded(); // groups this instance fed (as a set)
    LongIntMap packed = LongIntMap.seeded(); // packed one-slot key -> regular group

    PerInstance(int width) {
      this.width = width;
      keys = new TupleTable(width);
    }

    void forgetKeys() {
      keys = new TupleTable(width);
      packed = LongIntMap.seeded();
    }
  }

  private static final int FILTERED = -2;
  private static final int OVERFLOWED = -3;

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
    this.maxKeysPerInstance = maxKeysPerInstance(def.cardinalityLimit());
    this.maxLabelChars = maxLabelChars(def.cardinalityLimit());
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
    this.tuple = new long[2 * slotNames.size() + 1]; // the slots, then the measurement
    Arrays.fill(slotWindow, NO_WINDOW);
    currentWindow = Math.floorDiv(nowNanos, intervalNanos);
  }

  /**
   * How many (tuple, measurement) keys an instance may cache: a client sending ever new attribute
   * values (request ids, say) must not grow the collector's memory without bound, even where its
   * entries only go to overflow groups or fail WHERE. Beyond it, entries are judged every time.
   */
  /**
   * Characters the labels of a scheme's groups may hold together: 8192 per group of the cardinality
   * limit. Labels are what a group costs beyond its states, and a path label may be long (a path
   * node's name may have 4096 bytes, and a path many nodes): without a bound, a client sending deep
   * paths of long names could make each group hold megabytes. Beyond it new groups overflow, as at
   * the cardinality limit.
   */
  static long maxLabelChars(int cardinalityLimit) {
    return 8192L * cardinalityLimit;
  }

  static int maxKeysPerInstance(int cardinalityLimit) {
    return (int) Math.min(1 << 24, Math.max(4096L, 4L * cardinalityLimit));
  }

  /**
   * Empties every instance's cache of judged keys, which are tuples of dictionary ids, and what the
   * scheme read of each attribute id (its slot, its measurement): the dictionary is about to hand
   * out freed ids again, and an id naming something new must not find the judgement of what it
   * named before. Later entries are judged again, into the same groups.
   */
  void forgetKeys() {
    for (PerInstance pi : perInstance.values()) {
      pi.forgetKeys();
    }
    Arrays.fill(attrSlot, 0);
    Arrays.fill(measures, null);
  }

  /** Keys cached over all instances (for tests and telemetry). */
  int keysHeld() {
    int n = 0;
    for (PerInstance pi : perInstance.values()) {
      n += pi.keys.size();
    }
    return n;
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
   * @return measurements that went to an overflow group; {@code late[0]} ({@code late[1]}) is set
   *     when the delta's window was already closed (not open yet)
   */
  int fold(Instance inst, DecodedDelta d, boolean[] late) {
    int slot = slotFor(d, late);
    PerInstance pi = perInstance.get(inst);
    if (pi == null) {
      pi = new PerInstance(tuple.length);
      perInstance.put(inst, pi);
    }
    int overflowed = 0;
    int last = tuple.length - 1;
    for (int e = 0; e < d.entries; e++) {
      Arrays.fill(tuple, 0L);
      int filled = 0;
      long oneAttr = 0;
      long oneValue = 0;
      for (int k = d.keyStart[e]; k < d.keyStart[e + 1]; k++) {
        int s = slotOf(d.keyAttr[k]);
        if (s >= 0) {
          tuple[2 * s] = d.keyAttr[k];
          tuple[2 * s + 1] = d.keyValue[k];
          oneAttr = d.keyAttr[k];
          oneValue = d.keyValue[k];
          filled++;
        }
      }
      for (int j = d.measStart[e]; j < d.measStart[e + 1]; j++) {
        int attr = d.measAttr[j];
        tuple[last] = attr;
        // At most one slot filled (the usual case: the region path): an attribute id names its
        // slot, so (attribute, value, measurement) is the whole key; packed into one long, it is
        // looked up in a plain LongIntMap holding regular groups. Anything else takes the table.
        long packed = filled <= 1 ? pack(oneAttr, oneValue, attr) : -1;
        int g = packed >= 0 ? pi.packed.get(packed) : LongIntMap.MISSING;
        if (g == LongIntMap.MISSING) {
          g = pi.keys.get(tuple);
          if (g >= 0 && packed >= 0) {
            if (pi.packed.size() < maxKeysPerInstance) {
              pi.packed.put(packed, g);
            }
          }
        }
        if (g < 0) {
          if (g == FILTERED) {
            continue;
          }
          // New, or room may have come free: a group went since the last overflow was decided
          // (with room for groups but not for their labels, every overflowed key was judged
          // again on every entry).
          if (g == TupleTable.NO_VALUE
              || (groups.hasRoom() && removedGroups != removedGroupsAtOverflow)) {
            g = resolve(inst, pi, attr);
            if (pi.keys.size() < maxKeysPerInstance) {
              pi.keys.put(tuple, g); // beyond the bound: judged again each time, memory stays put
            }
            if (g == FILTERED) {
              continue;
            }
          }
          if (g <= OVERFLOWED) {
            g = OVERFLOWED - g;
            overflowed++;
          }
        }
        if (merge(groups.cumulative(g), d, j)) {
          saturated(inst, g);
        }
        if (slot >= 0 && merge(groups.window(slot, g), d, j)) {
          saturated(inst, g);
        }
      }
    }
    if (overflowed > 0) {
      metrics.overflowed(def.name(), overflowed);
    }
    return overflowed;
  }

  /**
   * A tuple of at most one filled slot, (attribute id, value) (0, 0 when none), with measurement
   * {@code attr} as one non-negative long, or -1 when it does not fit (attribute ids of 15 and 16
   * bits, a value of 31 bits).
   */
  private static long pack(long slotAttr, long value, int attr) {
    if (slotAttr >= 1 << 15 || attr >= 1 << 16 || value < 0 || value > Integer.MAX_VALUE) {
      return -1;
    }
    return (slotAttr << 47) | ((long) attr << 31) | value;
  }

  /** Runs WHERE on the record of the current tuple; its labels, or null when WHERE fails. */
  private List<String> judge(Instance inst) {
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
      record.put(SchemeDefinition.PATH, p.path);
      if (!record.containsKey(SchemeDefinition.KIND) && !p.node.kind().isEmpty()) {
        record.put(SchemeDefinition.KIND, p.node.kind());
      }
    }
    if (!def.whereAttributes().isEmpty()) { // a path's names are split only for a WHERE
      Map<String, Object> forWhere = new LinkedHashMap<>();
      record.forEach((k, v) -> forWhere.put(k, v instanceof PathValue p ? p.segments() : v));
      if (!def.evaluator().passesWhere(forWhere)) {
        return null;
      }
    }
    List<String> labels = new ArrayList<>(def.groupBy().size());
    for (String g : def.groupBy()) {
      Object v = record.get(g);
      labels.add(v == null ? "" : v instanceof PathValue p ? p.path : String.valueOf(v));
    }
    return Collections.unmodifiableList(labels);
  }

  /** A path-valued attribute: WHERE sees its segments, labels its joined path. */
  private record PathValue(PathNode node, String path) {
    List<String> segments() {
      return List.of(path.split("/", -1));
    }
  }

  private Object value(int attr, long v) {
    AttributeType type = dictionary.attribute(attr).type();
    return switch (type) {
      case STRING -> dictionary.string((int) v);
      case INT -> v;
      case DOUBLE -> Double.longBitsToDouble(v);
      case BOOL -> v != 0;
      case PATH ->
          v == 0 ? "" : new PathValue(dictionary.pathNode((int) v), dictionary.path((int) v));
    };
  }

  /**
   * The group of the current tuple with measurement {@code attr} fed by {@code pi}, created when
   * new: {@link #FILTERED} when WHERE does not hold, overflow group {@code g} as {@code OVERFLOWED
   * - g}.
   */
  private int resolve(Instance inst, PerInstance pi, int attr) {
    resolutions++;
    List<String> labels = judge(inst);
    if (labels == null) {
      return FILTERED;
    }
    GroupKey key = new GroupKey(labels, measure(attr));
    Integer known = groupIds.get(key);
    int g;
    if (known != null) {
      g = known;
    } else if (groups.hasRoom() && labelRoom(labels, inst)) {
      g = groups.add(labels, measure(attr), false);
      labelChars += chars(labels);
      groupIds.put(key, g);
      if (g >= keyOf.length) {
        keyOf = Arrays.copyOf(keyOf, Math.max(g + 1, keyOf.length * 2));
        feeders = Arrays.copyOf(feeders, keyOf.length);
      }
      keyOf[g] = key;
      feeders[g] = 0;
    } else {
      removedGroupsAtOverflow = removedGroups;
      return OVERFLOWED - overflowGroup(attr);
    }
    if (pi.fed.get(g) == LongIntMap.MISSING) {
      pi.fed.put(g, 1);
      feeders[g]++;
    }
    return g;
  }

  /**
   * Whether a new group with {@code labels} keeps the labels within {@link #maxLabelChars}; the
   * first time not, logged.
   */
  private boolean labelRoom(List<String> labels, Instance inst) {
    long chars = chars(labels);
    if (labelChars + chars <= maxLabelChars) {
      return true;
    }
    if (!labelCharsLogged) {
      labelCharsLogged = true;
      log.warn(
          "scheme {}: the labels of its groups hold {} characters, and a new group of {} (from {})"
              + " would take them over their bound of {} (8192 per group of cardinality_limit);"
              + " new groups go to the overflow group, counted in"
              + " profold_scheme_overflow_measurements_total. Labels this long come from very deep"
              + " paths or long names: check what the client sends (the agent's depth setting)",
          def.name(),
          labelChars,
          chars,
          inst.key,
          maxLabelChars);
    }
    return false;
  }

  private static long chars(List<String> labels) {
    long n = 0;
    for (String l : labels) {
      n += l.length();
    }
    return n;
  }

  private int overflowGroup(int attr) {
    Measure m = measure(attr);
    Integer known = overflowGroups.get(m);
    if (known != null) {
      return known;
    }
    int g = groups.add(Collections.nCopies(def.groupBy().size(), FoldEngine.OVERFLOW), m, true);
    overflowGroups.put(m, g);
    return g;
  }

  /**
   * Merges measurement {@code j} of {@code d} into {@code into}, the histogram first: it checks its
   * input before it changes anything, and the moments cannot fail, so a measurement is merged whole
   * or not at all.
   *
   * @return true when this merge saturated {@code into}'s count (see {@link Aggregate#saturated})
   */
  private static boolean merge(Aggregate into, DecodedDelta d, int j) {
    boolean was = into.saturated();
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
    into.mergeMoments(d.count[j], d.sum[j], d.min[j], d.max[j], d.sumOfSquares[j]);
    return !was && into.saturated();
  }

  /** Group {@code g}'s state saturated as {@code inst} fed it: counted, and the first logged. */
  private void saturated(Instance inst, int g) {
    metrics.countsSaturated(def.name());
    if (!saturationLogged) {
      saturationLogged = true;
      log.warn(
          "the count of group {} of scheme {} reached 2^63 - 1 as {} fed it and stops there; its"
              + " distribution is no longer exposed. Further ones are only counted in"
              + " profold_scheme_counts_saturated_total",
          g >= keyOf.length || keyOf[g] == null ? "(overflow)" : keyOf[g].labels(),
          def.name(),
          inst.key);
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

  /**
   * The instance restarted: the groups it alone feeds go (as when it expires, see {@link #forget}),
   * so that the new incarnation's series start from nothing and a group only the old one fed (a
   * call path it no longer takes) is not held against the cardinality limit until the instance
   * expires, which an instance that keeps its name and restarts within the TTL never does. What the
   * new incarnation sends makes its groups again, or takes back those still retiring.
   */
  void restart(Instance inst) {
    PerInstance pi = perInstance.get(inst);
    if (pi == null || !def.perInstance()) {
      return;
    }
    // Only the groups it alone feeds: GROUP BY instance without service can share a group
    // between two services' instances of the same name, and the other's totals go on.
    LongIntMap own = new LongIntMap();
    pi.fed.forEach(
        (g, one) -> {
          if (feeders[(int) g] == 1) {
            own.put(g, 1);
          }
        });
    if (own.size() == 0) {
      return;
    }
    own.forEach(
        (g, one) -> {
          pi.fed.remove(g);
          feeders[(int) g] = 0;
          release((int) g);
        });
    pi.forgetKeys(); // they map keys to the groups just released
  }

  /**
   * The instance expired: groups nobody else feeds go, at once or, when an open window holds data
   * of theirs, once that window has closed (their cumulative state goes at once).
   */
  void forget(Instance inst) {
    PerInstance pi = perInstance.remove(inst);
    if (pi == null) {
      return;
    }
    pi.fed.forEach(
        (group, one) -> {
          int g = (int) group;
          if (--feeders[g] == 0) {
            release(g);
          }
        });
  }

  /**
   * Group {@code g}, which nobody feeds now, goes: at once, or once no open window holds data of it
   * (its cumulative state goes at once).
   */
  private void release(int g) {
    if (groups.hasWindowData(g)) {
      groups.resetCumulative(g);
      retiring.set(g);
    } else {
      removeGroup(g);
    }
  }

  /** Removes the retiring groups that no instance fed again and no open window holds data of. */
  private void removeRetired() {
    for (int g = retiring.nextSetBit(0); g >= 0; g = retiring.nextSetBit(g + 1)) {
      if (feeders[g] > 0) {
        retiring.clear(g); // fed again before it went
      } else if (!groups.hasWindowData(g)) {
        retiring.clear(g);
        removeGroup(g);
      }
    }
  }

  private void removeGroup(int g) {
    removedGroups++;
    labelChars -= chars(keyOf[g].labels());
    groupIds.remove(keyOf[g]);
    keyOf[g] = null;
    groups.remove(g);
  }

  // ---- windows ----

  /** Window slot for the delta, or -1 when outside the open windows ({@code late[0]} set). */
  private int slotFor(DecodedDelta d, boolean[] late) {
    if (!warnedShorterThanDeltas) {
      warnIfShorterThanDeltas(d);
    }
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
   * Says once that deltas such as {@code d}, each one interval of its client, are longer than this
   * scheme's interval (see the body for "longer"): each delta goes whole to one window, so a
   * source's deltas leave some of the scheme's intervals without data (their interval values come
   * and go), and deltas over twice as long come after their window has closed (cumulative state
   * only). A merged delta (after an outage) is long for another reason, and says nothing.
   */
  private void warnIfShorterThanDeltas(DecodedDelta d) {
    long length = d.endUnixNanos - d.startUnixNanos;
    if (d.coveredFrom() != d.sequence) {
      return; // merged
    }
    // A client's delta is its interval give or take its flush's delay, and one flush late makes
    // one delta twice as long: only many deltas in a row half as long again as the scheme's
    // interval say that the interval is too short.
    if (length <= intervalNanos + intervalNanos / 2) {
      longDeltasInARow = 0;
      return;
    }
    if (++longDeltasInARow < LONG_DELTAS_TO_WARN) {
      return;
    }
    warnedShorterThanDeltas = true;
    log.warn(
        "scheme '{}': deltas of {} ms (from {}, among others perhaps) are longer than the"
            + " scheme's interval of {} ms; a delta goes whole to one interval, so some of the"
            + " scheme's intervals get no data from such a source, and a delta twice as long or"
            + " more arrives after its interval has closed (its cumulative series have it, its"
            + " interval values do not); set the scheme's interval to at least the clients'"
            + " (PROFOLD_INTERVAL, 10s by default)",
        def.name(),
        length / 1_000_000,
        d.source,
        intervalNanos / 1_000_000);
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
    if (firstClosed > currentWindow - 1) {
      passOverJump(firstClosed, cur, listener);
    }
    currentWindow = cur;
    for (long w = firstClosed; w < cur - 1; w++) {
      retain(w, closeSlotOf(w), listener);
    }
    closeStale(cur - 1);
    removeRetired();
    return true;
  }

  /**
   * The clock jumped ahead by more than the retention: the windows from before {@code firstClosed}
   * would be retained only to be pushed out by the empty ones after them, so they are not retained;
   * but those with data still go to {@code listener} (the archive), oldest first, and the jump is
   * logged.
   */
  private void passOverJump(long firstClosed, long cur, IntervalListener listener) {
    List<Long> stale = new ArrayList<>();
    for (int s = 0; s < GroupTable.SLOTS; s++) {
      if (slotWindow[s] != NO_WINDOW && slotWindow[s] < firstClosed) {
        stale.add(slotWindow[s]);
      }
    }
    stale.sort(null);
    for (long w : stale) {
      List<SeriesSnapshot> series = closeSlotOf(w);
      if (!series.isEmpty()) {
        listener.closed(
            def.name(),
            def.groupBy(),
            def.pathLabels(),
            new IntervalSnapshot(w * intervalNanos, (w + 1) * intervalNanos, series));
      }
    }
    log.warn(
        "scheme {}: the clock jumped {} intervals ahead (a suspended machine, or a clock step);"
            + " the intervals with data before the jump were closed and archived, and only the"
            + " last {} intervals after it are retained, empty",
        def.name(),
        cur - currentWindow,
        def.retention());
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
        removeRetired();
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
      listener.closed(def.name(), def.groupBy(), def.pathLabels(), closed);
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
        List.copyOf(retained),
        def.pathLabels(),
        def.groupBy());
  }

  /** Groups held, overflow groups included. */
  int size() {
    return groups.size();
  }
}
