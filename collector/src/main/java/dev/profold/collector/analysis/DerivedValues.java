package dev.profold.collector.analysis;

import java.util.List;

/**
 * Where derived values come from. {@link #current()} returns the values of the last closed
 * interval; it is called after each interval close (by the alert evaluator) and at scrape time,
 * from any thread.
 *
 * <p>Implementations must be thread-safe and return an immutable list.
 */
@FunctionalInterface
public interface DerivedValues {
  /** The values of the last closed interval (empty before the first). */
  List<DerivedValue> current();
}
