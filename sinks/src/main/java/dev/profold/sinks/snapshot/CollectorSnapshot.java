package dev.profold.sinks.snapshot;

import java.util.List;

/**
 * Everything the collector exposes at one moment.
 *
 * @param schemes one snapshot per active aggregation scheme
 * @param sources live sources
 */
public record CollectorSnapshot(List<SchemeSnapshot> schemes, List<SourceSnapshot> sources) {
  public CollectorSnapshot {
    schemes = List.copyOf(schemes);
    sources = List.copyOf(sources);
  }

  /** Nothing yet. */
  public static CollectorSnapshot empty() {
    return new CollectorSnapshot(List.of(), List.of());
  }
}
