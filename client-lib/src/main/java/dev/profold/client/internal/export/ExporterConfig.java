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
 *     d} becomes uniform in {@code [d, d(1+jitter)]} (never shorter than asked, nor than the
 *     backoff the failure would have had; {@code d} taken at most as 10 minutes or {@code
 *     maxBackoff} if longer). Default 0.2
 * @param ackTimeout how long a stream may go without progress (becoming ready, or an ack while
 *     deltas are in flight) before it is abandoned and a new one opened, plus a second per 64 KiB
 *     in flight (the upload of a large message on a slow link); default 30 s
 * @param maxInFlight deltas sent on a stream and not yet acknowledged, at most. Default 1: the next
 *     delta goes out when the previous one is acknowledged, so a retryable rejection can never let
 *     a later delta be applied first (which would turn the retry into a duplicate and lose the
 *     rejected delta's data)
 * @param maxMessageBytes the largest Push message the collector accepts (its {@code
 *     limits.max_message_bytes}), at least 64 KiB. A delta is split into messages of at most half
 *     of it (the other half is room for the dictionary definitions a message may carry) and merged
 *     deltas stay under that half too; a message that would still be larger is not sent (it would
 *     end the stream) but dropped and counted. Default 16 MiB, the collector's default
 * @param rotateAfterBytes serialized bytes of dictionary definitions a stream carries before the
 *     exporter ends it and opens a new one, at least 1. The threshold is this or twice what the
 *     stream's first message carried, whichever is larger: a new stream begins by re-sending the
 *     definitions its deltas use, so a process whose live set is large does not rotate each time
 *     the minimum age has passed. Rotation lets the collector free the definitions a long-running
 *     process no longer uses (see {@link Exporter}). Default 1 MiB
 * @param minStreamAge how long a stream stays open at least before it is rotated, not negative;
 *     default 10 minutes
 */
public record ExporterConfig(
    long maxBufferBytes,
    Duration initialBackoff,
    Duration maxBackoff,
    double jitter,
    Duration ackTimeout,
    int maxInFlight,
    long maxMessageBytes,
    long rotateAfterBytes,
    Duration minStreamAge) {

  /** The smallest {@link #maxMessageBytes()} accepted. */
  public static final long MIN_MESSAGE_BYTES = 64 << 10;

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
    if (maxMessageBytes < MIN_MESSAGE_BYTES) {
      throw new IllegalArgumentException(
          "maxMessageBytes must be >= " + MIN_MESSAGE_BYTES + ", was " + maxMessageBytes);
    }
    if (rotateAfterBytes < 1) {
      throw new IllegalArgumentException("rotateAfterBytes must be >= 1, was " + rotateAfterBytes);
    }
    if (minStreamAge.isNegative()) {
      throw new IllegalArgumentException("minStreamAge must be >= 0, was " + minStreamAge);
    }
  }

  /** The largest delta (entries and the rest, no dictionary) sent in one message: half of it. */
  public long maxDeltaBytes() {
    return deltaBytes(maxMessageBytes);
  }

  /**
   * How a message of at most {@code messageBytes} is shared: half for the delta, the other half for
   * the dictionary definitions it carries and the envelope.
   */
  static long deltaBytes(long messageBytes) {
    return messageBytes / 2;
  }

  /**
   * The dictionary's bound for messages of at most {@code messageBytes}: a quarter of them (a new
   * stream's first message may carry much of it), and never above {@link
   * DeltaEncoder#MAX_DICTIONARY_BYTES}.
   */
  public static long dictionaryBytes(long messageBytes) {
    return Math.min(DeltaEncoder.MAX_DICTIONARY_BYTES, messageBytes / 4);
  }

  /**
   * The production defaults: 8 MiB, 500 ms .. 30 s backoff with ±20% jitter, 30 s, 1, 16 MiB, and
   * rotation after 1 MiB of definitions once a stream is 10 minutes old.
   */
  public static ExporterConfig defaults() {
    return new ExporterConfig(
        8L << 20,
        Duration.ofMillis(500),
        Duration.ofSeconds(30),
        0.2,
        Duration.ofSeconds(30),
        1,
        16L << 20,
        1L << 20,
        Duration.ofMinutes(10));
  }

  /** This configuration with another buffer bound. */
  public ExporterConfig withMaxBufferBytes(long bytes) {
    return new ExporterConfig(
        bytes,
        initialBackoff,
        maxBackoff,
        jitter,
        ackTimeout,
        maxInFlight,
        maxMessageBytes,
        rotateAfterBytes,
        minStreamAge);
  }

  /** This configuration with another backoff range. */
  public ExporterConfig withBackoff(Duration initial, Duration max) {
    return new ExporterConfig(
        maxBufferBytes,
        initial,
        max,
        jitter,
        ackTimeout,
        maxInFlight,
        maxMessageBytes,
        rotateAfterBytes,
        minStreamAge);
  }

  /** This configuration with another jitter. */
  public ExporterConfig withJitter(double relative) {
    return new ExporterConfig(
        maxBufferBytes,
        initialBackoff,
        maxBackoff,
        relative,
        ackTimeout,
        maxInFlight,
        maxMessageBytes,
        rotateAfterBytes,
        minStreamAge);
  }

  /** This configuration with another ack timeout. */
  public ExporterConfig withAckTimeout(Duration timeout) {
    return new ExporterConfig(
        maxBufferBytes,
        initialBackoff,
        maxBackoff,
        jitter,
        timeout,
        maxInFlight,
        maxMessageBytes,
        rotateAfterBytes,
        minStreamAge);
  }

  /** This configuration with another in-flight window. */
  public ExporterConfig withMaxInFlight(int deltas) {
    return new ExporterConfig(
        maxBufferBytes,
        initialBackoff,
        maxBackoff,
        jitter,
        ackTimeout,
        deltas,
        maxMessageBytes,
        rotateAfterBytes,
        minStreamAge);
  }

  /** This configuration with another message limit. */
  public ExporterConfig withMaxMessageBytes(long bytes) {
    return new ExporterConfig(
        maxBufferBytes,
        initialBackoff,
        maxBackoff,
        jitter,
        ackTimeout,
        maxInFlight,
        bytes,
        rotateAfterBytes,
        minStreamAge);
  }

  /** This configuration with another rotation policy. */
  public ExporterConfig withRotation(long afterBytes, Duration minAge) {
    return new ExporterConfig(
        maxBufferBytes,
        initialBackoff,
        maxBackoff,
        jitter,
        ackTimeout,
        maxInFlight,
        maxMessageBytes,
        afterBytes,
        minAge);
  }
}
