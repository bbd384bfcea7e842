package dev.profold.client.internal.record;

import dev.profold.client.Region;
import dev.profold.client.Scope;

/**
 * The handle of an open region or scope at one depth of a thread's stack. One instance per depth is
 * reused, so opening regions allocates nothing; as a consequence, closing a handle twice is
 * detected only while no other region or scope was opened at the same depth in between.
 */
final class Frame implements Region, Scope {
  private final ThreadState state;
  private final int depth;

  Frame(ThreadState state, int depth) {
    this.state = state;
    this.depth = depth;
  }

  @Override
  public void close() {
    state.close(depth);
  }
}
