package dev.profold.client;

/**
 * How per-thread data is reduced before a delta leaves the process (after Score-P's thread
 * aggregation strategies). Every mode keeps totals exact; they differ in how much per-thread detail
 * survives and in delta size.
 */
public enum ThreadAggregation {
  /** Every thread separately (entries labelled with the thread). Largest deltas. */
  NONE,
  /** All threads of a thread group summed. Smallest deltas. */
  SUM,
  /**
   * The group's sum, plus the distribution across threads of each thread's total (number of threads
   * that visited, min, max, sum of squares): spread without per-thread entries.
   */
  SET,
  /**
   * The initial thread, the slowest and the fastest thread (by their self time in COMPUTE regions:
   * a region's time less its nested regions'; the initial thread excluded from the choice) kept
   * apart, the rest summed.
   */
  KEY,
  /**
   * Threads that visited exactly the same region paths (whatever their scoped attributes) form a
   * cluster; clusters are summed.
   */
  CALLTREE
}
