package dev.profold.collector.fold;

import dev.profold.collector.dictionary.Attribute;
import dev.profold.collector.dictionary.AttributeType;
import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.dictionary.PathNode;
import dev.profold.collector.ingest.DecodedDelta;
import dev.profold.collector.ingest.SourceKey;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.LongIntMap;
import dev.profold.sinks.snapshot.CollectorSnapshot;
import dev.profold.sinks.snapshot.Measure;
import dev.profold.sinks.snapshot.SchemeSnapshot;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import dev.profold.sinks.snapshot.SourceSnapshot;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Folds decoded deltas into per-interval windows and cumulative state, tracks sources (sequence
 * numbers, duplicates, gaps, incarnations, expiry) and produces snapshots.
 *
 * <p><b>Windows.</b> Tumbling windows of {@code interval}, aligned to the unix epoch. A delta
 * belongs to the window holding the midpoint of its own interval. With {@code cur} the window of
 * the collector's clock, windows {@code cur-1}, {@code cur} and {@code cur+1} are open (one
 * interval of allowed lateness, and one of tolerated client clock skew); window {@code w} closes
 * once the clock reaches {@code (w+2) * interval}. Data for any other window is folded into the
 * cumulative state only and counted ({@code late} or {@code future}).
 *
 * <p><b>Sources.</b> Per service instance: the current incarnation and the last applied sequence
 * number. A delta whose sequence is not above it is a duplicate (acknowledged, not applied). A new
 * incarnation with a later (or equal) process start replaces the current one and resets the
 * instance's cumulative state (a counter reset for Prometheus); one with an earlier start is
 * rejected. An instance silent for {@code ttlIntervals} intervals expires and its groups go.
 *
 * <p><b>Built-in scheme</b> ({@value #SCHEME}): groups by service, instance, region path (the
 * entry's PATH attribute named {@code region}; none gives an empty path) and measurement, with the
 * leaf region's kind as a label. Beyond {@code cardinalityLimit} groups, further groups fold into
 * one overflow group per measurement, labelled {@value #OVERFLOW}.
 *
 * <p>Not thread-safe: one thread (the fold thread, see {@link FoldWorker}) calls everything.
 * Steady-state folding of an entry allocates nothing.
 */
public final class FoldEngine {
  /** Name of the built-in scheme. */
  public static final String SCHEME = "region";

  /** Label value of the overflow groups. */
  public static final String OVERFLOW = "_overflow_";

  static final List<String> LABELS = List.of("service", "instance", "path", "kind");
  private static final long NO_WINDOW = Long.MIN_VALUE;

  private final FoldConfig config;
  private final GlobalDictionary dictionary;
  private final InstantSource clock;
  private final CollectorMetrics metrics;
  private final GroupTable groups;
  private final Map<SourceKey, Instance> instances = new HashMap<>();
  private final LongIntMap overflowGroups = new LongIntMap();
  private final long[] slotWindow = new long[GroupTable.SLOTS];
  private byte[] regionAttribute = new byte[64]; // 0 unknown, 1 region, 2 other
  private Measure[] measures = new Measure[64];
  private long currentWindow;
  private List<SeriesSnapshot> lastInterval = List.of();
  private long lastIntervalEnd;
  private long version;
  private long nextExpiryCheck;

  public FoldEngine(
      FoldConfig config,
      GlobalDictionary dictionary,
      InstantSource clock,
      CollectorMetrics metrics) {
    this.config = config;
    this.dictionary = dictionary;
    this.clock = clock;
    this.metrics = metrics;
    this.groups = new GroupTable(config.cardinalityLimit(), config.histogramMaxScale());
    Arrays.fill(slotWindow, NO_WINDOW);
    currentWindow = Math.floorDiv(nowNanos(), config.intervalNanos());
  }

  private long nowNanos() {
    java.time.Instant t = clock.instant();
    return t.getEpochSecond() * 1_000_000_000L + t.getNano();
  }

  /** Incremented by every change visible in a snapshot. */
  public long version() {
    return version;
  }

  /** Applies one delta; see the class comment for the rules. */
  public FoldResult apply(DecodedDelta d) {
    long started = System.nanoTime();
    long now = nowNanos();
    advance(now);
    Instance inst = instances.get(d.source);
    if (inst == null) {
      inst = new Instance(d.source, d.info);
      // First contact (a new source, or one this collector forgot): earlier sequence numbers
      // were never ours to receive, so they are not a gap.
      inst.lastSequence = d.coveredFrom() - 1;
      instances.put(d.source, inst);
      metrics.activeSources(instances.size());
    } else if (inst.info.incarnation() != d.info.incarnation()) {
      if (d.info.processStartUnixNanos() < inst.info.processStartUnixNanos()) {
        metrics.deltaRejected("superseded_incarnation");
        return FoldResult.rejected(
            FoldResult.Reason.SUPERSEDED_INCARNATION,
            "source: incarnation "
                + Long.toUnsignedString(d.info.incarnation())
                + " of "
                + d.source
                + " started before the current one ("
                + Long.toUnsignedString(inst.info.incarnation())
                + "); two processes report the same service and instance names, give each its"
                + " own instance name");
      }
      restart(inst, d);
    }
    inst.lastSeenNanos = now;
    if (d.sequence <= inst.lastSequence) {
      metrics.deltaDuplicate();
      return FoldResult.duplicate();
    }
    if (d.coveredFrom() <= inst.lastSequence) {
      metrics.deltaRejected("overlapping_sequences");
      return FoldResult.rejected(
          FoldResult.Reason.OVERLAPPING_SEQUENCES,
          "first_sequence: this merged delta covers sequences "
              + d.coveredFrom()
              + ".."
              + d.sequence
              + " but "
              + inst.lastSequence
              + " was already applied; merge only deltas that were never sent");
    }
    long gap = d.coveredFrom() - inst.lastSequence - 1;
    if (gap > 0) {
      inst.missingDeltas += gap;
      metrics.missingDeltas(gap);
    }
    int slot = slotFor(d);
    int overflowed = fold(inst, d, slot);
    inst.lastSequence = d.sequence;
    inst.clientCpuNanos += d.clientCpuNanos;
    inst.clientEventsDropped += d.clientEventsDropped;
    inst.clientBytesHeld = d.clientBytesHeld;
    version++;
    metrics.deltaApplied(d.entries);
    metrics.foldNanos(System.nanoTime() - started);
    return FoldResult.applied(overflowed);
  }

  private void restart(Instance inst, DecodedDelta d) {
    inst.groups.forEach((key, group) -> groups.resetCumulative(group));
    inst.restart(d.info);
    metrics.sourceRestarted();
  }

  /** Window slot for the delta, or -1 when outside the open windows (counted). */
  private int slotFor(DecodedDelta d) {
    long mid = d.startUnixNanos + (d.endUnixNanos - d.startUnixNanos) / 2;
    long w = Math.floorDiv(mid, config.intervalNanos());
    if (w < currentWindow - 1) {
      metrics.lateMeasurements(d.measurements());
      return -1;
    }
    if (w > currentWindow + 1) {
      metrics.futureMeasurements(d.measurements());
      return -1;
    }
    int slot = (int) Math.floorMod(w, (long) GroupTable.SLOTS);
    slotWindow[slot] = w; // any older window in this slot was closed by advance()
    return slot;
  }

  private int fold(Instance inst, DecodedDelta d, int slot) {
    int overflowed = 0;
    for (int e = 0; e < d.entries; e++) {
      int path = 0;
      for (int k = d.keyStart[e]; k < d.keyStart[e + 1]; k++) {
        if (isRegion(d.keyAttr[k])) {
          path = (int) d.keyValue[k];
          break;
        }
      }
      for (int j = d.measStart[e]; j < d.measStart[e + 1]; j++) {
        int attr = d.measAttr[j];
        long key = ((long) path << 32) | attr;
        int g = inst.groups.get(key);
        if (g == LongIntMap.MISSING) {
          if (groups.hasRoom()) {
            g = groups.add(labels(inst, path), measure(attr), false);
            inst.groups.put(key, g);
          } else {
            g = overflowGroup(attr);
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
      metrics.overflowed(SCHEME, overflowed);
    }
    return overflowed;
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

  private int overflowGroup(int attr) {
    int g = overflowGroups.get(attr);
    if (g == LongIntMap.MISSING) {
      g = groups.add(List.of(OVERFLOW, OVERFLOW, OVERFLOW, ""), measure(attr), true);
      overflowGroups.put(attr, g);
    }
    return g;
  }

  private List<String> labels(Instance inst, int path) {
    if (path == 0) {
      return List.of(inst.key.service(), inst.key.instance(), "", "");
    }
    PathNode node = dictionary.pathNode(path);
    return List.of(inst.key.service(), inst.key.instance(), node.path(), node.kind());
  }

  private boolean isRegion(int attr) {
    if (attr >= regionAttribute.length) {
      regionAttribute =
          Arrays.copyOf(regionAttribute, Math.max(attr + 1, regionAttribute.length * 2));
    }
    byte known = regionAttribute[attr];
    if (known == 0) {
      Attribute a = dictionary.attribute(attr);
      known = (byte) (a.type() == AttributeType.PATH && a.name().equals("region") ? 1 : 2);
      regionAttribute[attr] = known;
    }
    return known == 1;
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

  /**
   * Brings windows and sources up to the clock: closes windows that passed their lateness and
   * expires silent instances.
   */
  public void advance() {
    advance(nowNanos());
  }

  private void advance(long now) {
    long cur = Math.floorDiv(now, config.intervalNanos());
    if (cur > currentWindow) { // a new window (a clock stepping back closes nothing)
      currentWindow = cur;
      closeWindowsBefore(cur - 1);
    }
    if (now >= nextExpiryCheck) { // windows first: an expiring source's data is closed already
      nextExpiryCheck = now + Math.max(1_000_000L, config.intervalNanos() / 10);
      expire(now);
    }
  }

  private void closeWindowsBefore(long firstOpen) {
    long newest = firstOpen - 1;
    List<SeriesSnapshot> newestSeries = List.of();
    for (int s = 0; s < GroupTable.SLOTS; s++) {
      if (slotWindow[s] != NO_WINDOW && slotWindow[s] < firstOpen) {
        List<SeriesSnapshot> closed = groups.close(s);
        if (slotWindow[s] == newest) {
          newestSeries = closed;
        }
        slotWindow[s] = NO_WINDOW;
      }
    }
    lastInterval = newestSeries;
    lastIntervalEnd = (newest + 1) * config.intervalNanos();
    version++;
  }

  private void expire(long now) {
    long ttl = config.intervalNanos() * config.sourceTtlIntervals();
    Iterator<Instance> it = instances.values().iterator();
    while (it.hasNext()) {
      Instance inst = it.next();
      if (now - inst.lastSeenNanos >= ttl) {
        inst.groups.forEach((key, group) -> groups.remove(group));
        it.remove();
        metrics.sourceExpired();
        version++;
      }
    }
    metrics.activeSources(instances.size());
  }

  /**
   * Closes every open window now (at shutdown): the newest becomes the last closed interval, even
   * though it may be partial.
   */
  public void closeAll() {
    long newest = NO_WINDOW;
    List<SeriesSnapshot> newestSeries = List.of();
    for (int s = 0; s < GroupTable.SLOTS; s++) {
      if (slotWindow[s] != NO_WINDOW) {
        List<SeriesSnapshot> closed = groups.close(s);
        if (slotWindow[s] > newest) {
          newest = slotWindow[s];
          newestSeries = closed;
        }
        slotWindow[s] = NO_WINDOW;
      }
    }
    if (newest != NO_WINDOW) {
      lastInterval = newestSeries;
      lastIntervalEnd = (newest + 1) * config.intervalNanos();
      version++;
    }
  }

  /** An immutable copy of everything exposed. */
  public CollectorSnapshot snapshot() {
    SchemeSnapshot scheme =
        new SchemeSnapshot(
            SCHEME,
            LABELS,
            groups.cumulativeSnapshot(),
            lastInterval,
            lastIntervalEnd,
            groups.size(),
            "SELECT sum(time) GROUP BY service, instance, path, kind",
            config.intervalNanos(),
            lastIntervalEnd == 0
                ? List.of()
                : List.of(
                    new dev.profold.sinks.snapshot.IntervalSnapshot(
                        lastIntervalEnd - config.intervalNanos(), lastIntervalEnd, lastInterval)));
    List<SourceSnapshot> sources = new ArrayList<>(instances.size());
    for (Instance i : instances.values()) {
      sources.add(
          new SourceSnapshot(
              i.key.service(),
              i.key.instance(),
              i.info.host(),
              i.info.runtimeVersion(),
              i.info.sdkVersion(),
              i.info.processStartUnixNanos(),
              i.lastSequence,
              i.missingDeltas,
              i.clientCpuNanos,
              i.clientEventsDropped,
              i.clientBytesHeld));
    }
    return new CollectorSnapshot(List.of(scheme), sources);
  }

  /** Number of live instances. */
  public int activeSources() {
    return instances.size();
  }
}
