package dev.profold.client.internal.record;

/**
 * A table recorded into on behalf of another thread, e.g. by the agent's JFR consumer for the
 * thread a JFR event happened on. It is flushed with the real threads: {@link Recorder#collect()}
 * reports it under the thread's id, name and group, merged with what the thread recorded itself, so
 * thread aggregation sees one thread.
 *
 * <p>Single writer: one thread records into a given {@code ForeignThread} (any thread, but always
 * the same one, or several with a happens-before order between them). The table swap is the same as
 * for a thread's own table, so a flush neither loses nor doubles a value. After {@link #retire()}
 * the writer must not record again; the next collect takes the last values and forgets the table.
 */
public final class ForeignThread {
  private final ThreadState state;

  ForeignThread(ThreadState state) {
    this.state = state;
  }

  /**
   * Adds {@code value} (finite) of measurement {@code metric} in context {@code context} (from
   * {@link Recorder#regionContext} / {@link Recorder#attributeContext}).
   */
  public void record(int context, int metric, double value) {
    state.record(context, metric, value);
  }

  /**
   * The thread's name as the writer sees it now: a thread renamed after its first record (OkHttp
   * names its dispatcher after the call it runs) is grouped by its name at the collection.
   */
  public void named(String name) {
    if (!name.equals(state.name) || state.renamed != null) {
      state.renamed = name;
    }
  }

  /** The thread's id ({@link Thread#getId()}) this table records for. */
  public long threadId() {
    return state.threadId;
  }

  /** No more values will be recorded here; called by the writer after its last write. */
  public void retire() {
    state.retire();
  }
}
