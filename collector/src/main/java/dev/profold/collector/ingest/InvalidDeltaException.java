package dev.profold.collector.ingest;

/**
 * A delta that can never be applied as sent. The message names the offending field by its path in
 * the Delta message (for example {@code entries[3].measurements[0].state.count}), says what is
 * wrong and how to fix it. Maps to gRPC INVALID_ARGUMENT.
 */
public final class InvalidDeltaException extends Exception {
  private static final long serialVersionUID = 1L;
  private final String field;

  public InvalidDeltaException(String field, String problem) {
    super(field + ": " + problem);
    this.field = field;
  }

  /** Path of the offending field within the Delta message. */
  public String field() {
    return field;
  }
}
