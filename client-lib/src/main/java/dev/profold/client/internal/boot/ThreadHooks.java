package dev.profold.client.internal.boot;

import java.util.concurrent.atomic.AtomicLong;

/**
 * What an instrumented {@code Thread.start()} calls ({@code ThreadStartTransformer} inserts the
 * calls): {@link #wallAtEntry} and {@link #cpuAtEntry} first, {@link #exit} when it returns. It
 * times every start and reports it to the one {@link Listener}, if any. The instrumented {@code
 * Thread.exit()}, which the JVM runs on a thread as it ends, calls {@link #ending} first, so that
 * the listener learns the thread's CPU time while it can still be read.
 *
 * <p>The agent loads this class (and {@link Listener}) with the bootstrap class loader, so that
 * code in {@code java.base} can call it; it therefore depends on {@code java.base} alone. Its
 * methods never throw into {@code Thread.start}: a failing listener is counted in {@link #FAILURES}
 * and skipped. Thread-safe.
 */
public final class ThreadHooks {
  /** Returned at entry when no listener is set: {@link #exit} then reports nothing. */
  public static final long NOT_TIMED = Long.MIN_VALUE;

  /**
   * Listener calls that threw. The agent's listener catches what it can itself (and reports those
   * starts as events dropped), so this counts only what escaped it.
   */
  public static final AtomicLong FAILURES = new AtomicLong();

  private static volatile Listener listener;

  /** Receives the timing of each thread start. Called on the starting thread. */
  public interface Listener {
    /** The calling thread's CPU time, nanoseconds. */
    long cpuNow();

    /**
     * {@code started} was started by the calling thread: {@code wallNanos} elapsed inside {@code
     * Thread.start()}, {@code cpuNanos} of them on CPU (at most {@code wallNanos}). Must not start
     * threads or block.
     */
    void started(Thread started, long wallNanos, long cpuNanos);

    /**
     * The calling thread ends, having used {@code cpuNanos} of CPU (its {@link #cpuNow()}). Must
     * not start threads or block.
     */
    void ending(long cpuNanos);
  }

  private ThreadHooks() {}

  /** Sets the listener (null: none); starts already under way when it changes are not timed. */
  public static void listen(Listener l) {
    listener = l;
  }

  /** Called first in {@code Thread.start()}: the wall clock, or {@link #NOT_TIMED}. */
  public static long wallAtEntry() {
    return listener == null ? NOT_TIMED : System.nanoTime();
  }

  /** Called second in {@code Thread.start()}: the starting thread's CPU time (0 if unknown). */
  public static long cpuAtEntry() {
    Listener l = listener;
    if (l == null) {
      return 0;
    }
    try {
      return l.cpuNow();
    } catch (Throwable e) { // never into Thread.start
      FAILURES.incrementAndGet();
      return 0;
    }
  }

  /** Called first in {@code Thread.exit()}, on the thread that ends. */
  public static void ending() {
    Listener l = listener;
    if (l == null) {
      return;
    }
    try {
      l.ending(l.cpuNow());
    } catch (Throwable e) { // never into Thread.exit
      FAILURES.incrementAndGet();
    }
  }

  /** Called when {@code Thread.start()} returns normally, with what the entry calls returned. */
  public static void exit(Thread started, long wallAtEntry, long cpuAtEntry) {
    Listener l = listener;
    if (l == null || wallAtEntry == NOT_TIMED) {
      return;
    }
    try {
      long wall = Math.max(0, System.nanoTime() - wallAtEntry);
      long cpu = cpuAtEntry == 0 ? 0 : Math.max(0, Math.min(wall, l.cpuNow() - cpuAtEntry));
      l.started(started, wall, cpu);
    } catch (Throwable e) { // never into Thread.start
      FAILURES.incrementAndGet();
    }
  }
}
