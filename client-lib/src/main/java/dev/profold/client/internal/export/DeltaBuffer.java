package dev.profold.client.internal.export;

import dev.profold.client.internal.activity.GroupCompaction;
import dev.profold.client.internal.activity.ThreadActivity;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.ClientOverhead;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.IoObservation;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.MetricState;
import dev.profold.proto.v1.ThreadGroupActivity;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.WireStates;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * The deltas an exporter holds until the collector acknowledges them, bounded by serialized bytes.
 *
 * <p>Deltas are added in sequence order and keyed by their {@code sequence} (for a merged delta,
 * the last sequence it covers). The buffer remembers the highest sequence ever {@linkplain
 * #markSent sent}; as deltas go out in order, every delta above it was <em>never sent</em> on any
 * stream and may still be merged (protocol §8: a delta that may have reached the collector must be
 * resent unchanged so the duplicate check catches it).
 *
 * <p>When an {@link #add} takes the buffer over its bound, the two oldest never-sent deltas are
 * {@linkplain #merge merged} into one, again and again, until it fits. A merge is made only when
 * the merged delta fits the bound by itself (one that does not would have to be dropped whole,
 * taking the newer delta's data with it) and fits one message ({@code maxDeltaBytes}). When the two
 * oldest never-sent deltas cannot be merged (only one is left, or their merge does not fit), the
 * oldest delta is dropped instead (sent ones first, as they are the oldest), and so on. So a delta
 * that fits the bound by itself is never dropped by its own {@code add}: an outage costs resolution
 * and then the oldest data, never the newest. Merging keeps every count exact: the merged delta
 * stands for the sequences {@code [first_sequence, sequence]} and the collector applies it as one.
 *
 * <p>Not thread-safe: the exporter's thread owns it. All methods are cheap except {@link #add} on
 * overflow, which merges (linear in the entries involved).
 */
final class DeltaBuffer {
  private final long maxBytes;
  private long maxDeltaBytes;
  private final NavigableMap<Long, Delta> deltas = new TreeMap<>();
  private long bytes;
  private long maxSent;

  /**
   * What an {@link #add} did besides adding.
   *
   * @param merges deltas folded into an older never-sent delta (one per pairwise merge)
   * @param dropped deltas removed because even merged data could not fit, oldest first (the caller
   *     accounts for them; a dropped delta may have been sent)
   */
  record AddResult(int merges, List<Delta> dropped) {
    static final AddResult NOTHING = new AddResult(0, List.of());

    AddResult {
      dropped = List.copyOf(dropped);
    }
  }

  /** A buffer of at most {@code maxBytes}, whose merges may grow as large as that. */
  DeltaBuffer(long maxBytes) {
    this(maxBytes, maxBytes);
  }

  /**
   * A buffer of at most {@code maxBytes}, whose merged deltas stay within {@code maxDeltaBytes}
   * (numbered, without dictionary), so that each still fits one message.
   */
  DeltaBuffer(long maxBytes, long maxDeltaBytes) {
    if (maxBytes <= 0 || maxDeltaBytes <= 0) {
      throw new IllegalArgumentException(
          "maxBytes and maxDeltaBytes must be > 0, were " + maxBytes + " and " + maxDeltaBytes);
    }
    this.maxBytes = maxBytes;
    this.maxDeltaBytes = maxDeltaBytes;
  }

  /** Lowers the bound of merged deltas (the collector turned out to accept less). */
  void limitDeltaBytes(long bytes) {
    maxDeltaBytes = Math.max(1, Math.min(maxDeltaBytes, bytes));
  }

  /**
   * Appends {@code delta} (sequence set, above every buffered one), then merges and drops as the
   * class comment describes until the buffer is within its bound.
   */
  AddResult add(Delta delta) {
    long seq = delta.getSequence();
    if (!deltas.isEmpty() && seq <= deltas.lastKey()) {
      throw new IllegalArgumentException(
          "sequence " + seq + " is not after the last buffered " + deltas.lastKey());
    }
    if (seq <= maxSent) {
      throw new IllegalArgumentException("sequence " + seq + " was sent already");
    }
    deltas.put(seq, delta);
    bytes += delta.getSerializedSize();
    if (bytes <= maxBytes) {
      return AddResult.NOTHING;
    }
    int merges = 0;
    List<Delta> dropped = new ArrayList<>();
    long unmergeable = 0; // the never-sent delta whose merge with the next one did not fit
    while (bytes > maxBytes) {
      NavigableMap<Long, Delta> neverSent = deltas.tailMap(maxSent, false);
      if (neverSent.size() >= 2 && neverSent.firstKey() != unmergeable) {
        Iterator<Delta> it = neverSent.values().iterator();
        Delta older = it.next();
        Delta newer = it.next();
        Delta merged = merge(older, newer);
        if (merged.getSerializedSize() <= Math.min(maxBytes, maxDeltaBytes)) {
          deltas.remove(older.getSequence());
          deltas.put(newer.getSequence(), merged);
          bytes +=
              merged.getSerializedSize() - older.getSerializedSize() - newer.getSerializedSize();
          merges++;
          continue;
        }
        // Only drops from the oldest end follow until older goes, so the pair stays the same.
        unmergeable = older.getSequence();
      }
      Delta oldest = deltas.pollFirstEntry().getValue();
      bytes -= oldest.getSerializedSize();
      dropped.add(oldest);
    }
    return new AddResult(merges, dropped);
  }

  /**
   * The levels of {@code overhead} (memory held, contexts, dictionary bytes, buffered bytes and
   * their limits), which the collector takes from the latest delta, without its counters (CPU time,
   * events dropped, misuse, reconnects, merges), which it adds up: a merged delta keeps the newer
   * levels, every part of a split delta carries them.
   */
  static ClientOverhead gauges(ClientOverhead overhead) {
    return ClientOverhead.newBuilder()
        .setBytesHeld(overhead.getBytesHeld())
        .setContexts(overhead.getContexts())
        .setContextsLimit(overhead.getContextsLimit())
        .setDictionaryBytes(overhead.getDictionaryBytes())
        .setDictionaryBytesLimit(overhead.getDictionaryBytesLimit())
        .setExportBufferedBytes(overhead.getExportBufferedBytes())
        .setExportBufferLimitBytes(overhead.getExportBufferLimitBytes())
        .build();
  }

  /** The oldest buffered delta whose sequence is above {@code sequence}, or null. */
  Delta next(long sequence) {
    Map.Entry<Long, Delta> e = deltas.higherEntry(sequence);
    return e == null ? null : e.getValue();
  }

  /** Records that the delta with this sequence was sent (it may never be merged from now on). */
  void markSent(long sequence) {
    maxSent = Math.max(maxSent, sequence);
  }

  /** True when the delta with this sequence (or an older one) was ever sent. */
  boolean wasSent(long sequence) {
    return sequence <= maxSent;
  }

  /** Removes and returns the delta with this sequence, or null if it is not buffered. */
  Delta remove(long sequence) {
    Delta d = deltas.remove(sequence);
    if (d != null) {
      bytes -= d.getSerializedSize();
    }
    return d;
  }

  /**
   * Removes and returns the deltas that were never sent, oldest first (to be split again and
   * renumbered: never sent, their sequence numbers are still free to change).
   */
  List<Delta> removeNeverSent() {
    NavigableMap<Long, Delta> neverSent = deltas.tailMap(maxSent, false);
    List<Delta> out = List.copyOf(neverSent.values());
    for (Delta d : out) {
      bytes -= d.getSerializedSize();
    }
    neverSent.clear();
    return out;
  }

  /** The buffered deltas, oldest first (a copy). */
  List<Delta> deltas() {
    return List.copyOf(deltas.values());
  }

  boolean isEmpty() {
    return deltas.isEmpty();
  }

  /** Number of buffered deltas. */
  int size() {
    return deltas.size();
  }

  /** Serialized bytes of the buffered deltas. */
  long bytes() {
    return bytes;
  }

  /** The first sequence {@code d} covers: its first_sequence if merged, else its sequence. */
  static long firstCovered(Delta d) {
    return d.getFirstSequence() == 0 ? d.getSequence() : d.getFirstSequence();
  }

  /** How many submitted deltas {@code d} stands for. */
  static long covered(Delta d) {
    return d.getSequence() - firstCovered(d) + 1;
  }

  /**
   * Events recorded in {@code d}: per entry the largest measurement count (every event of an entry
   * records each of its measurements at most once), summed.
   */
  static long events(Delta d) {
    long n = 0;
    for (Entry e : d.getEntriesList()) {
      long most = 0;
      for (Measurement m : e.getMeasurementsList()) {
        most = Math.max(most, m.getState().getCount());
      }
      n += most;
    }
    return n;
  }

  /**
   * One delta standing for {@code older} followed by {@code newer} (consecutive, neither carrying
   * source or dictionary): entries with identical key lists merged measurement by measurement
   * ({@link Aggregate} merge: counts, sums, sums of squares and histogram buckets added, min of
   * mins, max of maxes), other entries kept, in first-seen order; interval the union; {@code
   * first_sequence} the first sequence {@code older} covers and {@code sequence} that of {@code
   * newer}; overhead CPU time and dropped events summed, bytes held taken from {@code newer} (a
   * level at the end of the interval, not a flow); thread aggregation that of {@code newer}.
   *
   * <p>A merged measurement keeps a histogram only if every merged state had one (otherwise its
   * bucket total could not equal its count).
   */
  static Delta merge(Delta older, Delta newer) {
    Map<List<AttributeValue>, Map<Integer, Merged>> entries = new LinkedHashMap<>();
    collect(older, entries);
    collect(newer, entries);
    Delta.Builder out =
        Delta.newBuilder()
            .setSequence(newer.getSequence())
            .setFirstSequence(firstCovered(older))
            .setIntervalStartUnixNanos(
                Math.min(older.getIntervalStartUnixNanos(), newer.getIntervalStartUnixNanos()))
            .setIntervalEndUnixNanos(
                Math.max(older.getIntervalEndUnixNanos(), newer.getIntervalEndUnixNanos()))
            .setThreadAggregation(newer.getThreadAggregation());
    if (older.hasOverhead() || newer.hasOverhead()) {
      ClientOverhead a = older.getOverhead();
      ClientOverhead b = newer.getOverhead();
      ClientOverhead.Builder overhead =
          gauges(newer.hasOverhead() ? b : a) // levels: the newer delta's
              .toBuilder()
              .setCpuNanos(a.getCpuNanos() + b.getCpuNanos())
              .setEventsDropped(a.getEventsDropped() + b.getEventsDropped())
              .setExportReconnects(a.getExportReconnects() + b.getExportReconnects())
              .setExportDeltasMerged(a.getExportDeltasMerged() + b.getExportDeltasMerged())
              .putAllMisuse(a.getMisuseMap());
      b.getMisuseMap()
          .forEach((k, v) -> overhead.putMisuse(k, overhead.getMisuseOrDefault(k, 0) + v));
      out.setOverhead(overhead);
    }
    out.addAllThreadActivity(mergeActivity(older, newer));
    if (older.hasIoObservation() || newer.hasIoObservation()) {
      out.setIoObservation(
          IoObservation.newBuilder().setUnobservedNanos(unobserved(older) + unobserved(newer)));
    }
    for (Map.Entry<List<AttributeValue>, Map<Integer, Merged>> e : entries.entrySet()) {
      Entry.Builder entry = Entry.newBuilder().addAllKey(e.getKey());
      for (Map.Entry<Integer, Merged> m : e.getValue().entrySet()) {
        entry.addMeasurements(
            Measurement.newBuilder().setAttributeId(m.getKey()).setState(m.getValue().state()));
      }
      out.addEntries(entry);
    }
    return out.build();
  }

  /**
   * The time {@code d} did not observe I/O waits, for a merge: a delta that does not say counts as
   * unobserved throughout (the agent started while it was buffered).
   */
  private static long unobserved(Delta d) {
    return d.hasIoObservation()
        ? d.getIoObservation().getUnobservedNanos()
        : d.getIntervalEndUnixNanos() - d.getIntervalStartUnixNanos();
  }

  private static List<ThreadGroupActivity> mergeActivity(Delta older, Delta newer) {
    Map<String, ThreadGroupActivity> out = new LinkedHashMap<>();
    for (Delta d : List.of(older, newer)) {
      for (ThreadGroupActivity a : d.getThreadActivityList()) {
        out.merge(a.getThreadGroup(), a, DeltaBuffer::add);
      }
    }
    return compactActivity(out);
  }

  /**
   * At most {@link ThreadActivity#MAX_GROUPS} groups, the collector's limit (two deltas of 256
   * groups each can name 512), as {@link GroupCompaction} bounds a delta's own.
   */
  static List<ThreadGroupActivity> compactActivity(Map<String, ThreadGroupActivity> groups) {
    return GroupCompaction.compact(
        groups,
        ThreadGroupActivity::getWallNanos,
        ThreadGroupActivity::getThreadGroup,
        folded -> {
          ThreadGroupActivity rest = folded.get(0);
          for (ThreadGroupActivity g : folded.subList(1, folded.size())) {
            rest = union(rest, g);
          }
          return rest.toBuilder().setThreadGroup(ThreadActivity.OTHER_GROUP).build();
        });
  }

  /** Two groups' threads in one interval, as one group: their threads are distinct. */
  private static ThreadGroupActivity union(ThreadGroupActivity a, ThreadGroupActivity b) {
    return timesAdded(a, b)
        .setThreads((int) Math.min(Integer.MAX_VALUE, (long) a.getThreads() + b.getThreads()))
        .setCpuMinNanos(Math.min(a.getCpuMinNanos(), b.getCpuMinNanos()))
        .setCpuMaxNanos(Math.max(a.getCpuMaxNanos(), b.getCpuMaxNanos()))
        .build();
  }

  /**
   * One group's threads in two intervals, as one: the threads are counted once (the larger count),
   * and the spread's bounds add up as the intervals do.
   */
  private static ThreadGroupActivity add(ThreadGroupActivity a, ThreadGroupActivity b) {
    return timesAdded(a, b)
        .setThreads(Math.max(a.getThreads(), b.getThreads()))
        .setCpuMinNanos(a.getCpuMinNanos() + b.getCpuMinNanos())
        .setCpuMaxNanos(a.getCpuMaxNanos() + b.getCpuMaxNanos())
        .build();
  }

  /** {@code a} with every time of {@code b} added: the wall, the classes and the CPU sum. */
  private static ThreadGroupActivity.Builder timesAdded(
      ThreadGroupActivity a, ThreadGroupActivity b) {
    return a.toBuilder()
        .setWallNanos(a.getWallNanos() + b.getWallNanos())
        .setComputeNanos(a.getComputeNanos() + b.getComputeNanos())
        .setSyncNanos(a.getSyncNanos() + b.getSyncNanos())
        .setWaitNanos(a.getWaitNanos() + b.getWaitNanos())
        .setIoNanos(a.getIoNanos() + b.getIoNanos())
        .setRuntimeNanos(a.getRuntimeNanos() + b.getRuntimeNanos())
        .setThreadMgmtNanos(a.getThreadMgmtNanos() + b.getThreadMgmtNanos())
        .setCpuWaitNanos(a.getCpuWaitNanos() + b.getCpuWaitNanos())
        .setIdleNanos(a.getIdleNanos() + b.getIdleNanos())
        .setCpuSumNanos(a.getCpuSumNanos() + b.getCpuSumNanos());
  }

  private static void collect(Delta d, Map<List<AttributeValue>, Map<Integer, Merged>> into) {
    for (Entry e : d.getEntriesList()) {
      Map<Integer, Merged> measurements =
          into.computeIfAbsent(e.getKeyList(), k -> new LinkedHashMap<>());
      for (Measurement m : e.getMeasurementsList()) {
        measurements.computeIfAbsent(m.getAttributeId(), k -> new Merged()).add(m.getState());
      }
    }
  }

  /** The running merge of one measurement's states. */
  private static final class Merged {
    private final Aggregate aggregate = new Aggregate();
    private boolean everyStateHasHistogram = true;

    void add(MetricState state) {
      if (state.getCount() > 0 && !state.hasHistogram()) {
        everyStateHasHistogram = false;
      }
      WireStates.mergeInto(state, aggregate);
    }

    MetricState state() {
      MetricState s = WireStates.toProto(aggregate);
      return everyStateHasHistogram ? s : s.toBuilder().clearHistogram().build();
    }
  }
}
