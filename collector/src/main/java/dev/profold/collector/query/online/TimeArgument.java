package dev.profold.collector.query.online;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Times and durations as people type them for {@code --from}, {@code --to}, {@code --deadline} and
 * the HTTP query parameters. Stateless and thread-safe.
 *
 * <p>A time is one of: {@code now}; a relative time {@code -15m}, {@code -1h30m} or {@code now-15m}
 * (that long before now); an RFC 3339 date-time with an offset ({@code 2024-05-01T12:00:00Z},
 * {@code 2024-05-01T14:00:00.5+02:00}); or an integer, read as unix epoch nanoseconds. A duration
 * is one or more integer-unit pairs, units {@code ns}, {@code us}, {@code ms}, {@code s}, {@code
 * m}, {@code h}, {@code d}: {@code 10s}, {@code 500ms}, {@code 1h30m}.
 */
public final class TimeArgument {
  private static final Pattern PART = Pattern.compile("(\\d+)(ns|us|ms|s|m|h|d)");
  private static final Pattern DURATION = Pattern.compile("(?:\\d+(?:ns|us|ms|s|m|h|d))+");
  private static final Pattern INTEGER = Pattern.compile("\\d+");

  /** How a time may be written, for error messages. */
  public static final String TIME_FORMS =
      "an RFC 3339 time (2024-05-01T12:00:00Z), now, a time relative to now (-15m, -1h30m)"
          + " or unix nanoseconds";

  /**
   * Unix nanoseconds below this (1e15: 12 days into 1970) are taken for seconds or milliseconds
   * written by mistake, and refused.
   */
  static final long MIN_PLAIN_NANOS = 1_000_000_000_000_000L;

  private TimeArgument() {}

  /**
   * The time {@code text} stands for, in unix epoch nanoseconds.
   *
   * @param clock what {@code now} is
   * @throws IllegalArgumentException when {@code text} is none of the forms (the message says which
   *     are allowed)
   */
  public static long parseTime(String text, InstantSource clock) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    if (t.equals("now")) {
      return nanos(clock.instant(), text);
    }
    String relative =
        t.startsWith("now-") ? t.substring(4) : t.startsWith("-") ? t.substring(1) : null;
    if (relative != null && DURATION.matcher(relative).matches()) {
      Instant now = clock.instant();
      try {
        return Math.subtractExact(nanos(now, text), parseDuration(relative).toNanos());
      } catch (ArithmeticException e) {
        throw new IllegalArgumentException("'" + text + "' reaches too far back", e);
      }
    }
    if (INTEGER.matcher(t).matches()) {
      long n;
      try {
        n = Long.parseLong(t);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("'" + text + "' is too large for unix nanoseconds", e);
      }
      return checkedNanos(n, text);
    }
    try {
      String iso = t.toUpperCase(Locale.ROOT);
      if (iso.length() > 10 && iso.charAt(10) == ' ') {
        iso = iso.substring(0, 10) + 'T' + iso.substring(11);
      }
      return nanos(OffsetDateTime.parse(iso).toInstant(), text);
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException("'" + text + "' is not a time: use " + TIME_FORMS, e);
    }
  }

  /**
   * {@code n} as unix nanoseconds, refused when it is positive and below {@link #MIN_PLAIN_NANOS}:
   * unix seconds or milliseconds (1714564800) given by mistake would mean January 1970 (the same
   * check for a time typed as text and one sent as a number over gRPC).
   *
   * @param written {@code n} as the caller wrote it, for the message
   * @throws IllegalArgumentException saying which unit it looks like and how to write it
   */
  public static long checkedNanos(long n, String written) {
    if (n > 0 && n < MIN_PLAIN_NANOS) {
      throw new IllegalArgumentException(
          "'"
              + written
              + "' would be unix nanoseconds in January 1970; for "
              + (n >= 100_000_000_000L ? "milliseconds" : "seconds")
              + " write the nanoseconds ("
              + n
              + (n >= 100_000_000_000L ? "000000" : "000000000")
              + ") or an RFC 3339 time (2024-05-01T12:00:00Z)");
    }
    return n;
  }

  /**
   * The duration {@code text} stands for.
   *
   * @throws IllegalArgumentException when {@code text} is not a duration
   */
  public static Duration parseDuration(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    if (!DURATION.matcher(t).matches()) {
      throw new IllegalArgumentException(
          "'" + text + "' is not a duration: use e.g. 10s, 500ms, 2m, 1h30m");
    }
    long total = 0;
    Matcher m = PART.matcher(t);
    try {
      while (m.find()) {
        long unit =
            switch (m.group(2)) {
              case "ns" -> 1L;
              case "us" -> 1_000L;
              case "ms" -> 1_000_000L;
              case "s" -> 1_000_000_000L;
              case "m" -> 60_000_000_000L;
              case "h" -> 3_600_000_000_000L;
              default -> 86_400_000_000_000L;
            };
        total = Math.addExact(total, Math.multiplyExact(Long.parseLong(m.group(1)), unit));
      }
    } catch (ArithmeticException | NumberFormatException e) {
      throw new IllegalArgumentException("'" + text + "' is too long a duration", e);
    }
    return Duration.ofNanos(total);
  }

  private static long nanos(Instant t, String text) {
    try {
      return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000_000L), t.getNano());
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(
          "'" + text + "' is outside the range of unix nanoseconds (years 1677..2262)", e);
    }
  }
}
