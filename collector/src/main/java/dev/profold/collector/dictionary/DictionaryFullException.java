package dev.profold.collector.dictionary;

/** The collector-wide dictionary reached its configured size limit. */
public final class DictionaryFullException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public DictionaryFullException(int limit) {
    super(
        "the collector's dictionary is full ("
            + limit
            + " strings, attributes and path nodes; raise limits.dictionary_entries)");
  }
}
