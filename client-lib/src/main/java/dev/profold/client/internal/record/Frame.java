package dev.profold.client.internal.record;

import dev.profold.client.Region;
import dev.profold.client.Scope;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The handle of an open region or scope at one depth of a thread's stack, and that stack entry
 * itself (the context to return to, the start time). One instance per depth is reused, so opening
 * regions allocates nothing; as a consequence, closing a handle twice is detected only while no
 * other region or scope was opened at the same depth in between.
 *
 * <p>The mutable fields are written and read by the owning thread only, except {@code closedAt} and
 * {@code closedElsewhere}: another thread closing the handle writes the time, then the flag
 * (volatile), and the owner reads them in that order (see {@code ThreadState#close}).
 */
final class Frame implements Region, Scope {
  private static final VarHandle CLOSED_ELSEWHERE;

  static {
    try {
      CLOSED_ELSEWHERE =
          MethodHandles.lookup().findVarHandle(Frame.class, "closedElsewhere", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  final ThreadState state;
  final int depth;
  int parent; // the context to return to
  long start; // System.nanoTime() at entry, for a region
  boolean region;
  long closedAt; // System.nanoTime() of a close on another thread
  volatile boolean closedElsewhere;

  /**
   * Flags this frame as closed by another thread at {@code nanoTime}; true for the one call that
   * set the flag (a second close elsewhere before the owner saw the first does nothing).
   */
  boolean flagClosedElsewhere(long nanoTime) {
    if (closedElsewhere) {
      return false;
    }
    closedAt = nanoTime; // before the flag, which publishes it
    return CLOSED_ELSEWHERE.compareAndSet(this, false, true);
  }

  Frame(ThreadState state, int depth) {
    this.state = state;
    this.depth = depth;
  }

  @Override
  public void close() {
    if (state != null) { // null: a handle of something not opened (see ThreadState#MAX_DEPTH)
      state.close(this);
    }
  }
}
