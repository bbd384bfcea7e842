package dev.profold.client.internal.activity;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Thread ends reported by the ending threads themselves, without allocating: a bounded ring of
 * preallocated slots, any number of writers, one reader at a time.
 *
 * <p>Why not a queue: a thread that allocates anything takes a thread-local allocation buffer from
 * the heap, and a thread that ends gives back the whole buffer, used or not. A program that starts
 * and ends thousands of threads a second made the garbage collector run several times a second when
 * each end report allocated (3 GB of young generation filled in 0.2 s, at 6,000 thread ends a
 * second), and none at all without the report.
 *
 * <p>A writer claims the next slot by a compare-and-set on {@link #claimed} while the ring has
 * room, fills it and publishes it with a release store of its sequence number plus one; the reader
 * takes published slots in order and stops at the first one not yet published. A full ring refuses
 * the report ({@link #offer} returns false): the caller reports it some other way.
 */
final class EndRing {
  private static final VarHandle PUBLISHED = MethodHandles.arrayElementVarHandle(long[].class);

  /** What the reader does with each end taken. */
  interface Reader {
    void end(long threadId, String name, long cpuNanos, long atEpochNanos, boolean carrier);
  }

  private final int mask;
  private final long[] published; // sequence + 1 once the slot's fields are written
  private final long[] ids;
  private final long[] cpu;
  private final long[] at;
  private final String[] names;
  private final boolean[] carriers;
  private final AtomicLong claimed = new AtomicLong();
  private volatile long taken; // written by the reader only

  /** A ring of {@code capacity} slots, a power of two. */
  EndRing(int capacity) {
    if (Integer.bitCount(capacity) != 1) {
      throw new IllegalArgumentException("capacity must be a power of two, was " + capacity);
    }
    mask = capacity - 1;
    published = new long[capacity];
    ids = new long[capacity];
    cpu = new long[capacity];
    at = new long[capacity];
    names = new String[capacity];
    carriers = new boolean[capacity];
  }

  /** Reports an end; false when the ring is full. Any thread; allocates nothing. */
  boolean offer(long threadId, String name, long cpuNanos, long atEpochNanos, boolean carrier) {
    long seq = claim();
    if (seq < 0) {
      return false;
    }
    publish(seq, threadId, name, cpuNanos, atEpochNanos, carrier);
    return true;
  }

  /** Claims the next slot: its sequence number, or -1 when the ring is full. */
  long claim() {
    long seq;
    do {
      seq = claimed.get();
      if (seq - taken > mask) {
        return -1;
      }
    } while (!claimed.compareAndSet(seq, seq + 1));
    return seq;
  }

  /** Fills the slot claimed as {@code seq} and publishes it: the reader may take it from now on. */
  void publish(
      long seq, long threadId, String name, long cpuNanos, long atEpochNanos, boolean carrier) {
    int slot = (int) (seq & mask);
    ids[slot] = threadId;
    names[slot] = name;
    cpu[slot] = cpuNanos;
    at[slot] = atEpochNanos;
    carriers[slot] = carrier;
    PUBLISHED.setRelease(published, slot, seq + 1);
  }

  /**
   * Hands every end published so far, in order, to {@code reader}, up to the first slot claimed but
   * not yet published. One reader at a time (the caller's lock).
   */
  void drain(Reader reader) {
    long seq = taken;
    while (true) {
      int slot = (int) (seq & mask);
      if ((long) PUBLISHED.getAcquire(published, slot) != seq + 1) {
        break;
      }
      String name = names[slot];
      names[slot] = null;
      reader.end(ids[slot], name, cpu[slot], at[slot], carriers[slot]);
      seq++;
    }
    taken = seq;
  }

  /**
   * {@link #drain}, and also the ends whose slots were claimed before this call but are still being
   * written: waits for them (at most {@code maxWaitNanos}), since {@link #drain} stops at the first
   * of them, and an end published behind it (a thread that reported its end, then ended) would
   * otherwise wait for the next drain. Returns false when one was still not published at the
   * deadline (its writer descheduled that long): those stay for the next drain. One reader at a
   * time.
   */
  boolean drainClaimed(Reader reader, long maxWaitNanos) {
    long until = claimed.get();
    long deadline = System.nanoTime() + maxWaitNanos;
    for (int spins = 0; ; spins++) {
      drain(reader);
      if (taken - until >= 0) {
        return true;
      }
      if (System.nanoTime() - deadline >= 0) {
        return false;
      }
      if (spins < 100) {
        Thread.onSpinWait();
      } else {
        java.util.concurrent.locks.LockSupport.parkNanos(50_000);
      }
    }
  }

  /** Ends published or being written, not yet taken (an estimate while writers run). */
  long waiting() {
    return claimed.get() - taken;
  }
}
