package dev.profold.collector.ingest;

/**
 * A delta that can never be applied as sent. The message names the offending field by its path in
 * the Delta message (for example {@code entries[3].measurements[0].state.count}), says what is
 * wrong and how to fix it. Maps to gRPC INVALID_ARGUMENT.
 *
 * <p>The message has at most {@value #MAX_MESSAGE} characters: a problem quoting what the client
 * sent (an attribute name, a string) is cut in the middle. It goes back in a gRPC status or an ack,
 * and a client's metadata limit (8 KiB by default) or message limit would otherwise turn a name of
 * megabytes into a broken stream instead of this message.
 */
public final class InvalidDeltaException extends Exception {
  private static final long serialVersionUID = 1L;
  private final String field;

  /**
   * Most characters of a message (the field and the problem): percent-encoded in the status, a
   * character takes up to 9 bytes, and 512 of them stay within the 8 KiB of metadata.
   */
  static final int MAX_MESSAGE = 512;

  public InvalidDeltaException(String field, String problem) {
    super(bounded(field + ": " + problem));
    this.field = field;
  }

  /** {@code text}, or its start and end around a note of the characters left out. */
  static String bounded(String text) {
    if (text.length() <= MAX_MESSAGE) {
      return text;
    }
    int keep = MAX_MESSAGE - 64; // room for the note
    int head = keep * 3 / 4;
    int tail = text.length() - (keep - head);
    if (Character.isHighSurrogate(text.charAt(head - 1))) {
      head--; // not half a character
    }
    if (Character.isLowSurrogate(text.charAt(tail))) {
      tail++;
    }
    return text.substring(0, head)
        + " ... ("
        + (tail - head)
        + " characters left out) ... "
        + text.substring(tail);
  }

  /** Path of the offending field within the Delta message. */
  public String field() {
    return field;
  }
}
