package dev.profold.client.internal.runtime;

import dev.profold.client.internal.export.Durations;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * One time limit shared by the steps of a flush or a shutdown: each step may wait what the earlier
 * ones left, so all of them together wait at most the limit. Immutable; reads its clock (a {@link
 * System#nanoTime()}-like source) once when made and once per {@link #remaining()}.
 */
final class Deadline {
  private final LongSupplier nanoTime;
  private final long start;
  private final long budgetNanos;

  private Deadline(LongSupplier nanoTime, long budgetNanos) {
    this.nanoTime = nanoTime;
    this.start = nanoTime.getAsLong();
    this.budgetNanos = budgetNanos;
  }

  /**
   * A deadline {@code limit} from now on {@code nanoTime}: a negative limit is zero, one too long
   * for a long count of nanoseconds (about 292 years) has no end in practice.
   */
  static Deadline after(Duration limit, LongSupplier nanoTime) {
    return new Deadline(nanoTime, Durations.saturatedNanos(limit));
  }

  /** What is left of the limit, zero once it has passed. */
  Duration remaining() {
    long elapsed = Math.max(0, nanoTime.getAsLong() - start);
    return Duration.ofNanos(elapsed >= budgetNanos ? 0 : budgetNanos - elapsed);
  }
}
