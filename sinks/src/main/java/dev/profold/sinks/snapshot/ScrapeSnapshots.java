package dev.profold.sinks.snapshot;

/**
 * A {@link SnapshotSource} that gives every reader within one scrape the same snapshot: the
 * exposition's collectors each read the snapshot, and without this each would read its own, so that
 * a scrape could mix two intervals (and two collectors could claim one metric name, one before and
 * one after a measurement's first delta, failing the scrape).
 *
 * <p>{@link #scrape} takes one snapshot from the underlying source and keeps it for the calling
 * thread until the returned scope closes; {@link #snapshot} on that thread returns it, and on any
 * other thread (or outside a scrape) reads the underlying source. Thread-safe; scrapes on different
 * threads each have their own snapshot.
 */
public final class ScrapeSnapshots implements SnapshotSource {
  private final SnapshotSource source;

  // Per instance, not static: each source has its own scrapes (a collector's, a test's).
  @SuppressWarnings("ThreadLocalUsage")
  private final ThreadLocal<CollectorSnapshot> current = new ThreadLocal<>();

  public ScrapeSnapshots(SnapshotSource source) {
    this.source = source;
  }

  /** What a scrape holds open; closing it ends the scrape. */
  public interface Scope extends AutoCloseable {
    @Override
    void close();
  }

  /** Starts a scrape on the calling thread: until the scope closes, one snapshot for all. */
  public Scope scrape() {
    CollectorSnapshot outer = current.get();
    if (outer != null) {
      return () -> {}; // nested: the outer scrape's snapshot stays
    }
    current.set(source.snapshot());
    return current::remove;
  }

  @Override
  public CollectorSnapshot snapshot() {
    CollectorSnapshot s = current.get();
    return s != null ? s : source.snapshot();
  }
}
