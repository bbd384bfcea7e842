package dev.profold.client.internal.record;

import dev.profold.reduce.LongIntMap;

/**
 * One cache of context and event ids kept outside the {@link ContextTable}: a thread's own caches
 * and open regions ({@link ThreadState}), or the agent's JFR sink. The table ages out contexts
 * nobody used for a while and reuses their ids, so it must know which ids a cache may still hand to
 * a table: every id the table gave this holder is <em>pinned</em> (never aged out) until the holder
 * <em>releases</em> it.
 *
 * <p>The protocol: when the table wants ids back it {@linkplain #request() asks}; the holder, at a
 * moment of its choosing between two of its own writes, empties its caches and calls {@link
 * Recorder#release} (a thread: with the contexts of its open regions and scopes, which stay
 * pinned). A holder that never answers (an idle thread) keeps its pins: only what it was given, so
 * ageing still frees everything else. Ids released are aged out only after the next collection took
 * what the holder wrote before releasing them.
 *
 * <p>The pin sets are guarded by the table's lock; {@link #requested()} may be read by any thread.
 */
public final class IdHolder {
  private final Runnable signal;
  private volatile boolean requested;

  // Guarded by the ContextTable's lock.
  LongIntMap contexts = new LongIntMap(); // pinned context ids (values unused)
  LongIntMap events = new LongIntMap(); // pinned event ids
  LongIntMap releasedContexts; // released, aged out only after collection releasedIn
  LongIntMap releasedEvents;
  long releasedIn;
  boolean forgotten; // gone for good once its released ids are dropped

  /** A holder that {@code signal} (may be a no-op) tells when the table asks for its ids. */
  IdHolder(Runnable signal) {
    this.signal = signal;
  }

  /** True when the table asked for ids back and this holder has not released since. */
  public boolean requested() {
    return requested;
  }

  /** The table asks for ids back (any thread). */
  void request() {
    requested = true;
    signal.run();
  }

  /** Cleared by the holder's own thread just before it releases. */
  void clearRequest() {
    requested = false;
  }
}
