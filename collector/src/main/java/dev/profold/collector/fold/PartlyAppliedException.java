package dev.profold.collector.fold;

import dev.profold.collector.ingest.SourceKey;

/**
 * Folding a delta failed after it had begun (a collector bug): some of its entries may be in the
 * aggregates, the others are not, and the delta's sequence counts as applied, so that a resend is
 * acknowledged as a duplicate instead of counting the folded part twice. The cause is the failure.
 */
public final class PartlyAppliedException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient SourceKey source;
  private final long sequence;

  PartlyAppliedException(SourceKey source, long sequence, RuntimeException cause) {
    super(
        "folding delta "
            + sequence
            + " of "
            + source
            + " failed part-way ("
            + cause
            + "); part of it may be applied and its sequence counts as applied",
        cause);
    this.source = source;
    this.sequence = sequence;
  }

  public SourceKey source() {
    return source;
  }

  public long sequence() {
    return sequence;
  }
}
