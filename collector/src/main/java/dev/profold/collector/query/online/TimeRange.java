package dev.profold.collector.query.online;

import dev.profold.sinks.snapshot.IntervalSnapshot;
import java.util.OptionalLong;

/**
 * What an online query runs over: the cumulative state (no bound), or the retained closed intervals
 * that lie wholly inside {@code [from, to)}. An absent bound is open on its side. Immutable.
 *
 * <p>The rule, precisely: a retained interval {@code [start, end)} is included iff {@code from <=
 * start} (or no {@code from}) and {@code end <= to} (or no {@code to}). An interval that only
 * partly overlaps the range is left out, never split or prorated: the collector holds one state per
 * interval and cannot tell which part of it fell inside the range.
 *
 * @param from start of the range, unix epoch nanoseconds, inclusive
 * @param to end of the range, unix epoch nanoseconds, exclusive
 */
public record TimeRange(OptionalLong from, OptionalLong to) {

  private static final TimeRange CUMULATIVE =
      new TimeRange(OptionalLong.empty(), OptionalLong.empty());

  /** Checks that a range with both bounds is not empty. */
  public TimeRange {
    if (from.isPresent() && to.isPresent() && from.getAsLong() >= to.getAsLong()) {
      throw new IllegalArgumentException(
          "the range is empty: from ("
              + Interval.instantText(from.getAsLong())
              + ") must be before to ("
              + Interval.instantText(to.getAsLong())
              + ")");
    }
  }

  /** No bound: the cumulative state. */
  public static TimeRange cumulative() {
    return CUMULATIVE;
  }

  /**
   * The range from the optional bounds (null = absent).
   *
   * @throws IllegalArgumentException when both are given and {@code from >= to}
   */
  public static TimeRange of(Long from, Long to) {
    return new TimeRange(
        from == null ? OptionalLong.empty() : OptionalLong.of(from),
        to == null ? OptionalLong.empty() : OptionalLong.of(to));
  }

  /** True when neither bound is given: the query runs over the cumulative state. */
  public boolean isCumulative() {
    return from.isEmpty() && to.isEmpty();
  }

  /** Whether the retained interval {@code [start, end)} lies wholly inside this range. */
  public boolean covers(long start, long end) {
    return (from.isEmpty() || start >= from.getAsLong()) && (to.isEmpty() || end <= to.getAsLong());
  }

  /** Whether {@code interval} lies wholly inside this range. */
  public boolean covers(IntervalSnapshot interval) {
    return covers(interval.startUnixNanos(), interval.endUnixNanos());
  }

  /** The range as text for messages: {@code [2024-05-01T12:00:00Z, 2024-05-01T12:15:00Z)}. */
  @Override
  public String toString() {
    if (isCumulative()) {
      return "cumulative";
    }
    return "["
        + (from.isPresent() ? Interval.instantText(from.getAsLong()) : "-inf")
        + ", "
        + (to.isPresent() ? Interval.instantText(to.getAsLong()) : "+inf")
        + ")";
  }
}
