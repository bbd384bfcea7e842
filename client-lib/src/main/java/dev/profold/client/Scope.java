package dev.profold.client;

/**
 * A scoped attribute, returned by {@link Profold#with}; until it is closed, everything the thread
 * records carries the attribute. Closing never throws; misuse is counted and logged once.
 */
public interface Scope extends AutoCloseable {
  @Override
  void close();
}
