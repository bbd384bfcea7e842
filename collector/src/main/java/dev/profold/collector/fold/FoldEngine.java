package dev.profold.collector.fold;

import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.ingest.DecodedDelta;
import dev.profold.collector.ingest.SourceKey;
import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.telemetry.RejectReason;
import dev.profold.sinks.snapshot.CollectorSnapshot;
import dev.profold.sinks.snapshot.SchemeSnapshot;
import dev.profold.sinks.snapshot.SourceSnapshot;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
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
 * rejected. An instance silent for {@code ttlIntervals} intervals expires and its groups go; its
 * incarnation's last sequence number is remembered, so that when it returns a delta it resends is
 * still a duplicate.
 *
 * <p><b>Schemes.</b> Every applied delta is folded into each configured scheme (see {@link
 * SchemeFold}); each has its own interval windows, following the rules above with its own interval.
 * {@link #reconfigure} swaps the scheme list, keeping the state of schemes whose definition did not
 * change.
 *
 * <p><b>Whole deltas.</b> A delta the decoder accepted folds without an exception: the decoder
 * checks every value the fold's reducers refuse (histogram scales and bucket indices), and counts
 * saturate rather than overflow. Should a fold fail all the same (a collector bug), the part of the
 * delta already folded cannot be taken out again: {@link #apply} then takes the delta's sequence as
 * applied, so that a resend is a duplicate rather than counted twice, and throws {@link
 * PartlyAppliedException}.
 *
 * <p>Not thread-safe: one thread (the fold thread, see {@link FoldWorker}) calls everything.
 * Steady-state folding of an entry allocates nothing.
 */
public final class FoldEngine {
  /** Name of the built-in scheme. */
  public static final String SCHEME = SchemeDefinition.BUILT_IN;

  /** Label value of the overflow groups. */
  public static final String OVERFLOW = "_overflow_";

  private final FoldConfig config;
  private final GlobalDictionary dictionary;
  private final InstantSource clock;
  private final CollectorMetrics metrics;
  private final Map<SourceKey, Instance> instances = new HashMap<>();
  private List<SchemeFold> schemes;
  private final boolean[] late = new boolean[2];
  private IntervalListener listener = (scheme, labels, paths, interval) -> {};
  private long version;
  private long nextExpiryCheck;

  /** The latest clock reading seen; Long.MIN_VALUE before the first. */
  private long latestNanos = Long.MIN_VALUE;

  /** Whether the clock stepped back and has not reached {@link #latestNanos} again. */
  private boolean steppedBack;

  private long nextSourceLimitLog = Long.MIN_VALUE;
  private static final long SOURCE_LIMIT_LOG_NANOS = 300_000_000_000L;
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(FoldEngine.class);

  /**
   * Expired sources, by source: {incarnation, last applied sequence}. A client cut off for longer
   * than the ttl resends what it holds unacknowledged, and one of those deltas may have been
   * applied with its ack lost: when the same incarnation returns, its sequence goes on from here,
   * so that the resend is a duplicate rather than counted twice. At most {@code maxSources}; the
   * least recently expired are forgotten first.
   */
  private final Map<SourceKey, long[]> expired =
      new java.util.LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<SourceKey, long[]> eldest) {
          return size() > config.maxSources();
        }
      };

  /** New sources refused, by source: {lowest sequence refused, last refused at}; see apply. */
  private final Map<SourceKey, long[]> refusedSources =
      new java.util.LinkedHashMap<>(16, 0.75f, true) { // access order: the least recent goes
        @Override
        protected boolean removeEldestEntry(Map.Entry<SourceKey, long[]> eldest) {
          return size() > config.maxSources();
        }
      };

  private final int recycleAfter;

  /** Retired dictionary ids that make the fold empty its caches and recycle them. */
  static int recycleAfter(int maxEntries) {
    return Math.max(1024, maxEntries / 16);
  }

  public FoldEngine(
      FoldConfig config,
      GlobalDictionary dictionary,
      InstantSource clock,
      CollectorMetrics metrics) {
    this.config = config;
    this.dictionary = dictionary;
    this.clock = clock;
    this.metrics = metrics;
    this.recycleAfter = recycleAfter(dictionary.maxEntries());
    List<SchemeFold> folds = new ArrayList<>();
    for (SchemeDefinition def : config.schemes()) {
      folds.add(newFold(def));
    }
    this.schemes = List.copyOf(folds);
    started(schemes);
  }

  /** Registers the overflow counters of {@code folds} at 0, for schemes that now run. */
  private void started(List<SchemeFold> folds) {
    for (SchemeFold f : folds) {
      metrics.schemeStarted(f.def.name());
    }
  }

  private SchemeFold newFold(SchemeDefinition def) {
    return new SchemeFold(def, dictionary, metrics, config.histogramMaxScale(), nowNanos());
  }

  /**
   * Replaces the schemes with {@code definitions}: a scheme whose definition is the same as a
   * current one's keeps its state; others start empty; schemes not listed go.
   *
   * @return the names of the schemes that kept their state
   */
  public List<String> reconfigure(List<SchemeDefinition> definitions) {
    Reconfiguration r = prepare(definitions);
    commit(r);
    return r.kept();
  }

  /** A scheme list made ready by {@link #prepare} and not yet in force. Immutable. */
  public static final class Reconfiguration {
    private final List<String> kept;
    private final List<SchemeFold> base;
    private final List<SchemeFold> next;

    private Reconfiguration(List<String> kept, List<SchemeFold> base, List<SchemeFold> next) {
      this.kept = List.copyOf(kept);
      this.base = base;
      this.next = List.copyOf(next);
    }

    /** The names of the schemes that keep their state. */
    public List<String> kept() {
      return kept;
    }
  }

  /**
   * Builds what {@link #reconfigure} would put in force, changing nothing yet; {@link #commit} puts
   * it in force. Call both in one task on the fold thread (the schemes must not change in between),
   * so that a reload can apply its other parts in between and swap the schemes only if they took.
   */
  public Reconfiguration prepare(List<SchemeDefinition> definitions) {
    List<SchemeFold> next = new ArrayList<>();
    List<String> kept = new ArrayList<>();
    for (SchemeDefinition def : definitions) {
      SchemeFold same = null;
      for (SchemeFold f : schemes) {
        if (f.def.sameAs(def)) {
          same = f;
        }
      }
      if (same != null) {
        kept.add(def.name());
        next.add(same);
      } else {
        next.add(newFold(def));
      }
    }
    return new Reconfiguration(kept, schemes, next);
  }

  /**
   * Puts a {@link #prepare}d scheme list in force.
   *
   * @throws IllegalStateException when the schemes changed since it was prepared (nothing changes)
   */
  @SuppressWarnings("ReferenceEquality") // the very list it was prepared against, not an equal one
  public void commit(Reconfiguration r) {
    if (r.base != schemes) {
      throw new IllegalStateException("the schemes changed since the reconfiguration was prepared");
    }
    java.util.Set<String> kept = new java.util.HashSet<>();
    for (SchemeFold f : r.next) {
      kept.add(f.def.name());
    }
    java.util.Set<SchemeFold> going = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
    going.addAll(schemes);
    r.next.forEach(going::remove);
    for (SchemeFold f : schemes) {
      if (going.contains(f)) {
        // Removed or changed (a changed scheme starts again empty): its open windows, up to now,
        // go to the archive as at a shutdown, not nowhere.
        f.closeAll(listener);
      }
      if (!kept.contains(f.def.name())) {
        metrics.schemeStopped(f.def.name());
      }
    }
    schemes = r.next;
    version++;
    started(schemes);
  }

  /** Sets who is told about closed intervals with data (one listener; replaces the previous). */
  public void onIntervalClosed(IntervalListener l) {
    this.listener = l;
  }

  /** Keys scheme {@code name} caches over all instances; 0 for an unknown scheme. For tests. */
  int keysHeld(String name) {
    for (SchemeFold f : schemes) {
      if (f.def.name().equals(name)) {
        return f.keysHeld();
      }
    }
    return 0;
  }

  /** The active scheme definitions, in order. */
  public List<SchemeDefinition> schemes() {
    List<SchemeDefinition> out = new ArrayList<>();
    for (SchemeFold f : schemes) {
      out.add(f.def);
    }
    return out;
  }

  private long nowNanos() {
    java.time.Instant t = clock.instant();
    return t.getEpochSecond() * 1_000_000_000L + t.getNano();
  }

  /** The fold of scheme {@code name}, for tests in this package. */
  SchemeFold fold(String name) {
    for (SchemeFold f : schemes) {
      if (f.def.name().equals(name)) {
        return f;
      }
    }
    throw new IllegalArgumentException("no scheme " + name);
  }

  /** Incremented by every change visible in a snapshot. */
  public long version() {
    return version;
  }

  /**
   * Applies one delta; see the class comment for the rules.
   *
   * @throws PartlyAppliedException when folding failed after it had begun (a collector bug); the
   *     delta's sequence then counts as applied
   */
  public FoldResult apply(DecodedDelta d) {
    long started = System.nanoTime();
    long now = nowNanos();
    advance(now);
    Instance inst = instances.get(d.source);
    if (inst == null) {
      FoldResult refused = refuseNewSource(d, now);
      if (refused != null) {
        return refused;
      }
      inst = new Instance(d.source, d.info);
      long[] before = expired.remove(d.source);
      if (before != null && before[0] == d.info.incarnation()) {
        inst.lastSequence = before[1]; // back after expiring: its sequence goes on
      } else {
        // First contact (a new source, or one this collector forgot): earlier sequence numbers
        // were never ours to receive, so they are not a gap.
        inst.lastSequence = d.coveredFrom() - 1;
      }
      instances.put(d.source, inst);
      metrics.activeSources(instances.size());
      version++; // a source shown even if this delta is a duplicate or refused
    } else if (inst.info.incarnation() != d.info.incarnation()) {
      if (d.info.processStartUnixNanos() < inst.info.processStartUnixNanos()) {
        metrics.deltaRejected(RejectReason.SUPERSEDED_INCARNATION);
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
      metrics.deltaRejected(RejectReason.OVERLAPPING_SEQUENCES);
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
    late[0] = false;
    late[1] = false;
    int overflowed = 0;
    try {
      for (SchemeFold f : schemes) {
        overflowed = Math.max(overflowed, f.fold(inst, d, late));
      }
    } catch (RuntimeException e) {
      inst.lastSequence = d.sequence;
      version++; // what was folded is visible
      throw new PartlyAppliedException(d.source, d.sequence, e);
    }
    if (late[0]) {
      metrics.lateMeasurements(d.measurements());
    } else if (late[1]) {
      metrics.futureMeasurements(d.measurements());
    }
    inst.lastSequence = d.sequence;
    inst.clientCpuNanos = saturatedAdd(inst.clientCpuNanos, d.clientCpuNanos);
    inst.clientEventsDropped = saturatedAdd(inst.clientEventsDropped, d.clientEventsDropped);
    inst.clientBytesHeld = d.clientBytesHeld;
    inst.clientContexts = d.clientContexts;
    inst.clientContextsLimit = d.clientContextsLimit;
    inst.clientDictionaryBytes = d.clientDictionaryBytes;
    inst.clientDictionaryBytesLimit = d.clientDictionaryBytesLimit;
    inst.clientExport = inst.clientExport.then(d.clientExport);
    for (Map.Entry<String, Long> m : d.clientMisuse.entrySet()) {
      if (inst.clientMisuse.containsKey(m.getKey()) || inst.clientMisuse.size() < 16) {
        inst.clientMisuse.merge(m.getKey(), m.getValue(), FoldEngine::saturatedAdd);
      }
    }
    int evicted =
        inst.threads.add(
            d.sequence, d.endUnixNanos - d.startUnixNanos, d.threadActivity, d.ioUnobservedNanos);
    if (evicted > 0) {
      metrics.threadGroupsEvicted(evicted);
    }
    version++;
    metrics.deltaApplied(d.entries);
    metrics.foldNanos(System.nanoTime() - started);
    return FoldResult.applied(overflowed);
  }

  /**
   * The refusal of a new source's delta, or null to take it: refused while the collector tracks
   * {@code limits.max_sources} sources; and refused too, once there is room, when an earlier delta
   * of the source was refused and this one comes after it (deltas a client sent behind the refused
   * one, still in flight): taken, it would make the refused one a duplicate when resent. A source's
   * refusal is remembered for one source TTL after it was last refused for want of room (a client
   * that gave up the refused delta is not refused for ever), for at most {@code limits.max_sources}
   * sources, the least recently refused forgotten first.
   */
  private FoldResult refuseNewSource(DecodedDelta d, long now) {
    long ttl = config.intervalNanos() * config.sourceTtlIntervals();
    long[] before = refusedSources.get(d.source); // {lowest sequence refused, last refused at}
    if (before != null && now - before[1] >= ttl) {
      refusedSources.remove(d.source);
      before = null;
    }
    String why;
    boolean full = instances.size() >= config.maxSources();
    if (full) {
      why =
          "the collector tracks as many sources as limits.max_sources ("
              + config.maxSources()
              + ") allows, and "
              + d.source
              + " is new. Resend later: a source silent for source_ttl_intervals expires and"
              + " frees its place. Raise limits.max_sources if the fleet is that large, or check"
              + " for instance names that change with every start";
    } else if (before != null && d.coveredFrom() > before[0]) {
      why =
          "sequence "
              + before[0]
              + " of "
              + d.source
              + " was refused (limits.max_sources) and must be applied before "
              + d.coveredFrom()
              + "; resend from "
              + before[0];
    } else {
      refusedSources.remove(d.source);
      return null;
    }
    // Only a refusal for want of room renews the memory: one that waits for the refused delta
    // does not, so a client that gave that delta up is taken one source TTL after it was last
    // refused for room, however often it retries meanwhile.
    refusedSources.put(
        d.source,
        new long[] {
          before == null ? d.coveredFrom() : Math.min(before[0], d.coveredFrom()),
          full || before == null ? now : before[1]
        });
    metrics.deltaRejected(RejectReason.TOO_MANY_SOURCES);
    if (full && now >= nextSourceLimitLog) {
      nextSourceLimitLog = now + SOURCE_LIMIT_LOG_NANOS;
      log.warn(
          "limits.max_sources ({}) reached: deltas of new sources are refused until silent ones"
              + " expire (profold_deltas_rejected_total{reason=\"too_many_sources\"}; logged"
              + " at most every 5 minutes)",
          config.maxSources());
    }
    return FoldResult.rejected(FoldResult.Reason.TOO_MANY_SOURCES, "source: " + why);
  }

  private void restart(Instance inst, DecodedDelta d) {
    for (SchemeFold f : schemes) {
      f.restart(inst);
    }
    inst.restart(d.info);
    metrics.sourceRestarted();
    version++; // series reset and groups freed, whatever becomes of this delta
  }

  /**
   * Brings windows and sources up to the clock: closes windows that passed their lateness and
   * expires silent instances.
   */
  public void advance() {
    advance(nowNanos());
  }

  private void advance(long now) {
    noticeSteps(now);
    for (SchemeFold f : schemes) {
      if (f.advance(now, listener)) {
        version++;
      }
    }
    long checkEvery = Math.max(1_000_000L, config.intervalNanos() / 10);
    // Windows first: an expiring source's data is closed already. After the clock stepped back,
    // at once, not once the clock is back where it was.
    if (now >= nextExpiryCheck || nextExpiryCheck - now > checkEvery) {
      nextExpiryCheck = now + checkEvery;
      expire(now);
      recycleDictionaryIds(); // with the expiry check: not on every delta's way through
    }
  }

  /**
   * Once enough dictionary ids were freed (by streams that ended), empties the schemes' caches of
   * judged keys, which hold ids, and lets the dictionary hand those ids out again. Rare: the bound
   * keeps the retired ids a small share of the dictionary, and each round costs the instances one
   * fresh judgement per key.
   */
  private void recycleDictionaryIds() {
    if (dictionary.retired() < recycleAfter) {
      return;
    }
    for (SchemeFold f : schemes) {
      f.forgetKeys();
    }
    dictionary.recycleRetired();
  }

  /**
   * Says when the clock stepped back by more than an interval (a clock that ran fast, corrected, or
   * a snapshot of a virtual machine restored): windows close by the clock, so none closes until it
   * is back where it was, and what clients send meanwhile for the windows in between comes too late
   * for them. Said again only after the clock has caught up.
   */
  private void noticeSteps(long now) {
    if (latestNanos != Long.MIN_VALUE
        && !steppedBack
        && now < latestNanos - config.intervalNanos()) {
      steppedBack = true;
      log.warn(
          "the clock stepped back {} s (from {} to {}); no interval closes until it reaches {}"
              + " again, and deltas for the intervals in between count as late"
              + " (profold_entries_outside_window_total{reason=\"late\"}) and reach cumulative"
              + " series only; keep the collector's clock synchronised (a time service that slews"
              + " rather than steps)",
          (latestNanos - now) / 1_000_000_000L,
          java.time.Instant.ofEpochSecond(0, latestNanos),
          java.time.Instant.ofEpochSecond(0, now),
          java.time.Instant.ofEpochSecond(0, latestNanos));
    }
    if (now >= latestNanos) {
      latestNanos = now;
      steppedBack = false;
    }
  }

  private void expire(long now) {
    long ttl = config.intervalNanos() * config.sourceTtlIntervals();
    Iterator<Instance> it = instances.values().iterator();
    while (it.hasNext()) {
      Instance inst = it.next();
      if (inst.lastSeenNanos > now) { // seen before the clock stepped back: count it seen now
        inst.lastSeenNanos = now;
      }
      if (now - inst.lastSeenNanos >= ttl) {
        for (SchemeFold f : schemes) {
          f.forget(inst);
        }
        it.remove();
        expired.put(inst.key, new long[] {inst.info.incarnation(), inst.lastSequence});
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
    for (SchemeFold f : schemes) {
      if (f.closeAll(listener)) {
        version++;
      }
    }
  }

  /** An immutable copy of everything exposed. */
  public CollectorSnapshot snapshot() {
    List<SchemeSnapshot> schemeSnapshots = new ArrayList<>(schemes.size());
    for (SchemeFold f : schemes) {
      schemeSnapshots.add(f.snapshot());
    }
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
              i.clientBytesHeld,
              i.clientContexts,
              i.clientContextsLimit,
              i.clientDictionaryBytes,
              i.clientDictionaryBytesLimit,
              java.util.Map.copyOf(i.clientMisuse),
              i.clientExport,
              i.threads.snapshot(),
              i.threads.ioUnobservedNanos(),
              i.info.labels()));
    }
    return new CollectorSnapshot(schemeSnapshots, sources);
  }

  /** Number of live instances. */
  public int activeSources() {
    return instances.size();
  }

  /**
   * {@code a + b} for counts that are not negative, held at {@link Long#MAX_VALUE} rather than
   * wrapping: a client's counter must never turn negative (a negative counter fails the scrape).
   */
  static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return sum < 0 ? Long.MAX_VALUE : sum;
  }
}
