package dev.profold.sinks.snapshot;

/**
 * Where sinks get the collector's aggregates from. Implementations return a consistent, immutable
 * view and never make the caller wait on ingest for long; callers may be on any thread.
 */
@FunctionalInterface
public interface SnapshotSource {
  /** The current snapshot. */
  CollectorSnapshot snapshot();
}
