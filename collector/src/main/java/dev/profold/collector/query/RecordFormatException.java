package dev.profold.collector.query;

/** An input record file that is not valid JSON Lines; the message names the file and line. */
public final class RecordFormatException extends Exception {
  private static final long serialVersionUID = 1L;

  private final boolean incompleteEnd;

  RecordFormatException(String source, long line, String message) {
    this(source, line, message, false);
  }

  private RecordFormatException(String source, long line, String message, boolean incompleteEnd) {
    super(source + ":" + line + ": " + message);
    this.incompleteEnd = incompleteEnd;
  }

  /**
   * The input ended inside its last record: a file being written (an archive's current day), or cut
   * short. Every record before it was read.
   */
  static RecordFormatException incompleteEnd(String source, long line) {
    return new RecordFormatException(
        source,
        line,
        "the last record is incomplete (the file is being written, or was cut short); the"
            + " records before it were read",
        true);
  }

  /** Whether the input ended inside its last record, every record before it read. */
  public boolean incompleteEnd() {
    return incompleteEnd;
  }
}
