package dev.profold.collector.fold;

import dev.profold.collector.ingest.SourceInfo;
import dev.profold.collector.ingest.SourceKey;
import dev.profold.sinks.snapshot.ClientExport;

/**
 * What the fold keeps per service instance: the current incarnation, the sequence tracking, and
 * client-reported overhead and thread activity. Schemes keep their own per-instance state keyed by
 * it (identity).
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
  long clientContexts;
  long clientContextsLimit;
  long clientDictionaryBytes;
  long clientDictionaryBytesLimit;
  ClientExport clientExport = ClientExport.NONE;

  /** The client's misuse and limit counts by kind, cumulative (at most 16 kinds). */
  final java.util.Map<String, Long> clientMisuse = new java.util.TreeMap<>();

  final ThreadTime threads = new ThreadTime();

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
    clientContexts = 0;
    clientContextsLimit = 0;
    clientDictionaryBytes = 0;
    clientDictionaryBytesLimit = 0;
    clientExport = ClientExport.NONE;
    clientMisuse.clear();
    threads.reset();
  }
}
