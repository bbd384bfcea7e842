package dev.profold.client;

/**
 * An open region, returned by {@link Profold#region}; closing it records the time since it was
 * opened. Use with try-with-resources on the thread that opened it. Closing never throws: misuse
 * (closing twice, closing on another thread, closing an outer region first) is counted and logged
 * once.
 */
public interface Region extends AutoCloseable {
  @Override
  void close();
}
