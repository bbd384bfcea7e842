package dev.profold.client.internal.jfr;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.LongUnaryOperator;

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
 * <p>A call that does not wait for I/O can still take longer than the threshold: a non-blocking
 * read or write on a saturated CPU, preempted in the middle and run again only after other threads
 * had their turn, is timed by JFR as I/O (on the overhead benchmark's saturated server, safepoints
 * explained 3 of 133 such events and CPU samples 1; docs/benchmarks.md). So where the run-queue
 * wait of a thread can be read ({@code runQueue}, Linux), its I/O events count as found only when
 * their time over the last two batches exceeds the time the thread waited for a CPU over the same
 * two: I/O time smaller than that is within the noise of the CPU contention. A thread's first
 * event, and the events of a thread whose wait cannot be read, count as before. What it costs:
 * under CPU contention, I/O waits shorter in total than the thread's run-queue wait no longer keep
 * the events on; the look at the threads still does, unless the OS finds the thread runnable
 * ({@link BlockingIo}).
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

  /** Threads whose I/O is judged against their run-queue wait: at most this many at a time. */
  static final int MAX_JUDGED_THREADS = 64;

  private final LongUnaryOperator runQueue;
  private final Map<Long, Judged> judged = new HashMap<>(); // by OS thread id
  private final Map<Long, Long> batchIo = new HashMap<>(); // this batch's I/O nanos, by OS thread

  /** A thread whose I/O events are judged: its run-queue wait at the last two ticks. */
  private static final class Judged {
    long oneAgo;
    long twoAgo = -1; // -1: one tick old only
    long lastIo; // when it last had an I/O event
    long prevIo; // its I/O in the previous batch

    Judged(long waited, long now) {
      oneAgo = waited;
      lastIo = now;
    }
  }

  /**
   * A gate with the events on from {@code now}.
   *
   * @param quietNanos how long the events stay on without one; 0 or less: always on
   * @param threadsInIo whether some thread sits in a blocking read or write now
   * @param runQueue nanoseconds OS thread {@code tid} waited for a CPU so far, never decreasing, or
   *     -1 when it cannot be read (then the thread's events are not judged)
   */
  IoEventGate(
      long quietNanos,
      Switch events,
      BooleanSupplier threadsInIo,
      LongUnaryOperator runQueue,
      long now) {
    this.quietNanos = quietNanos;
    this.runQueue = runQueue;
    this.events = events;
    this.threadsInIo = threadsInIo;
    this.since = now;
    this.lastEvent = now;
    this.offNanos = quietNanos;
  }

  /**
   * One socket or file event of OS thread {@code tid} (0 or less: unknown) that took {@code
   * durationNanos} arrived. It counts as found now, unless the thread is one whose run-queue wait
   * the gate follows: then at the next {@link #tick}, if the thread's I/O in this batch and the
   * previous one exceeds the time it waited for a CPU over the same two batches. A thread's first
   * event counts as found (there is nothing to judge it by) and the gate follows the thread from
   * then on, until it ends; at most {@value #MAX_JUDGED_THREADS} threads, a new one taking the
   * place of the one whose last I/O event is the oldest if that was a quiet time ago or more.
   */
  void eventSeen(long now, long tid, long durationNanos) {
    if (!on) {
      return;
    }
    boolean judgeable = tid > 0 && quietNanos > 0;
    Judged j = judgeable ? judged.get(tid) : null;
    if (j == null) {
      if (judgeable && (judged.size() < MAX_JUDGED_THREADS || evictOne(now))) {
        long waited = runQueue.applyAsLong(tid);
        if (waited >= 0) {
          judged.put(tid, new Judged(waited, now));
        }
      }
      found(now);
      return;
    }
    j.lastIo = now;
    batchIo.merge(tid, Math.max(0, durationNanos), Long::sum);
  }

  /**
   * Drops the followed thread whose last I/O event is the oldest, if that was a quiet time ago or
   * more; returns whether one was dropped.
   */
  private boolean evictOne(long now) {
    Map.Entry<Long, Judged> oldest = null;
    for (Map.Entry<Long, Judged> e : judged.entrySet()) {
      if (oldest == null || e.getValue().lastIo - oldest.getValue().lastIo < 0) {
        oldest = e;
      }
    }
    if (oldest == null || now - oldest.getValue().lastIo < quietNanos) {
      return false;
    }
    judged.remove(oldest.getKey());
    return true;
  }

  /**
   * Reads the followed threads' run-queue wait (every tick, on or off, so that each event has a
   * baseline from before it) and judges the I/O of this batch and the previous one against the wait
   * over the same two ticks. Threads whose wait can no longer be read (ended) are dropped, their
   * I/O counted as found; a wait that went down (the id now names another thread) starts the thread
   * afresh, its I/O counted as found.
   */
  private void judge(long now) {
    Iterator<Map.Entry<Long, Judged>> it = judged.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<Long, Judged> e = it.next();
      Judged j = e.getValue();
      long io = batchIo.getOrDefault(e.getKey(), 0L);
      long waited = runQueue.applyAsLong(e.getKey());
      long queued = waited < 0 ? -1 : waited - (j.twoAgo >= 0 ? j.twoAgo : j.oneAgo);
      if (queued < 0) { // ended (no reading), or another thread under a reused id: not judged
        if (io > 0) {
          found(now);
        }
        if (waited < 0) {
          it.remove();
        } else {
          j.twoAgo = -1;
          j.oneAgo = waited;
          j.prevIo = 0;
        }
        continue;
      }
      if (io > 0 && io + j.prevIo > queued) { // more I/O than waiting for a CPU: I/O waits
        found(now);
      }
      j.twoAgo = j.oneAgo;
      j.oneAgo = waited;
      j.prevIo = io;
    }
    batchIo.clear();
  }

  /** The events found something at {@code now}: they stay on for another quiet time. */
  private void found(long now) {
    lastEvent = now;
    found = true;
  }

  /** Called regularly (at each batch JFR delivers): turns the events on or off when it is time. */
  void tick(long now) {
    if (quietNanos <= 0) {
      return;
    }
    judge(now);
    if (on) {
      if (now - lastEvent >= quietNanos) {
        if (threadsInIo.getAsBoolean()) { // long waits in progress: off, they would be lost
          found(now);
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
