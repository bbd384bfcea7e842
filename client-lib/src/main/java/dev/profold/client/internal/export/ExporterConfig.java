package dev.profold.client.internal.export;

import java.time.Duration;

/**
 * Settings of an {@link Exporter}. Immutable; {@link #defaults()} gives the production values and
 * the {@code with...} methods derive variants.
 *
 * @param maxBufferBytes bound on the serialized bytes of the deltas held until acknowledged (source
 *     and dictionary not counted); beyond it never-sent deltas are merged, and only when merging
 *     cannot make room is the oldest delta dropped. Default 8 MiB, half the collector's default
 *     message limit, so even a delta merged from everything buffered can be sent
 * @param initialBackoff wait before the first reconnect after a failure; default 500 ms
 * @param maxBackoff cap of the exponential backoff (doubling per consecutive failure); default 30 s
 * @param jitter relative spread of each backoff, {@code 0 <= jitter < 1}: a backoff {@code b}
 *     becomes uniform in {@code [b(1-jitter), b(1+jitter)]}; a server-given RetryInfo delay {@code
 *     d} becomes uniform in {@code [d, d(1+jitter)]} (never shorter than asked). Default 0.2
 * @param ackTimeout how long a stream may go without progress (becoming ready, or an ack while
 *     deltas are in flight) before it is abandoned and a new one opened; default 30 s
 * @param maxInFlight deltas sent on a stream and not yet acknowledged, at most. Default 1: the next
 *     delta goes out when the previous one is acknowledged, so a retryable rejection can never let
 *     a later delta be applied first (which would turn the retry into a duplicate and lose the
 *     rejected delta's data)
 */
public record ExporterConfig(
    long maxBufferBytes,
    Duration initialBackoff,
    Duration maxBackoff,
    double jitter,
    Duration ackTimeout,
    int maxInFlight) {

  /** Validates the settings. */
  public ExporterConfig {
    if (maxBufferBytes <= 0) {
      throw new IllegalArgumentException("maxBufferBytes must be > 0, was " + maxBufferBytes);
    }
    if (initialBackoff.isNegative() || initialBackoff.isZero()) {
      throw new IllegalArgumentException("initialBackoff must be > 0, was " + initialBackoff);
    }
    if (maxBackoff.compareTo(initialBackoff) < 0) {
      throw new IllegalArgumentException(
          "maxBackoff ("
              + maxBackoff
              + ") must not be below initialBackoff ("
              + initialBackoff
              + ")");
    }
    if (!(jitter >= 0 && jitter < 1)) {
      throw new IllegalArgumentException("jitter must be in [0, 1), was " + jitter);
    }
    if (ackTimeout.isNegative() || ackTimeout.isZero()) {
      throw new IllegalArgumentException("ackTimeout must be > 0, was " + ackTimeout);
    }
    if (maxInFlight < 1) {
      throw new IllegalArgumentException("maxInFlight must be >= 1, was " + maxInFlight);
    }
  }

  /** The production defaults: 8 MiB, 500 ms .. 30 s backoff with ±20% jitter, 30 s, 1. */
  public static ExporterConfig defaults() {
    return new ExporterConfig(
        8L << 20, Duration.ofMillis(500), Duration.ofSeconds(30), 0.2, Duration.ofSeconds(30), 1);
  }

  /** This configuration with another buffer bound. */
  public ExporterConfig withMaxBufferBytes(long bytes) {
    return new ExporterConfig(bytes, initialBackoff, maxBackoff, jitter, ackTimeout, maxInFlight);
  }

  /** This configuration with another backoff range. */
  public ExporterConfig withBackoff(Duration initial, Duration max) {
    return new ExporterConfig(maxBufferBytes, initial, max, jitter, ackTimeout, maxInFlight);
  }

  /** This configuration with another jitter. */
  public ExporterConfig withJitter(double relative) {
    return new ExporterConfig(
        maxBufferBytes, initialBackoff, maxBackoff, relative, ackTimeout, maxInFlight);
  }

  /** This configuration with another ack timeout. */
  public ExporterConfig withAckTimeout(Duration timeout) {
    return new ExporterConfig(
        maxBufferBytes, initialBackoff, maxBackoff, jitter, timeout, maxInFlight);
  }

  /** This configuration with another in-flight window. */
  public ExporterConfig withMaxInFlight(int deltas) {
    return new ExporterConfig(
        maxBufferBytes, initialBackoff, maxBackoff, jitter, ackTimeout, deltas);
  }
}
