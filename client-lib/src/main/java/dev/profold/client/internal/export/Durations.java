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
}
