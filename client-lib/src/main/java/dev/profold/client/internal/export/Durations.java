package dev.profold.client.internal.export;

import java.time.Duration;

/** Durations as the schedulers and waits of the client take them. */
public final class Durations {
  private Durations() {}

  /**
   * {@code d} in nanoseconds: 0 if negative, {@link Long#MAX_VALUE} (about 292 years, no end in
   * practice) if too long for a long.
   */
  public static long saturatedNanos(Duration d) {
    if (d.isNegative()) {
      return 0;
    }
    try {
      return d.toNanos();
    } catch (ArithmeticException e) {
      return Long.MAX_VALUE;
    }
  }

  /** {@code d} as a duration setting is written: {@code 500ms}, {@code 10s}, {@code 1h}. */
  public static String written(Duration d) {
    if (d == null) {
      return "null";
    }
    if (d.isNegative() || d.getNano() % 1_000_000 != 0 || d.getSeconds() > 1L << 40) {
      return d.toString();
    }
    long ms = d.toMillis();
    if (ms != 0 && ms % 3_600_000 == 0) {
      return ms / 3_600_000 + "h";
    }
    if (ms != 0 && ms % 60_000 == 0) {
      return ms / 60_000 + "m";
    }
    return ms % 1000 == 0 ? ms / 1000 + "s" : ms + "ms";
  }
}
