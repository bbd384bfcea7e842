package dev.profold.client.internal.activity;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The channel by which threads report their own starts and ends to {@link ThreadActivity}, held
 * until its next close takes them ({@link #drain}).
 *
 * <p>Reports never take the activity's lock: a thread starting another must not wait for the
 * started thread's end report, nor for the JFR feed (a lock taken there cost each start of a thread
 * that ended at once some 20 µs, outside the time the start was measured in). Starts and the ends
 * that find the ring full go to a queue; ends go to a preallocated {@link EndRing} first, since an
 * ending thread must not allocate (see there); the timed starts' own time is summed per starting
 * thread in a map, one entry per starter, so no bound drops it.
 *
 * <p>At most {@link #MAX_WAITING} starts wait in the queue, and as many ends, each bound on its
 * own; further ones are refused, and the first refusal is logged ({@link #capReached}, which the
 * activity also calls when its own tables of them are full).
 *
 * <p>Thread-safe: reports from any thread; {@link #moveClaimedEnds} and {@link #drain} from the
 * closing thread, the latter under the activity's lock.
 */
final class StartsAndEnds {
  /**
   * Starts, and ends, waiting at most (each); also the bound of the activity's tables of them
   * between two closes.
   */
  static final int MAX_WAITING = 65_536;

  /** Slots of the ring of ends. */
  static final int END_RING = 4096;

  /**
   * How long a close waits for ends whose slots in the ring were claimed but not yet published: an
   * end published behind one of them belongs to a thread that may be gone already. 50 ms; tests
   * that must not depend on a thread being scheduled within it set a longer one.
   */
  volatile long endWriteWaitNanos = 50_000_000L;

  private static final System.Logger LOG = System.getLogger("dev.profold.client");

  /** A thread's end: its name, its CPU time then, when, and whether it carried virtual threads. */
  record Ended(String name, long cpuNanos, long atNanos, boolean carrier) {}

  /** Where {@link #drain} puts what waited. */
  interface Target {
    /** Thread {@code threadId} was started at {@code atEpochNanos}. */
    void started(long threadId, long atEpochNanos);

    /** Thread {@code threadId} ended. */
    void ended(long threadId, Ended ended);

    /**
     * Thread {@code starterId}'s {@code starts} timed starts took this CPU time, and this time off
     * CPU.
     */
    void startTimes(long starterId, long cpuNanos, long offCpuNanos, long starts);
  }

  private sealed interface Report permits Started, EndReport {}

  private record Started(long threadId, long atEpochNanos) implements Report {}

  private record EndReport(long threadId, Ended ended) implements Report {}

  private final ConcurrentLinkedQueue<Report> inbox = new ConcurrentLinkedQueue<>();

  /** Starts and ends in {@link #inbox}; package-private for tests that fill the bounds. */
  final AtomicInteger startsWaiting = new AtomicInteger();

  final AtomicInteger endsWaiting = new AtomicInteger();

  /** {starter id -> {cpu, off cpu, starts}} of the timed starts since the last drain. */
  private final ConcurrentHashMap<Long, long[]> startTimes = new ConcurrentHashMap<>();

  /**
   * Ends reported without allocating. Moved to {@link #inbox} at each close, and once half full by
   * the next thread that reports a start or feeds an event ({@link #moveEndsIfMany}: threads that
   * may allocate, since they live on); one reader at a time ({@link #ringReader}), which no one
   * waits for but the close. A full ring's ends go to the inbox directly, allocating.
   */
  final EndRing ring = new EndRing(END_RING);

  private final ReentrantLock ringReader = new ReentrantLock();
  private final EndRing.Reader toInbox =
      (id, name, cpu, at, carrier) -> post(new EndReport(id, new Ended(name, cpu, at, carrier)));
  private final AtomicBoolean loggedCap = new AtomicBoolean();

  /** Thread {@code threadId} was started at {@code atEpochNanos}. */
  void started(long threadId, long atEpochNanos) {
    post(new Started(threadId, atEpochNanos));
    moveEndsIfMany();
  }

  /**
   * A timed {@code Thread.start} on {@code starterId} started {@code startedId} at {@code
   * atEpochNanos}, taking {@code cpuNanos} of CPU and {@code offCpuNanos} off CPU.
   */
  void timedStart(
      long startedId, long atEpochNanos, long starterId, long cpuNanos, long offCpuNanos) {
    post(new Started(startedId, atEpochNanos));
    startTimes.merge(starterId, new long[] {cpuNanos, offCpuNanos, 1}, StartsAndEnds::add);
    moveEndsIfMany();
  }

  /** Adds {@code b} into {@code a}; under the map's lock of the entry, which removes it too. */
  private static long[] add(long[] a, long[] b) {
    a[0] += b[0];
    a[1] += b[1];
    a[2] += b[2];
    return a;
  }

  /** A thread's end, reported on the ending thread: allocates nothing unless the ring is full. */
  void ended(long threadId, String name, long cpuNanos, long atEpochNanos, boolean carrier) {
    if (!ring.offer(threadId, name, cpuNanos, atEpochNanos, carrier)) {
      post(new EndReport(threadId, new Ended(name, cpuNanos, atEpochNanos, carrier)));
    }
  }

  private void post(Report r) {
    AtomicInteger waiting = waitingOf(r);
    if (waiting.incrementAndGet() > MAX_WAITING) {
      waiting.decrementAndGet();
      capReached();
      return;
    }
    inbox.add(r);
  }

  private AtomicInteger waitingOf(Report r) {
    return r instanceof Started ? startsWaiting : endsWaiting;
  }

  /**
   * Moves the ring's ends to the inbox when it is half full, unless another thread does so now. For
   * threads that report a start or feed an event, not for an ending thread: it allocates.
   */
  void moveEndsIfMany() {
    // Not again on a thread that drains already (a report made from inside a drain: its log of
    // the bound, should logging start a thread): a second drain would take the same ends again.
    if (ring.waiting() > END_RING / 2
        && !ringReader.isHeldByCurrentThread()
        && ringReader.tryLock()) {
      try {
        ring.drain(toInbox);
      } finally {
        ringReader.unlock();
      }
    }
  }

  /**
   * Moves every end claimed in the ring so far to the inbox, waiting a little for those still being
   * written. Called by the close before it takes the activity's lock, so that the JFR feed does not
   * wait with it.
   */
  void moveClaimedEnds() {
    ringReader.lock();
    try {
      ring.drainClaimed(toInbox, endWriteWaitNanos);
    } finally {
      ringReader.unlock();
    }
  }

  /** Hands every waiting start, end and timed start's time to {@code target}, in order. */
  void drain(Target target) {
    for (Report r; (r = inbox.poll()) != null; ) {
      waitingOf(r).decrementAndGet();
      if (r instanceof Started st) {
        target.started(st.threadId(), st.atEpochNanos());
      } else if (r instanceof EndReport e) {
        target.ended(e.threadId(), e.ended());
      }
    }
    for (Long starter : startTimes.keySet()) {
      long[] t = startTimes.remove(starter);
      if (t != null) {
        target.startTimes(starter, t[0], t[1], t[2]);
      }
    }
  }

  /** Logs, once, that a bound of starts or ends was reached. */
  void capReached() {
    if (!loggedCap.getAndSet(true)) {
      LOG.log(
          System.Logger.Level.INFO,
          "Profold: more than {0} threads started or ended within one interval; the further ones"
              + " count as threads whose start or end was not seen (a shorter interval keeps them"
              + " under the bound; logged once)",
          MAX_WAITING);
    }
  }
}
