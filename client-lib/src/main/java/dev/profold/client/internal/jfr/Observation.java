package dev.profold.client.internal.jfr;

import dev.profold.client.Kind;
import java.util.List;

/**
 * What one JFR event records: a value of the {@code time} measurement (seconds) or of the {@code
 * allocation} measurement (bytes), on behalf of one thread, at a call path whose innermost region
 * has {@code kind}, under the attribute {@code event}. Immutable.
 *
 * @param event the JFR event type name, the {@code event} attribute's value
 * @param threadId the thread recorded for ({@link Thread#getId()}), or {@link
 *     EventMapper#JVM_THREAD}
 * @param threadName its name (its group is the normalised name)
 * @param initialThread true for the JVM's initial thread
 * @param path region names, outermost first; never empty
 * @param kind the innermost region's kind (outer regions are COMPUTE)
 * @param bytes true for an allocation value in bytes, false for a time in seconds
 * @param value the value, finite and not negative
 */
public record Observation(
    String event,
    long threadId,
    String threadName,
    boolean initialThread,
    List<String> path,
    Kind kind,
    boolean bytes,
    double value) {
  public Observation {
    path = List.copyOf(path);
  }
}
