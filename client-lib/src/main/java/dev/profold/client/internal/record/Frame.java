package dev.profold.client.internal.record;

import dev.profold.client.Region;
import dev.profold.client.Scope;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The handle of an open region or scope at one depth of a thread's stack, and that stack entry
 * itself (the context to return to, the start time). One instance per depth is reused, so opening
 * regions allocates nothing; as a consequence, closing a handle twice is detected only while no
 * other region or scope was opened at the same depth in between. A pooled state (a virtual
 * thread's) makes its frames afresh for each loan (one small allocation per depth a loan uses), so
 * a handle of an earlier loan is always told apart, whoever closes it.
 *
 * <p>The mutable fields are written and read by the owning thread only, except {@code
 * closedElsewhereAt}: threads closing the handle elsewhere raise it to their close time, and the
 * owner takes it (see {@code ThreadState#close}).
 */
final class Frame implements Region, Scope {
  /** {@link #closedElsewhereAt} of a frame no other thread closed. */
  static final long NOT_CLOSED = Long.MIN_VALUE;

  private static final VarHandle CLOSED_AT;

  static {
    try {
      CLOSED_AT =
          MethodHandles.lookup().findVarHandle(Frame.class, "closedElsewhereAt", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  final ThreadState state;
  final int depth;

  /**
   * A frame of a pooled state ({@link ThreadStatePool}), made for loan {@link #loan} of it: kept
   * here, where a close already looks, so that platform threads' closes pay nothing for pooling.
   */
  final boolean pooled;

  /** The loan of its pooled state the frame was made for; 0 for other states. */
  final int loan;

  int parent; // the context to return to
  long start; // System.nanoTime() at entry, for a region
  boolean region;

  /** The latest System.nanoTime() of a close on another thread, or {@link #NOT_CLOSED}. */
  private volatile long closedElsewhereAt = NOT_CLOSED;

  /**
   * Records a close on another thread at {@code nanoTime}, keeping the latest of such closes (a
   * real close is later than a stale one meant for an earlier region at this depth).
   *
   * @return true for the call that flagged the frame first (the owner has one more to handle)
   */
  boolean flagClosedElsewhere(long nanoTime) {
    while (true) {
      long at = closedElsewhereAt;
      if (at != NOT_CLOSED && at - nanoTime >= 0) {
        return false;
      }
      if (CLOSED_AT.compareAndSet(this, at, nanoTime)) {
        return at == NOT_CLOSED;
      }
    }
  }

  /** True while a close on another thread waits for the owner. */
  boolean closedElsewhere() {
    return closedElsewhereAt != NOT_CLOSED;
  }

  /** The owner takes the close time (or {@link #NOT_CLOSED}) and clears it. */
  long takeClosedElsewhere() {
    return (long) CLOSED_AT.getAndSet(this, NOT_CLOSED);
  }

  Frame(ThreadState state, int depth, boolean pooled, int loan) {
    this.state = state;
    this.depth = depth;
    this.pooled = pooled;
    this.loan = loan;
  }

  @Override
  public void close() {
    if (state != null) { // null: a handle of something not opened (see ThreadState#MAX_DEPTH)
      if (pooled) {
        state.closePooled(this);
      } else {
        state.close(this);
      }
    }
  }
}
