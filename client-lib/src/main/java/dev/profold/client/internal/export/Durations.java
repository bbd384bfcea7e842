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

  /**
   * {@code d} as a duration setting is written: {@code 500us}, {@code 500ms}, {@code 10s}, {@code
   * 1h}; ISO-8601 ({@code PT-1S}) for what no setting takes (negative, or too long).
   */
  public static String written(Duration d) {
    if (d == null) {
      return "null";
    }
    if (d.isNegative() || d.toSeconds() > 1L << 40) {
      return d.toString();
    }
    if (d.toNanosPart() % 1_000_000 != 0) {
      if (d.toSeconds() > 1_000_000) {
        return d.toString();
      }
      long nanos = d.toNanos();
      return nanos % 1000 == 0 ? nanos / 1000 + "us" : nanos + "ns";
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
