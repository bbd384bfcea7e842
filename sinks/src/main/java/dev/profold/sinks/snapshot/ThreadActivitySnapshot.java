package dev.profold.sinks.snapshot;

/**
 * Where one thread group of a source spent its time: totals since the source's incarnation started,
 * and its last reported interval. Arrays are indexed by {@link OverheadClass#ordinal()} and must
 * not be modified.
 *
 * @param group normalised thread group name
 * @param totalNanos time per class, cumulative
 * @param current true when the source's last delta reported this group (the interval values below
 *     are current); false for a group that has not been seen since (only its totals are shown)
 * @param threads threads counted in the last interval
 * @param intervalNanos length of the last interval
 * @param lastNanos time per class in the last interval; they add up to {@code lastWallNanos}
 * @param lastWallNanos the threads' wall time in the last interval
 * @param cpuMinNanos least CPU time of one thread in the last interval
 * @param cpuSumNanos CPU time of all threads in the last interval
 * @param cpuMaxNanos most CPU time of one thread in the last interval
 * @param lastIoUnobservedNanos of the last interval, the time during which the source did not
 *     observe I/O waits (its I/O events off; such waits count as idle); -1 when its delta did not
 *     say
 */
public record ThreadActivitySnapshot(
    String group,
    ClassTimes totalNanos,
    boolean current,
    int threads,
    long intervalNanos,
    ClassTimes lastNanos,
    long lastWallNanos,
    long cpuMinNanos,
    long cpuSumNanos,
    long cpuMaxNanos,
    long lastIoUnobservedNanos) {

  /** Time in class {@code c}, cumulative. */
  public long total(OverheadClass c) {
    return totalNanos.get(c);
  }

  /** Time in class {@code c} in the last interval. */
  public long last(OverheadClass c) {
    return lastNanos.get(c);
  }

  /** The share of the last interval's thread time in class {@code c} (0 without time). */
  public double share(OverheadClass c) {
    return lastWallNanos == 0 ? 0 : (double) last(c) / lastWallNanos;
  }

  /** Whether the source said how long it did not observe I/O waits in the last interval. */
  public boolean ioObservationReported() {
    return lastIoUnobservedNanos >= 0;
  }

  /**
   * The share (0..1) of the last interval during which the source did not observe I/O waits, so
   * that an {@code io} share of 0 there means "not looked at"; 0 when it did not say (as before the
   * field existed: a client that reports no I/O gate is taken to observe what it reports).
   */
  public double ioUnobservedShare() {
    if (lastIoUnobservedNanos <= 0 || intervalNanos <= 0) {
      return 0;
    }
    return Math.min(1.0, (double) lastIoUnobservedNanos / intervalNanos);
  }

  /** Average CPU time per thread in the last interval, nanoseconds. */
  public double cpuAvgNanos() {
    return threads == 0 ? 0 : (double) cpuSumNanos / threads;
  }

  /**
   * Computation imbalance (seed: imb = max - avg) in the last interval as a share of the interval:
   * how much of the interval the slowest thread would have saved with the work spread evenly. Never
   * negative: a merged delta's spread is a bound (docs/protocol.md), and one thread counted in two
   * merged intervals but once in {@code threads} can put the average above the maximum.
   */
  public double imbalance() {
    return intervalNanos == 0 ? 0 : Math.max(0, (cpuMaxNanos - cpuAvgNanos()) / intervalNanos);
  }
}
