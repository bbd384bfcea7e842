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

  /**
   * Makes this region's context current on the calling thread until the returned scope closes: what
   * the thread records meanwhile (regions, scopes, measurements) records under this region's path
   * and attributes, as if nested in it. For the callback that completes the work:
   *
   * <pre>{@code
   * try (Scope s = call.enter()) {
   *   try (Region r = Profold.region("decode", Kind.COMPUTE)) { ... }   // .../backend.call/decode
   * }
   * call.end();
   * }</pre>
   *
   * Use with try-with-resources on one thread, like {@link Profold#with}. The regions inside record
   * the calling thread's time as any region does; the asynchronous region's own duration is still
   * recorded only by {@link #end()}. Entering a region that ended already is counted as misuse
   * ({@code bad_argument}) and changes nothing; so does entering on a thread that holds 512 open
   * regions and scopes already ({@code too_deep}). Never throws.
   */
  Scope enter();
}
