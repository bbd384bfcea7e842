package dev.profold.collector.fold;

/**
 * What became of one delta.
 *
 * @param outcome applied, duplicate or rejected
 * @param reason why it was rejected (null otherwise)
 * @param message for a rejection: the field, what is wrong, how to fix it
 * @param overflowed entry measurements folded into an overflow group
 */
public record FoldResult(Outcome outcome, Reason reason, String message, long overflowed) {
  /** The three outcomes, as in the wire's AckResult. */
  public enum Outcome {
    APPLIED,
    DUPLICATE,
    REJECTED
  }

  /**
   * Why the fold refused a (well-formed) delta: permanently, but for {@link #TOO_MANY_SOURCES},
   * which a resend later can pass.
   */
  public enum Reason {
    /**
     * A new source while the collector tracks {@code limits.max_sources} already; it passes once a
     * silent source expired.
     */
    TOO_MANY_SOURCES,
    /** An older incarnation of an instance that has restarted since. */
    SUPERSEDED_INCARNATION,
    /** A merged delta covering sequences of which some were already applied. */
    OVERLAPPING_SEQUENCES
  }

  private static final FoldResult DUPLICATE = new FoldResult(Outcome.DUPLICATE, null, "", 0);
  private static final FoldResult APPLIED = new FoldResult(Outcome.APPLIED, null, "", 0);

  static FoldResult applied(long overflowed) {
    return overflowed == 0 ? APPLIED : new FoldResult(Outcome.APPLIED, null, "", overflowed);
  }

  static FoldResult duplicate() {
    return DUPLICATE;
  }

  static FoldResult rejected(Reason reason, String message) {
    return new FoldResult(Outcome.REJECTED, reason, message, 0);
  }
}
