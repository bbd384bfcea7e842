package dev.profold.client;

/**
 * A region that may end on another thread than the one that opened it: a request an event loop
 * starts and a callback or another pool completes. Returned by {@link Profold#asyncRegion}.
 *
 * <p>Unlike a {@link Region} it is not on its thread's stack: regions and scopes the opening thread
 * enters after it do not nest under it, and it nests under nothing opened later. It records into
 * the context in force where it was opened (the opening thread's region path, with its name
 * appended, and its scoped attributes), once, when it ends. It is not {@link AutoCloseable} on
 * purpose: a try-with-resources block would end it where it was opened, not where the work
 * completes.
 */
public interface AsyncRegion {
  /**
   * Ends the region and records the time since it was opened (the measurement {@code
   * async_duration}, seconds), in the thread aggregation of the calling thread. Any thread may end
   * it, once: a second end is counted as misuse and records nothing; an end after Profold was shut
   * down records nothing. Never throws.
   */
  void end();
}
