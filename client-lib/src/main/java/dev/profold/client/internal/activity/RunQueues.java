package dev.profold.client.internal.activity;

import java.util.Collection;
import java.util.Map;

/**
 * How long threads have waited for a CPU: the operating system's scheduler statistics, by Java
 * thread id ({@link OsRunQueues} in production; tests give their own).
 */
@FunctionalInterface
interface RunQueues {
  /**
   * The statistics of those of {@code threadIds} ({@link Thread#getId()}) that can be read, as
   * {@code {nanoseconds runnable but not on a CPU, times put on a CPU}}, both since the thread
   * started and never decreasing. A thread left out is not measured in this interval. Called on the
   * flush thread, not under any lock of the caller's; may take a few microseconds per thread.
   */
  Map<Long, long[]> read(Collection<Long> threadIds);
}
