package dev.profold.client.internal.activity;

/**
 * One live thread as seen at an interval's end.
 *
 * @param id {@link Thread#getId()}
 * @param name its name (its group is the normalised name)
 * @param cpuNanos its CPU time since it started, or -1 when unknown
 * @param block the lock block it is in (entering a monitor, or parked on an owned lock), or null
 * @param runnable whether the JVM had it runnable (running, or in native code such as a blocking
 *     socket call)
 * @param carrier whether it is a carrier thread of virtual threads (Java 21 and later): its CPU
 *     time holds the time of the virtual threads it ran
 */
public record LiveThread(
    long id, String name, long cpuNanos, Block block, boolean runnable, boolean carrier) {
  /** A thread not known to be blocked or runnable. */
  public LiveThread(long id, String name, long cpuNanos) {
    this(id, name, cpuNanos, null, false);
  }

  /** A platform thread that is not a carrier of virtual threads. */
  public LiveThread(long id, String name, long cpuNanos, Block block, boolean runnable) {
    this(id, name, cpuNanos, block, runnable, false);
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
   * @param ownerId the id of the thread that holds the lock; not part of the block's identity (a
   *     lock passed from holder to holder while the thread waits is still the same block)
   */
  public record Block(
      boolean monitor, String lockClass, int lockIdentity, long count, long ownerId) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Block b
          && monitor == b.monitor
          && lockIdentity == b.lockIdentity
          && count == b.count
          && java.util.Objects.equals(lockClass, b.lockClass);
    }

    @Override
    public int hashCode() {
      return java.util.Objects.hash(monitor, lockClass, lockIdentity, count);
    }
  }
}
