package dev.profold.client.internal.activity;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code cpu_wait} class of {@link ThreadActivity}: time a thread was runnable but not on a CPU
 * (on the run queue behind other threads, or held back by a CPU quota), outside the blocks the
 * other classes count. Without it, that time would be idle, and a CPU-starved thread pool would
 * look idle.
 *
 * <p>The operating system counts a thread's run-queue time in all ({@link RunQueues}), including
 * the wait for a CPU after each wake-up, which a reported block's duration already holds (a park's
 * event ends when the thread runs again). Per interval, with {@code q} the run-queue time, {@code
 * n} the times the thread was put on a CPU and {@code b} the blocks reported for it (each of which
 * ended with one such wait), the time outside the blocks is estimated as {@code q * (n - b) / n}:
 * every arrival on a CPU taken to have waited alike. It is taken from the thread's idle time, never
 * more than that. Exact for a thread that never blocks (a CPU-bound pool on too few cores).
 *
 * <p>A thread counts from the second close that reads it (the first sets its baseline), or from its
 * start when that was reported in the interval, and not in the interval it ends in (its statistics
 * can no longer be read).
 *
 * <p>Not thread-safe: {@link #read} on the closing thread before the activity's lock, the rest
 * under that lock.
 */
final class CpuWaits {
  private static final long[] NOTHING_YET = new long[2];

  private volatile RunQueues source; // null: not measured
  private Map<Long, long[]> last = Map.of(); // at the last close, by thread id
  private final Map<Long, long[]> blocks = new HashMap<>(); // {count} reported since the last close

  /** Measures from now on with {@code queues} (null: stops measuring). */
  void measure(RunQueues queues) {
    source = queues;
  }

  /** The statistics of the threads {@code live} now; empty when not measured. */
  Map<Long, long[]> read(List<LiveThread> live) {
    RunQueues s = source;
    if (s == null || live.isEmpty()) {
      return Map.of();
    }
    List<Long> ids = new ArrayList<>(live.size());
    for (LiveThread t : live) {
      ids.add(t.id());
    }
    try {
      return s.read(ids);
    } catch (RuntimeException e) { // a broken source measures nothing, and breaks nothing
      return Map.of();
    }
  }

  /** {@code n} blocks of thread {@code threadId} were reported (any off-CPU class). */
  void blocksReported(long threadId, long n) {
    if (n > 0) {
      blocks.computeIfAbsent(threadId, k -> new long[1])[0] +=
          n; // one array per thread, not per report
    }
  }

  /**
   * Thread {@code threadId}'s run-queue time since the last close outside the blocks reported for
   * it, given the statistics read {@code now}; 0 when either read lacks it, but for a thread that
   * {@code started} since the last close, whose statistics all fall after it.
   */
  long outsideBlocks(long threadId, Map<Long, long[]> now, boolean started) {
    long[] before = last.get(threadId);
    if (before == null && started) {
      before = NOTHING_YET;
    }
    long[] after = now.get(threadId);
    if (before == null || after == null) {
      return 0;
    }
    long queued = after[0] - before[0];
    long arrivals = after[1] - before[1];
    if (queued <= 0) {
      return 0;
    }
    if (arrivals <= 0) {
      return queued; // never put on a CPU since: it waited all along, no block ended
    }
    long[] reported = blocks.get(threadId);
    long outside = Math.max(0, arrivals - (reported == null ? 0 : reported[0]));
    return outside >= arrivals ? queued : (long) ((double) queued * outside / arrivals);
  }

  /** The close is done: {@code now} is the next close's baseline. */
  void closed(Map<Long, long[]> now) {
    last = now;
    blocks.clear();
  }
}
