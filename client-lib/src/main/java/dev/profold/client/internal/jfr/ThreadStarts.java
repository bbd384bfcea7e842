package dev.profold.client.internal.jfr;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * How long each recent {@code Thread.start()} took, by the started thread's id, from the moment it
 * returned until JFR's {@code jdk.ThreadStart} event for it is mapped (about a second later), which
 * gives the start its call path. At most {@link #MAX} starts wait. Some never see their event
 * mapped (a start before the recording began, one whose event JFR or the agent leaves out), so when
 * the table is full, starts waiting longer than {@link #STALE_NANOS} are given up first; if it is
 * still full, the start is recorded without a duration, which is logged once. Thread-safe.
 */
public final class ThreadStarts {
  /** Starts waiting for their JFR event at most. */
  public static final int MAX = 16_384;

  /** A start waiting this long will not see its event: JFR delivers within seconds. */
  static final long STALE_NANOS = TimeUnit.SECONDS.toNanos(60);

  /** For a profiler without {@code Thread.start} instrumentation: nothing reports to it. */
  public static final ThreadStarts NONE = new ThreadStarts();

  private static final System.Logger LOG = System.getLogger("dev.profold.client");

  /** A start's duration and when it was reported ({@link #clock}). */
  private record Waiting(long nanos, long at) {}

  private final ConcurrentHashMap<Long, Waiting> waiting = new ConcurrentHashMap<>();
  private final LongSupplier clock;
  private final AtomicLong lastSweep;
  private final AtomicBoolean warned = new AtomicBoolean();
  private final AtomicLong timingFailures = new AtomicLong();

  public ThreadStarts() {
    this(System::nanoTime);
  }

  /** With {@code clock} (nanoseconds, monotonic) for the age of waiting starts. */
  ThreadStarts(LongSupplier clock) {
    this.clock = clock;
    this.lastSweep = new AtomicLong(clock.getAsLong() - STALE_NANOS);
  }

  /**
   * Counts a thread start the agent's listener failed to report (it threw): a start not recorded,
   * which the profiler reports as an event dropped.
   */
  public void timingFailed() {
    timingFailures.incrementAndGet();
  }

  /** Thread starts whose reporting failed since the last call, and resets the count. */
  public long takeTimingFailures() {
    return timingFailures.getAndSet(0);
  }

  /** {@code Thread.start()} for thread {@code startedId} took {@code nanos}. */
  public void started(long startedId, long nanos) {
    long now = clock.getAsLong();
    if (waiting.size() >= MAX) {
      sweep(now);
      if (waiting.size() >= MAX) {
        if (!warned.getAndSet(true)) {
          LOG.log(
              System.Logger.Level.WARNING,
              "Profold agent: "
                  + MAX
                  + " thread starts are waiting for their JFR events; further starts keep their"
                  + " thread_mgmt time but their records get no duration (is JFR keeping up?)");
        }
        return;
      }
    }
    waiting.put(startedId, new Waiting(nanos, now));
  }

  /**
   * Gives up the starts waiting longer than {@link #STALE_NANOS}; at most once a second, so that a
   * table full of recent starts is not scanned on every start.
   */
  private void sweep(long now) {
    long last = lastSweep.get();
    if (now - last < TimeUnit.SECONDS.toNanos(1) || !lastSweep.compareAndSet(last, now)) {
      return;
    }
    waiting.values().removeIf(w -> now - w.at() > STALE_NANOS);
  }

  /** The duration of thread {@code startedId}'s start, removed, or 0 when it was not timed. */
  public long take(long startedId) {
    Waiting w = waiting.remove(startedId);
    return w == null ? 0 : w.nanos();
  }
}
