package dev.profold.client.internal.jfr;

import java.util.function.BooleanSupplier;

/**
 * Decides when JFR's socket and file events are on. Once enabled, every socket and file read and
 * write of the JVM reads JFR's clock twice and checks the threshold, whether or not it is recorded
 * (about 70 ns per call here, docs/benchmarks.md). A server on non-blocking I/O (Netty, NIO
 * selectors) makes millions of such calls and none of them waits for as long as the threshold, so
 * it pays for events that never come.
 *
 * <p>So the events are on at start and turned off after {@code quiet} without one. Turned off, they
 * are turned on again for a probe of {@code quiet} after an off period that starts at {@code quiet}
 * and doubles after each probe that found nothing, up to {@value #MAX_OFF_FACTOR} × {@code quiet}.
 * A probe that finds an event keeps them on (until the next {@code quiet} without one) and starts
 * the off periods again from {@code quiet}.
 *
 * <p>JFR records a call only when its event was on from the call's start to its end, so a wait
 * longer than an on-time would never be seen. So before turning the events off, and once per {@code
 * quiet} while they are off, the gate looks whether a thread sits in a blocking read or write
 * ({@link BlockingIo}): if one does, the events stay on, or go on. What is lost is I/O waits above
 * the threshold that start while the events are off, or are in progress when they switch: they
 * count as idle time, as with {@code io=false}.
 *
 * <p>The gate also keeps how long the events have been off in all ({@link #offNanos}), which the
 * agent reports with every delta so that an {@code io} share measured while they were off is read
 * as what it is.
 *
 * <p>Not thread-safe but for {@link #offNanos}: used by the JFR consumer thread. Time is whatever
 * monotonic nanoseconds the caller passes in.
 */
final class IoEventGate {
  /** The longest off period, in units of {@code quiet}. */
  static final int MAX_OFF_FACTOR = 10;

  /** Turns the events on ({@code true}) or off. */
  interface Switch {
    void set(boolean on);
  }

  private final long quietNanos;
  private final Switch events;
  private final BooleanSupplier threadsInIo;
  private volatile boolean on = true;
  private long lastLook;
  private boolean probing; // set once a probe turned the events on (not at the start)
  private boolean found; // an event arrived since the events were last turned on
  private long since; // when the events were last turned on or off (written under this)
  private long lastEvent; // the last event while on, or when they were turned on
  private long offNanos; // the next off period
  private long offBefore; // guarded by this: the off time before the current off period

  /**
   * A gate with the events on from {@code now}.
   *
   * @param quietNanos how long the events stay on without one; 0 or less: always on
   * @param threadsInIo whether some thread sits in a blocking read or write now
   */
  IoEventGate(long quietNanos, Switch events, BooleanSupplier threadsInIo, long now) {
    this.quietNanos = quietNanos;
    this.events = events;
    this.threadsInIo = threadsInIo;
    this.since = now;
    this.lastEvent = now;
    this.offNanos = quietNanos;
  }

  /** One socket or file event arrived. */
  void eventSeen(long now) {
    if (on) {
      lastEvent = now;
      found = true;
    }
  }

  /** Called regularly (at each batch JFR delivers): turns the events on or off when it is time. */
  void tick(long now) {
    if (quietNanos <= 0) {
      return;
    }
    if (on) {
      if (now - lastEvent >= quietNanos) {
        if (threadsInIo.getAsBoolean()) { // long waits in progress: off, they would be lost
          lastEvent = now;
          found = true;
          return;
        }
        if (found) {
          offNanos = quietNanos; // the events were in use: off periods start again
        } else if (probing) {
          offNanos = Math.min(offNanos * 2, quietNanos * MAX_OFF_FACTOR);
        }
        switchTo(false, now);
      }
    } else if (now - since >= offNanos) {
      turnOn(now, false); // a probe
    } else if (now - lastLook >= quietNanos) {
      lastLook = now;
      if (threadsInIo.getAsBoolean()) { // the next such wait is seen; off periods start again
        offNanos = quietNanos;
        turnOn(now, true);
      }
    }
  }

  /** Turns the events on, {@code inUse} when a thread was seen in I/O (else a probe). */
  private void turnOn(long now, boolean inUse) {
    switchTo(true, now);
    probing = true;
    found = inUse;
    lastEvent = now;
  }

  private void switchTo(boolean value, long now) {
    events.set(value);
    synchronized (this) {
      if (value && !on) {
        offBefore += now - since;
      }
      on = value;
      since = now;
    }
    lastLook = now;
  }

  /** How long the events have been off since the gate was made, up to {@code now}; any thread. */
  synchronized long offNanos(long now) {
    return on ? offBefore : offBefore + Math.max(0, now - since);
  }

  /** Whether the events are on now. */
  boolean isOn() {
    return on;
  }
}
