package dev.profold.collector.query;

/** An input record file that is not valid JSON Lines; the message names the file and line. */
public final class RecordFormatException extends Exception {
  private static final long serialVersionUID = 1L;

  RecordFormatException(String source, long line, String message) {
    super(source + ":" + line + ": " + message);
  }
}
