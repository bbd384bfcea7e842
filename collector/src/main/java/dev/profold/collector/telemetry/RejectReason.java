package dev.profold.collector.telemetry;

import java.util.Locale;

/**
 * Why a delta was not applied: the {@code reason} label of {@code profold_deltas_rejected_total}
 * (docs/metrics.md). Every reason is registered at 0 when the collector starts, so that each series
 * exists before its first rejection; a reason is counted only through this type, so none can be
 * counted without being registered. Immutable.
 */
public enum RejectReason {
  /** The delta broke the protocol (docs/protocol.md) and was refused by the decoder. */
  INVALID,
  /** The delta came from an older incarnation of an instance that has since restarted. */
  SUPERSEDED_INCARNATION,
  /** The delta's sequence numbers overlap ones already applied, but it is not a retry. */
  OVERLAPPING_SEQUENCES,
  /** Received deltas waiting to be folded were over {@code limits.max_pending_bytes}. */
  OVERLOADED,
  /** The collector was shutting down. */
  SHUTTING_DOWN,
  /**
   * The collector-wide dictionary was at {@code limits.dictionary_entries} (or its share for
   * attributes), or the open streams mapped {@code limits.stream_ids} ids (retryable).
   */
  DICTIONARY_FULL,
  /** A new source while the collector tracked {@code limits.max_sources} already (retryable). */
  TOO_MANY_SOURCES,
  /** Folding failed: a collector bug. */
  INTERNAL_ERROR,
  /**
   * The fold thread had ended with an error (out of memory, say): the collector needs a restart.
   */
  FOLD_FAILED,
  /** gRPC refused the message as over {@code limits.max_message_bytes}. */
  TOO_LARGE;

  private final String label = name().toLowerCase(Locale.ROOT);

  /** The value of the {@code reason} label, such as {@code too_large}. */
  public String label() {
    return label;
  }
}
