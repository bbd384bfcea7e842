package dev.profold.collector.testing;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An {@link InstantSource} that only moves when a test says so: no sleeping, no real time.
 *
 * <p>Time is held as unix epoch nanoseconds (the unit the wire protocol and the fold engine use).
 * Thread-safe, so a test may move it while another thread (a fold worker, a gRPC server) reads it.
 */
public final class MutableClock implements InstantSource {
  private final AtomicLong nanos;

  /** A clock standing at {@code epochNanos} unix epoch nanoseconds. */
  public MutableClock(long epochNanos) {
    this.nanos = new AtomicLong(epochNanos);
  }

  /** A clock standing at {@code instant}. */
  public static MutableClock at(Instant instant) {
    return new MutableClock(toNanos(instant));
  }

  /** A clock standing at {@code epochNanos} unix epoch nanoseconds. */
  public static MutableClock atNanos(long epochNanos) {
    return new MutableClock(epochNanos);
  }

  @Override
  public Instant instant() {
    long n = nanos.get();
    return Instant.ofEpochSecond(
        Math.floorDiv(n, 1_000_000_000L), Math.floorMod(n, 1_000_000_000L));
  }

  /** The current time in unix epoch nanoseconds. */
  public long nanos() {
    return nanos.get();
  }

  /** Moves the clock to {@code epochNanos} (backwards too, to test clock steps). */
  public MutableClock setNanos(long epochNanos) {
    nanos.set(epochNanos);
    return this;
  }

  /** Moves the clock to {@code instant}. */
  public MutableClock set(Instant instant) {
    return setNanos(toNanos(instant));
  }

  /** Moves the clock forward by {@code delta} nanoseconds (backwards when negative). */
  public MutableClock advanceNanos(long delta) {
    nanos.addAndGet(delta);
    return this;
  }

  /** Moves the clock forward by {@code d}. */
  public MutableClock advance(Duration d) {
    return advanceNanos(d.toNanos());
  }

  private static long toNanos(Instant t) {
    return Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000_000L), t.getNano());
  }

  @Override
  public String toString() {
    return "MutableClock[" + instant() + "]";
  }
}
