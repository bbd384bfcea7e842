package dev.profold.client.internal.export;

import java.time.Duration;

/**
 * Where and when the {@link Exporter} runs its work: one logical thread that runs tasks one at a
 * time, either as soon as possible ({@link #execute}) or after a delay ({@link #schedule}).
 *
 * <p>Contract for implementations: tasks never run concurrently with each other; tasks passed to
 * {@link #execute} run in the order they were passed; a task scheduled with a delay runs no earlier
 * than that delay after the call. {@link #execute} and {@link #schedule} may be called from any
 * thread and must not block; after {@link #shutdown} they may throw {@link
 * java.util.concurrent.RejectedExecutionException}, which the exporter tolerates.
 *
 * <p>Production code uses {@link #daemon()}; tests pass a manual implementation whose clock only
 * moves when the test says so, so backoff and timeouts are tested without sleeping.
 */
public interface Scheduler {
  /** Runs {@code task} on the scheduler's thread as soon as possible, after earlier tasks. */
  void execute(Runnable task);

  /** Runs {@code task} on the scheduler's thread once {@code delay} has passed. */
  Cancellable schedule(Runnable task, Duration delay);

  /** Stops taking tasks; delayed tasks that are not due yet are discarded. */
  void shutdown();

  /** A handle on a scheduled task. */
  interface Cancellable {
    /** Makes sure the task does not run if it has not started yet. */
    void cancel();
  }

  /**
   * A scheduler backed by one daemon thread named {@code profold-exporter}, so an exporter never
   * keeps the JVM alive.
   */
  static Scheduler daemon() {
    return new DaemonScheduler();
  }
}
