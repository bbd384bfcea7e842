package dev.profold.client;

/**
 * A region that may end on another thread than the one that opened it: a request an event loop
 * starts and a callback or another pool completes. Returned by {@link Profold#asyncRegion}.
 *
 * <p>Unlike a {@link Region} it is not on its thread's stack: regions and scopes the opening thread
 * enters after it do not nest under it, and it nests under nothing opened later. It records into
 * the context in force where it was opened (the opening thread's region path, with its name
 * appended, and its scoped attributes), once, when closed.
 */
public interface AsyncRegion extends Region {
  /**
   * Ends the region and records the time since it was opened, in the thread aggregation of the
   * calling thread. Any thread may close it, once: a second close is counted as misuse and records
   * nothing. Never throws, never blocks.
   */
  @Override
  void close();
}
