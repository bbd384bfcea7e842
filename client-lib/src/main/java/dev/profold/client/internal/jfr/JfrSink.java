package dev.profold.client.internal.jfr;

import dev.profold.client.Kind;
import dev.profold.client.internal.record.ForeignThread;
import dev.profold.client.internal.record.Recorder;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Records {@link Observation}s into a {@link Recorder} on behalf of the threads they are about: one
 * {@link ForeignThread} table per thread id, written only by the caller (the JFR consumer thread),
 * flushed with the application's own tables and merged with what the thread recorded itself. An
 * observation's context is the attribute {@code event} (the JFR event type) and, inside it, one
 * region per path element, COMPUTE except the innermost, which has the observation's kind.
 *
 * <p>Not thread-safe: one thread calls it (see {@link ForeignThread}'s single-writer rule).
 */
final class JfrSink {
  /** The attribute naming the JFR event type. */
  static final String EVENT_ATTRIBUTE = "event";

  /** The measurement allocation samples record, in bytes. */
  static final String ALLOCATION_MEASUREMENT = "allocation";

  private record Step(int parent, String name, Kind kind) {}

  private final Recorder recorder;
  private final int time;
  private final int allocation;
  private final Map<Long, ForeignThread> threads = new HashMap<>();
  private final Map<String, Integer> eventContexts = new HashMap<>();
  private final Map<Step, Integer> steps = new HashMap<>();

  JfrSink(Recorder recorder) {
    this.recorder = recorder;
    this.time = recorder.timeMetric();
    this.allocation = recorder.metric(ALLOCATION_MEASUREMENT, "bytes");
  }

  void record(Observation o) {
    Integer ctx = eventContexts.get(o.event());
    if (ctx == null) {
      ctx = recorder.attributeContext(0, EVENT_ATTRIBUTE, o.event());
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
        next = recorder.regionContext(s.parent(), s.name(), s.kind());
        if (!recorder.isOverflow(s.parent(), next)) { // else steps would grow with kept-out names
          steps.put(s, next);
        }
      }
      c = next;
    }
    ForeignThread t = threads.get(o.threadId());
    if (t == null) {
      t = recorder.foreign(o.threadId(), o.threadName(), o.initialThread());
      threads.put(o.threadId(), t);
    }
    t.record(c, o.bytes() ? allocation : time, o.value());
  }

  /** The thread ended: its table gives its last values at the next flush and is forgotten. */
  void threadEnded(long threadId) {
    ForeignThread t = threads.remove(threadId);
    if (t != null) {
      t.retire();
    }
  }

  /** Retires every table; nothing is recorded after. */
  void close() {
    threads.values().forEach(ForeignThread::retire);
    threads.clear();
  }

  /** Threads with a table (for tests). */
  int threads() {
    return threads.size();
  }
}
