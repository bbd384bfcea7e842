package dev.profold.sinks.snapshot;

import java.util.Arrays;

/** Nanoseconds per {@link OverheadClass}. Immutable. */
public final class ClassTimes {
  private static final int CLASSES = OverheadClass.values().length;
  private final long[] nanos;

  private ClassTimes(long[] nanos) {
    this.nanos = nanos;
  }

  /**
   * The times given in {@link OverheadClass} order (compute, sync, wait, io, runtime, thread_mgmt,
   * cpu_wait, idle); the array is copied.
   *
   * @throws IllegalArgumentException unless there is one value per class
   */
  public static ClassTimes of(long... nanos) {
    if (nanos.length != CLASSES) {
      throw new IllegalArgumentException(
          "expected " + CLASSES + " class times, got " + nanos.length);
    }
    return new ClassTimes(nanos.clone());
  }

  /** No time in any class. */
  public static ClassTimes zero() {
    return new ClassTimes(new long[CLASSES]);
  }

  /** Time in class {@code c}. */
  @SuppressWarnings("EnumOrdinal") // the values are in the enum's order by contract
  public long get(OverheadClass c) {
    return nanos[c.ordinal()];
  }

  /** The sum over the classes. */
  public long sum() {
    long s = 0;
    for (long v : nanos) {
      s += v;
    }
    return s;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ClassTimes t && Arrays.equals(nanos, t.nanos);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(nanos);
  }

  @Override
  public String toString() {
    return Arrays.toString(nanos);
  }
}
