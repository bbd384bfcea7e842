package dev.profold.client.internal.export;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * How long the exporter waits before its next stream: an exponential backoff with jitter over the
 * consecutive failures, or a server-given delay spread upwards (at least that backoff). Not
 * thread-safe: the exporter's thread only.
 */
final class Backoff {
  private final ExporterConfig config;
  private final RandomGenerator random;
  private int consecutiveFailures;

  Backoff(ExporterConfig config, RandomGenerator random) {
    this.config = config;
    this.random = random;
  }

  /**
   * {@link ExporterConfig#initialBackoff()} doubled per consecutive failure, at most {@link
   * ExporterConfig#maxBackoff()}, times 1 ± {@link ExporterConfig#jitter()}; counts a failure.
   */
  Duration next() {
    int exponent = Math.min(consecutiveFailures, 30);
    consecutiveFailures++;
    double base =
        Math.min(
            (double) config.maxBackoff().toNanos(),
            config.initialBackoff().toNanos() * Math.pow(2, exponent));
    double factor = 1 + config.jitter() * (2 * random.nextDouble() - 1);
    return Duration.ofNanos((long) (base * factor));
  }

  /**
   * The longest server-given delay honoured as given: a longer one (a proxy's, a misconfigured
   * collector's) is taken as this long, unless {@link ExporterConfig#maxBackoff()} is longer.
   */
  static final Duration MAX_ASKED = Duration.ofMinutes(10);

  /**
   * After a failure whose status asked for {@code asked} (RetryInfo): that delay, never shortened
   * and spread upwards by the jitter, but never less than {@link #next()} (computed and counted
   * here), so that a delay of zero, or the same short delay answered again and again by a collector
   * that stays down, still backs off; and {@code asked} taken at most as the longer of {@link
   * #MAX_ASKED} and {@link ExporterConfig#maxBackoff()}. Counts a failure.
   */
  Duration after(Duration asked) {
    Duration own = next();
    long cap = Math.max(MAX_ASKED.toNanos(), config.maxBackoff().toNanos());
    long nanos = Math.min(Durations.saturatedNanos(asked), cap);
    double factor = 1 + config.jitter() * random.nextDouble();
    Duration stretched = Duration.ofNanos((long) (nanos * factor));
    return stretched.compareTo(own) >= 0 ? stretched : own;
  }

  /** Progress: the next failure backs off from the start again. */
  void reset() {
    consecutiveFailures = 0;
  }
}
