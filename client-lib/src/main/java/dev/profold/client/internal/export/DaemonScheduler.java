package dev.profold.client.internal.export;

import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * {@link Scheduler#daemon()}: a one-thread {@link ScheduledThreadPoolExecutor} whose daemon thread
 * is named {@code profold-exporter}. Cancelled tasks leave the queue at once; delayed tasks not yet
 * due are discarded at shutdown. Thread-safe.
 */
final class DaemonScheduler implements Scheduler {
  private final ScheduledThreadPoolExecutor executor;

  DaemonScheduler() {
    executor =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "profold-exporter");
              t.setDaemon(true);
              return t;
            });
    executor.setRemoveOnCancelPolicy(true);
    executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
  }

  @Override
  public void execute(Runnable task) {
    executor.execute(task);
  }

  @Override
  public Cancellable schedule(Runnable task, Duration delay) {
    ScheduledFuture<?> f =
        executor.schedule(task, Durations.saturatedNanos(delay), TimeUnit.NANOSECONDS);
    return () -> f.cancel(false);
  }

  @Override
  public void shutdown() {
    executor.shutdown();
  }
}
