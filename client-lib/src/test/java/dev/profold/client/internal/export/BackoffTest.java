package dev.profold.client.internal.export;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
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
    assertThat(b.after(Duration.ofSeconds(3))).isEqualTo(Duration.ofSeconds(3));
    assertThat(b.next()).isEqualTo(Duration.ofMillis(200));
  }

  @Test
  void aServerGivenDelayShorterThanTheBackoffWaitsTheBackoffWhichGoesOnGrowing() {
    Backoff b = new Backoff(config(0), fixed(0.5));
    assertThat(b.after(Duration.ZERO)).isEqualTo(Duration.ofMillis(100));
    assertThat(b.after(Duration.ZERO)).isEqualTo(Duration.ofMillis(200));
    assertThat(b.after(Duration.ofMillis(300))).isEqualTo(Duration.ofMillis(400));
    assertThat(b.after(Duration.ofSeconds(1))).isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void aServerGivenDelayIsTakenAtMostAsTenMinutesOrTheMaximumBackoffIfLonger() {
    assertThat(new Backoff(config(0), fixed(0.5)).after(Duration.ofDays(100_000)))
        .isEqualTo(Backoff.MAX_ASKED);
    ExporterConfig hour =
        ExporterConfig.defaults()
            .withBackoff(Duration.ofMillis(100), Duration.ofHours(1))
            .withJitter(0);
    assertThat(new Backoff(hour, fixed(0.5)).after(Duration.ofDays(1)))
        .isEqualTo(Duration.ofHours(1));
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
  void aServerGivenDelayIsNeverShortenedNorShorterThanTheBackoff(
      @ForAll @IntRange(min = 0, max = 50) int failures,
      @ForAll @LongRange(min = 0, max = 600_000) long millis,
      @ForAll @DoubleRange(min = 0, max = 1, maxIncluded = false) double jitter,
      @ForAll @DoubleRange(min = 0, max = 1, maxIncluded = false) double random) {
    Backoff b = new Backoff(config(jitter), fixed(random));
    Backoff twin = new Backoff(config(jitter), fixed(random));
    for (int i = 0; i < failures; i++) {
      b.next();
      twin.next();
    }
    Duration delay = Duration.ofMillis(millis);
    Duration own = twin.next();
    Duration waited = b.after(delay);
    assertThat(waited).isGreaterThanOrEqualTo(delay).isGreaterThanOrEqualTo(own);
    assertThat(waited)
        .isLessThanOrEqualTo(
            Collections.max(
                List.of(own, Duration.ofNanos((long) (delay.toNanos() * (1 + jitter))))));
  }
}
