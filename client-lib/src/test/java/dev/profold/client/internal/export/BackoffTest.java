package dev.profold.client.internal.export;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.random.RandomGenerator;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

class BackoffTest {
  private static ExporterConfig config(double jitter) {
    return ExporterConfig.defaults()
        .withBackoff(Duration.ofMillis(100), Duration.ofSeconds(10))
        .withJitter(jitter);
  }

  /** A generator whose nextDouble() is always {@code value}. */
  private static RandomGenerator fixed(double value) {
    return new RandomGenerator() {
      @Override
      public long nextLong() {
        throw new UnsupportedOperationException();
      }

      @Override
      public double nextDouble() {
        return value;
      }
    };
  }

  @Test
  void doublesPerConsecutiveFailureUpToTheMaximumAndStartsOverAfterProgress() {
    Backoff b = new Backoff(config(0), fixed(0.5));
    assertThat(b.next()).isEqualTo(Duration.ofMillis(100));
    assertThat(b.next()).isEqualTo(Duration.ofMillis(200));
    assertThat(b.next()).isEqualTo(Duration.ofMillis(400));
    for (int i = 0; i < 40; i++) {
      b.next();
    }
    assertThat(b.next()).isEqualTo(Duration.ofSeconds(10));
    b.reset();
    assertThat(b.next()).isEqualTo(Duration.ofMillis(100));
  }

  @Test
  void aServerGivenDelayCountsAsAFailure() {
    Backoff b = new Backoff(config(0), fixed(0.5));
    assertThat(b.stretch(Duration.ofSeconds(3))).isEqualTo(Duration.ofSeconds(3));
    assertThat(b.next()).isEqualTo(Duration.ofMillis(200));
  }

  @Property
  void theJitterSpreadsTheBackoffBothWaysWithinItsFraction(
      @ForAll @IntRange(min = 0, max = 50) int failures,
      @ForAll @DoubleRange(min = 0, max = 1, maxIncluded = false) double jitter,
      @ForAll @DoubleRange(min = 0, max = 1, maxIncluded = false) double random) {
    Backoff b = new Backoff(config(jitter), fixed(random));
    for (int i = 0; i < failures; i++) {
      b.next();
    }
    double base = Math.min(10e9, 100e6 * Math.pow(2, Math.min(failures, 30)));
    long nanos = b.next().toNanos();
    assertThat((double) nanos).isBetween(base * (1 - jitter) - 1, base * (1 + jitter));
  }

  @Property
  void aServerGivenDelayIsNeverShortened(
      @ForAll @LongRange(min = 0, max = 3_600_000) long millis,
      @ForAll @DoubleRange(min = 0, max = 1, maxIncluded = false) double jitter,
      @ForAll @DoubleRange(min = 0, max = 1, maxIncluded = false) double random) {
    Duration delay = Duration.ofMillis(millis);
    Duration stretched = new Backoff(config(jitter), fixed(random)).stretch(delay);
    assertThat(stretched)
        .isBetween(delay, Duration.ofNanos((long) (delay.toNanos() * (1 + jitter))));
  }
}
