package dev.profold.collector.fold;

import dev.profold.collector.ingest.SourceInfo;
import dev.profold.collector.ingest.SourceKey;
import dev.profold.reduce.LongIntMap;

/**
 * What the fold keeps per service instance: the current incarnation, the sequence tracking,
 * client-reported overhead and the instance's groups in the built-in scheme.
 *
 * <p>Not thread-safe: owned by the fold thread.
 */
final class Instance {
  final SourceKey key;
  SourceInfo info;
  long lastSequence;
  long missingDeltas;
  long lastSeenNanos;
  long clientCpuNanos;
  long clientEventsDropped;
  long clientBytesHeld;

  /** (path id << 32 | measurement attribute id) to group id in the built-in scheme. */
  final LongIntMap groups = new LongIntMap();

  Instance(SourceKey key, SourceInfo info) {
    this.key = key;
    this.info = info;
  }

  /** Starts a new incarnation: sequence and client totals begin again. */
  void restart(SourceInfo newer) {
    info = newer;
    lastSequence = 0;
    missingDeltas = 0;
    clientCpuNanos = 0;
    clientEventsDropped = 0;
    clientBytesHeld = 0;
  }
}
