package dev.profold.client.internal.export;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * How long the exporter waits before its next stream: an exponential backoff with jitter over the
 * consecutive failures, or a server-given delay spread upwards. Not thread-safe: the exporter's
 * thread only.
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

  /** A server-given delay, never shortened, spread upwards by the jitter; counts a failure. */
  Duration stretch(Duration delay) {
    consecutiveFailures++;
    double factor = 1 + config.jitter() * random.nextDouble();
    return Duration.ofNanos((long) (Durations.saturatedNanos(delay) * factor));
  }

  /** Progress: the next failure backs off from the start again. */
  void reset() {
    consecutiveFailures = 0;
  }
}
