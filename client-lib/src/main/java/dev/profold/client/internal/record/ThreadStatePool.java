package dev.profold.client.internal.record;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * The idle {@link ThreadState}s of one group of pooled threads (virtual threads).
 *
 * <p>A platform thread keeps one state for its whole life. A virtual thread is often made for one
 * request, so a state of its own would cost every request a state's allocation and would keep the
 * state until the next collection after the thread ended: memory growing with the request rate.
 * Instead a pooled thread takes a state from its group's pool when it starts recording and gives it
 * back when its last open region or scope closes (or right after a measurement recorded outside
 * any), so the states of a group number at most the threads recording in it at once, whatever the
 * request rate. A state then stands for the threads that used it in an interval, one after another.
 *
 * <p>Thread-safe: any thread takes and gives back; {@link #retireIdle} runs on the collecting
 * thread. The deque's hand-over orders a state's writes by one thread before the next thread's.
 */
final class ThreadStatePool {
  /**
   * Collections in a row a state may spend in the pool without recording before it is retired, so
   * the pool shrinks back after a burst.
   */
  static final int IDLE_COLLECTIONS = 2;

  final String group;
  private final ConcurrentLinkedDeque<ThreadState> idle = new ConcurrentLinkedDeque<>();
  private int created; // states made for this pool, guarded by this

  ThreadStatePool(String group) {
    this.group = group;
  }

  /** An idle state, most recently used first (its caches are warm), or null if none. */
  ThreadState poll() {
    return idle.pollFirst();
  }

  /** {@code s}, detached from its thread, is idle again. */
  void giveBack(ThreadState s) {
    idle.offerFirst(s);
  }

  /** The name of the next state made for this pool ({@code virtual#3}); unique within the pool. */
  String nextName() {
    synchronized (this) {
      return group + "#" + ++created;
    }
  }

  /**
   * Retires the states that sat in the pool without recording for {@link #IDLE_COLLECTIONS}
   * collections; the collection drains and drops retired states. States taken while this runs are
   * not seen by it (they are in use).
   *
   * @return the states retired
   */
  List<ThreadState> retireIdle() {
    List<ThreadState> retired = new ArrayList<>();
    ArrayDeque<ThreadState> kept = new ArrayDeque<>();
    for (ThreadState s = idle.pollFirst(); s != null; s = idle.pollFirst()) {
      if (s.idleCollections >= IDLE_COLLECTIONS) {
        s.retire();
        retired.add(s);
      } else {
        kept.add(s);
      }
    }
    for (ThreadState s : kept) {
      idle.offerLast(s); // behind any given back meanwhile, which are warmer
    }
    return retired;
  }

  /** Idle states (for tests). */
  int idleCount() {
    return idle.size();
  }
}
