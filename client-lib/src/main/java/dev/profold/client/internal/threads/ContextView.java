package dev.profold.client.internal.threads;

import dev.profold.client.Kind;

/** What a thread aggregator may ask about an interned context. Thread-safe. */
public interface ContextView {
  /** The innermost region's kind, or null when the context is outside any region. */
  Kind kind(int context);

  /** The encoder's path node id of the context's region path, 0 when outside any region. */
  int pathNode(int context);

  /**
   * The context {@code context} was reached from (by entering a region or setting an attribute), -1
   * for the root or when not known. A context's ancestors stay known while it is in use.
   */
  int parent(int context);

  /**
   * Whether time recorded in {@code context} is its own only, not that of the paths nested in it
   * too: the agent's samples and events, at their innermost frame. Time recorded by a region as it
   * closes includes its nested regions' (false).
   */
  boolean selfTimed(int context);

  /**
   * Adds the context's key values (its region path node and its scoped attributes, with the
   * encoder's ids) to an entry under construction.
   */
  void addKey(int context, dev.profold.proto.v1.Entry.Builder entry);

  /**
   * Whether a value of measurement {@code metric} in a thread's table means that the thread ran in
   * the value's context: not so for the durations of asynchronous regions, which whichever thread
   * ended them records. CALLTREE compares the contexts threads ran in.
   */
  default boolean visits(int metric) {
    return true;
  }
}
