package dev.profold.client.internal.export;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Submitted deltas, counted in sequence numbers, that are neither acknowledged nor counted dropped
 * or rejected yet, and the waits for them ({@link Exporter#flush}). Thread-safe.
 */
final class Unresolved {
  private final AtomicLong count = new AtomicLong();
  private final Object monitor = new Object();

  /** The number of the last wait given up on ({@link #giveUp}), or 0. */
  private volatile long gaveUp;

  /** {@code n} more deltas to resolve. */
  void add(long n) {
    count.addAndGet(n);
  }

  /** {@code n} deltas resolved: each once. Wakes the waits when none is left. */
  void resolve(long n) {
    if (count.addAndGet(-n) <= 0) {
      synchronized (monitor) {
        monitor.notifyAll();
      }
    }
  }

  /** The deltas left; never negative, as each is resolved once. */
  long get() {
    return count.get();
  }

  /** Ends the wait numbered {@code number} at once (see {@link #await}). */
  void giveUp(long number) {
    gaveUp = number;
    synchronized (monitor) {
      monitor.notifyAll();
    }
  }

  /**
   * Waits until no delta is left, at most {@code timeoutNanos}, or until {@link #giveUp} is called
   * with {@code number} (pass {@code Long.MIN_VALUE} for a wait nobody gives up on).
   *
   * @return true when no delta is left
   */
  boolean await(long timeoutNanos, long number) throws InterruptedException {
    long deadline = System.nanoTime() + timeoutNanos;
    synchronized (monitor) {
      while (count.get() > 0 && gaveUp != number) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(monitor, left);
      }
      return count.get() <= 0;
    }
  }
}
