package dev.profold.collector.fold;

import dev.profold.collector.ingest.GroupActivity;
import dev.profold.sinks.snapshot.ClassTimes;
import dev.profold.sinks.snapshot.OverheadClass;
import dev.profold.sinks.snapshot.ThreadActivitySnapshot;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One source's thread activity: the time it did not observe I/O waits, and per thread group the
 * time per overhead class since the incarnation started (held at {@link Long#MAX_VALUE} rather than
 * wrapping negative), and the group's last reported interval. A group is current while the source's
 * latest delta with thread activity reports it. At most {@link #MAX_GROUPS} groups are kept; beyond
 * that the least recently reported ones are forgotten (counted by the caller).
 *
 * <p>Not thread-safe: owned by the fold thread.
 */
final class ThreadTime {
  /** Most thread groups kept per source. */
  static final int MAX_GROUPS = 512;

  private static final OverheadClass[] CLASSES = OverheadClass.values();

  /** One group's totals and last interval. */
  private static final class Row {
    final long[] totals = new long[CLASSES.length];
    GroupActivity last;
    long lastIntervalNanos;
    long lastIoUnobserved;
    long sequence;
  }

  private final Map<String, Row> rows = new LinkedHashMap<>();
  private long latest;
  private long ioUnobserved = -1; // -1: never reported

  /**
   * Adds a delta's thread activity (nothing when it has none) and its time during which the source
   * did not observe I/O waits.
   *
   * @param sequence the delta's sequence number (increasing)
   * @param intervalNanos the delta's interval length
   * @param ioUnobservedNanos the delta's time without I/O observed, -1 when it did not say
   * @return groups forgotten to stay within {@link #MAX_GROUPS}
   */
  int add(long sequence, long intervalNanos, List<GroupActivity> groups, long ioUnobservedNanos) {
    if (ioUnobservedNanos >= 0) {
      ioUnobserved = FoldEngine.saturatedAdd(Math.max(0, ioUnobserved), ioUnobservedNanos);
    }
    if (groups.isEmpty()) {
      return 0;
    }
    latest = sequence;
    for (GroupActivity g : groups) {
      Row r = rows.computeIfAbsent(g.group(), k -> new Row());
      for (OverheadClass c : CLASSES) {
        int i = index(c);
        r.totals[i] = FoldEngine.saturatedAdd(r.totals[i], g.classes().get(c)); // counters
      }
      r.last = g;
      r.lastIntervalNanos = intervalNanos;
      r.lastIoUnobserved = ioUnobservedNanos;
      r.sequence = sequence;
    }
    return evict();
  }

  private int evict() {
    int over = rows.size() - MAX_GROUPS;
    if (over <= 0) {
      return 0;
    }
    List<Map.Entry<String, Row>> oldest = new ArrayList<>(rows.entrySet());
    oldest.sort(Comparator.comparingLong(e -> e.getValue().sequence));
    for (int i = 0; i < over; i++) {
      rows.remove(oldest.get(i).getKey());
    }
    return over;
  }

  /**
   * The time the source did not observe I/O waits, since the incarnation started; -1 when none of
   * its deltas said.
   */
  long ioUnobservedNanos() {
    return ioUnobserved;
  }

  /** Forgets everything (a new incarnation). */
  void reset() {
    rows.clear();
    latest = 0;
    ioUnobserved = -1;
  }

  /** The groups, current ones by wall time (largest first), then the others by name. */
  List<ThreadActivitySnapshot> snapshot() {
    List<ThreadActivitySnapshot> out = new ArrayList<>(rows.size());
    for (Map.Entry<String, Row> e : rows.entrySet()) {
      Row r = e.getValue();
      GroupActivity g = r.last;
      boolean current = r.sequence == latest;
      out.add(
          new ThreadActivitySnapshot(
              e.getKey(),
              ClassTimes.of(r.totals),
              current,
              g.threads(),
              r.lastIntervalNanos,
              g.classes(),
              g.wallNanos(),
              g.cpuMinNanos(),
              g.cpuSumNanos(),
              g.cpuMaxNanos(),
              r.lastIoUnobserved));
    }
    out.sort(
        Comparator.comparing((ThreadActivitySnapshot s) -> !s.current())
            .thenComparing(s -> -s.lastWallNanos())
            .thenComparing(ThreadActivitySnapshot::group));
    return out;
  }

  @SuppressWarnings("EnumOrdinal") // totals are kept in the enum's order, as ClassTimes expects
  private static int index(OverheadClass c) {
    return c.ordinal();
  }
}
