package dev.profold.client.internal.activity;

/**
 * One live thread as seen at an interval's end.
 *
 * @param id {@link Thread#getId()}
 * @param name its name (its group is the normalised name)
 * @param cpuNanos its CPU time since it started, or -1 when unknown
 * @param block the block it is in (entering a monitor, or parked with a blocker), or null
 */
public record LiveThread(long id, String name, long cpuNanos, Block block) {
  /** A thread not known to be blocked. */
  public LiveThread(long id, String name, long cpuNanos) {
    this(id, name, cpuNanos, null);
  }

  /**
   * Where a thread is blocked, and which of its blocks this is: equal at two looks only if the
   * thread stayed in that one block in between (its count of blocks of that sort did not change).
   *
   * @param monitor true when entering a monitor ({@code synchronized}), false when parked
   * @param lockClass the class of the monitor or of the park's blocker (null: parked without one)
   * @param lockIdentity the identity hash code of the monitor or blocker
   * @param count the thread's blocks of that sort so far ({@code ThreadInfo#getBlockedCount} for
   *     monitors, {@code getWaitedCount} for parks)
   */
  public record Block(boolean monitor, String lockClass, int lockIdentity, long count) {}
}
