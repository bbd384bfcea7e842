package dev.profold.client;

/**
 * What kind of thread time a region stands for; the collector derives overhead classes from it
 * ("how much of the service's thread time goes to lock contention").
 */
public enum Kind {
  /** Useful work. */
  COMPUTE,
  /** Acquiring locks, barriers. */
  SYNC,
  /** Blocking on queues, conditions, monitors, sleeps. */
  WAIT,
  /** File and network input/output. */
  IO,
  /** The managed runtime itself: GC, safepoints, JIT. */
  RUNTIME,
  /** Creating, starting and tearing down threads and tasks. */
  THREAD_MGMT
}
