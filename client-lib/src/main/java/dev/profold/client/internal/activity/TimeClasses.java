package dev.profold.client.internal.activity;

import dev.profold.client.Kind;

/**
 * A thread's time split into classes, as an array indexed by the constants here, and the arithmetic
 * on such arrays. Stateless.
 */
final class TimeClasses {
  static final int COMPUTE = 0;
  static final int SYNC = 1;
  static final int WAIT = 2;
  static final int IO = 3;
  static final int RUNTIME = 4;
  static final int THREAD_MGMT = 5;
  static final int CPU_WAIT = 6;
  static final int IDLE = 7;

  /** The length of a classes array. */
  static final int CLASSES = 8;

  private TimeClasses() {}

  /** The class a reported block of {@code kind} counts in. */
  static int index(Kind kind) {
    return switch (kind) {
      case COMPUTE -> COMPUTE;
      case SYNC -> SYNC;
      case WAIT -> WAIT;
      case IO -> IO;
      case RUNTIME -> RUNTIME;
      case THREAD_MGMT -> THREAD_MGMT;
    };
  }

  /**
   * The off-CPU classes {@code off}, scaled down in proportion when they add up to over {@code
   * room}; then they add up to {@code room} exactly (the nanoseconds that rounding leaves over go
   * to the classes, never one above its own time), so that no idle time is made of rounding: a
   * block more could otherwise leave a nanosecond more idle, and more cpu_wait.
   */
  static long[] fit(long[] off, long room) {
    long total = sum(off);
    if (total <= room) {
      return off;
    }
    long[] v = new long[CLASSES];
    for (int k = SYNC; k <= THREAD_MGMT; k++) {
      v[k] = scaled(off[k], room, total);
    }
    long left = room - sum(v);
    for (int k = SYNC; k <= THREAD_MGMT && left != 0; k++) {
      long step = left > 0 ? Math.min(left, off[k] - v[k]) : Math.max(left, -v[k]);
      v[k] += step;
      left -= step;
    }
    return v;
  }

  /** The time in all classes. */
  static long sum(long[] classes) {
    long total = 0;
    for (long v : classes) {
      total += v;
    }
    return total;
  }

  /** {@code v * room / total}, rounded down, without overflow. */
  static long scaled(long v, long room, long total) {
    return (long) Math.floor((double) v * ((double) room / (double) total));
  }
}
