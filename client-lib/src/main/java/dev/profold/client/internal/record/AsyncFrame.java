package dev.profold.client.internal.record;

import dev.profold.client.AsyncRegion;
import dev.profold.client.Scope;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * An open asynchronous region: the context it records into (pinned by {@link AsyncPins} until it
 * closes), the measurement ({@link Recorder#ASYNC_DURATION}) and its start time. Made for each
 * region (it may outlive its thread's stack, so it cannot be a reused {@link Frame}); closed once,
 * by any thread ({@link Recorder#closeAsync}).
 */
final class AsyncFrame implements AsyncRegion {
  private static final VarHandle CLOSED;

  static {
    try {
      CLOSED = MethodHandles.lookup().findVarHandle(AsyncFrame.class, "closed", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  final Recorder recorder;
  final int context;
  final int metric; // the asynchronous regions' duration
  final long start; // System.nanoTime() at open

  @SuppressWarnings("unused") // accessed through CLOSED
  private volatile boolean closed;

  AsyncFrame(Recorder recorder, int context, int metric, long start) {
    this.recorder = recorder;
    this.context = context;
    this.metric = metric;
    this.start = start;
  }

  /** True for the first call only: the end that records. */
  boolean markClosed() {
    return CLOSED.compareAndSet(this, false, true);
  }

  /** True once ended. */
  boolean ended() {
    return closed;
  }

  @Override
  public Scope enter() {
    return recorder.enterAsync(this);
  }

  @Override
  public void end() {
    recorder.closeAsync(this);
  }
}
