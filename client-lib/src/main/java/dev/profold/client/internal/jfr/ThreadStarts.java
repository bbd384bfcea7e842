package dev.profold.client.internal.jfr;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * How long each recent {@code Thread.start()} took, by the started thread's id, from the moment it
 * returned until JFR's {@code jdk.ThreadStart} event for it is mapped (about a second later), which
 * gives the start its call path. At most {@link #MAX} starts wait; beyond that, starts are recorded
 * without a duration, which is logged once. Thread-safe.
 */
public final class ThreadStarts {
  /** Starts waiting for their JFR event at most. */
  public static final int MAX = 16_384;

  /** For a profiler without {@code Thread.start} instrumentation: nothing reports to it. */
  public static final ThreadStarts NONE = new ThreadStarts();

  private static final System.Logger LOG = System.getLogger("dev.profold.client");

  private final ConcurrentHashMap<Long, Long> wallNanos = new ConcurrentHashMap<>();
  private final AtomicBoolean warned = new AtomicBoolean();

  /** {@code Thread.start()} for thread {@code startedId} took {@code nanos}. */
  public void started(long startedId, long nanos) {
    if (wallNanos.size() >= MAX) {
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
    wallNanos.put(startedId, nanos);
  }

  /** The duration of thread {@code startedId}'s start, removed, or 0 when it was not timed. */
  public long take(long startedId) {
    Long v = wallNanos.remove(startedId);
    return v == null ? 0 : v;
  }
}
