package dev.profold.client.internal.jfr;

import dev.profold.client.Kind;
import dev.profold.client.internal.record.ForeignThread;
import dev.profold.client.internal.record.IdHolder;
import dev.profold.client.internal.record.Recorder;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Records {@link Observation}s into a {@link Recorder} on behalf of the threads they are about: one
 * {@link ForeignThread} table per thread id, written only by the caller (the JFR consumer thread),
 * flushed with the application's own tables and merged with what the thread recorded itself. An
 * observation's context is the attribute {@code event} (the JFR event type) and, inside it, one
 * region per path element, COMPUTE except the innermost, which has the observation's kind. CPU
 * samples are recorded as {@link Recorder#CPU_SAMPLES}, which the flush values by their thread's
 * measured CPU time.
 *
 * <p>A table is retired, so that the next flush takes its last values and forgets it, when its
 * thread's {@code jdk.ThreadEnd} arrives ({@link #threadEnded}). Some events of a thread arrive
 * after its end: JFR writes {@code jdk.ThreadStart} when the started thread first runs, but charges
 * it to the thread that called {@code start()}, which may have ended by then (a pool worker whose
 * task threw starts its replacement as its last act), and a CPU sample can be delivered late too.
 * Ended threads are therefore remembered for {@value #IDLE_INTERVALS} intervals (at most {@value
 * #MAX_ENDED} of them, {@link RecentEnds}); an event of one is recorded into a table that is
 * retired at once. As a backstop for ends never delivered (older than that, or lost), {@link
 * #sweep} retires the tables that were not written for {@value #IDLE_INTERVALS} intervals. A thread
 * that records again after either gets a fresh table, merged with the others by thread id at the
 * flush: nothing is lost or counted twice.
 *
 * <p>Not thread-safe: one thread calls it (see {@link ForeignThread}'s single-writer rule), except
 * {@link #threadIds()}, which any thread may call.
 */
final class JfrSink {
  /** The attribute naming the JFR event type. */
  static final String EVENT_ATTRIBUTE = Recorder.AGENT_EVENT_ATTRIBUTE;

  /** The measurement allocation samples record, in bytes. */
  static final String ALLOCATION_MEASUREMENT = Recorder.ALLOCATION;

  /** Intervals a table may go unwritten, and an ended thread is remembered. */
  static final int IDLE_INTERVALS = 6;

  /** Ended threads remembered at most. */
  static final int MAX_ENDED = 8_192;

  private record Step(int parent, String name, Kind kind) {}

  /** A thread's table and the interval ({@link Recorder#collections()}) it was last written in. */
  private static final class Table {
    final ForeignThread thread;
    long written;
    String name; // the thread's name in its last event

    Table(ForeignThread thread) {
      this.thread = thread;
    }
  }

  private final Recorder recorder;
  private final int time;
  private final int allocation;
  private final Map<Long, Table> threads = new ConcurrentHashMap<>(); // read by threadIds()
  private final RecentEnds ended = new RecentEnds(MAX_ENDED, IDLE_INTERVALS);
  private long swept = -1;
  private final Map<String, Integer> eventContexts = new HashMap<>();
  private final Map<Step, Integer> steps = new HashMap<>();
  private final IdHolder holder; // of the context ids in eventContexts and steps

  JfrSink(Recorder recorder) {
    this.recorder = recorder;
    this.holder = recorder.holder();
    this.time = recorder.timeMetric();
    this.allocation = recorder.ownMetric(ALLOCATION_MEASUREMENT, "bytes");
  }

  void record(Observation o) {
    if (holder.requested()) { // the context table ages contexts out: give back the cached ids
      eventContexts.clear();
      steps.clear();
      recorder.release(holder);
    }
    Integer ctx = eventContexts.get(o.event());
    if (ctx == null) {
      ctx = recorder.attributeContext(holder, 0, EVENT_ATTRIBUTE, o.event());
      if (!recorder.isOverflow(0, ctx)) {
        eventContexts.put(o.event(), ctx);
      }
    }
    List<String> path = o.path();
    int c = ctx;
    for (int i = 0; i < path.size(); i++) {
      Step s = new Step(c, path.get(i), i == path.size() - 1 ? o.kind() : Kind.COMPUTE);
      Integer next = steps.get(s);
      if (next == null) {
        next = recorder.regionContext(holder, s.parent(), s.name(), s.kind());
        if (!recorder.isOverflow(s.parent(), next)) { // else steps would grow with kept-out names
          steps.put(s, next);
        }
      }
      c = next;
    }
    int metric =
        o.bytes()
            ? allocation
            : o.event().equals(EventMapper.EXECUTION_SAMPLE) ? Recorder.CPU_SAMPLES : time;
    Table t = threads.get(o.threadId());
    if (t == null) {
      ForeignThread f = recorder.foreign(o.threadId(), o.threadName(), o.initialThread());
      if (ended.contains(o.threadId())) { // delivered after the thread's end
        f.record(c, metric, o.value());
        f.retire();
        return;
      }
      t = new Table(f);
      t.name = o.threadName();
      threads.put(o.threadId(), t);
    } else if (!o.threadName().equals(t.name)) { // renamed since: grouped by its name now
      t.name = o.threadName();
      t.thread.named(t.name);
    }
    t.thread.record(c, metric, o.value());
    t.written = recorder.collections();
  }

  /**
   * The thread ended: its table gives its last values at the next flush and is forgotten, and its
   * events delivered later are recorded into tables retired at once.
   */
  void threadEnded(long threadId) {
    Table t = threads.remove(threadId);
    if (t != null) {
      t.thread.retire();
    }
    ended.add(threadId, recorder.collections());
  }

  /**
   * Retires the tables not written for {@value #IDLE_INTERVALS} intervals and forgets the thread
   * ends older than that; does nothing more than once per interval. The writer calls it regularly
   * (the profiler: at each JFR flush, about once a second).
   */
  void sweep() {
    long now = recorder.collections();
    if (now == swept) {
      return;
    }
    swept = now;
    ended.expire(now);
    Iterator<Table> it = threads.values().iterator();
    while (it.hasNext()) {
      Table t = it.next();
      if (now - t.written >= IDLE_INTERVALS) {
        t.thread.retire();
        it.remove();
      }
    }
  }

  /** Retires every table; nothing is recorded after. */
  void close() {
    threads.values().forEach(t -> t.thread.retire());
    threads.clear();
    ended.clear();
    eventContexts.clear();
    steps.clear();
    recorder.forget(holder);
  }

  /** Threads with a table (for tests). */
  int threads() {
    return threads.size();
  }

  /** The ids of the threads with a table now (for tests; any thread may call it). */
  Set<Long> threadIds() {
    return Set.copyOf(threads.keySet());
  }
}
