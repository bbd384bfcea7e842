package dev.profold.client.internal.record;

import dev.profold.client.Region;
import dev.profold.client.Scope;

/**
 * The handle of an open region or scope at one depth of a thread's stack, and that stack entry
 * itself (the context to return to, the start time). One instance per depth is reused, so opening
 * regions allocates nothing; as a consequence, closing a handle twice is detected only while no
 * other region or scope was opened at the same depth in between.
 *
 * <p>The mutable fields are written and read by the owning thread only.
 */
final class Frame implements Region, Scope {
  final ThreadState state;
  final int depth;
  int parent; // the context to return to
  long start; // System.nanoTime() at entry, for a region
  boolean region;

  Frame(ThreadState state, int depth) {
    this.state = state;
    this.depth = depth;
  }

  @Override
  public void close() {
    state.close(this);
  }
}
