package dev.profold.collector.query.online;

import java.time.Instant;

/**
 * A closed interval of a scheme, {@code [start, end)} in unix epoch nanoseconds, as reported back
 * to the caller of an online query.
 *
 * @param startUnixNanos start, inclusive
 * @param endUnixNanos end, exclusive
 */
public record Interval(long startUnixNanos, long endUnixNanos) {

  /** {@code [start, end)} with RFC 3339 instants. */
  @Override
  public String toString() {
    return "[" + instantText(startUnixNanos) + ", " + instantText(endUnixNanos) + ")";
  }

  /** A unix-nanosecond time as an RFC 3339 instant in UTC. */
  static String instantText(long unixNanos) {
    return Instant.ofEpochSecond(
            Math.floorDiv(unixNanos, 1_000_000_000L), Math.floorMod(unixNanos, 1_000_000_000L))
        .toString();
  }
}
