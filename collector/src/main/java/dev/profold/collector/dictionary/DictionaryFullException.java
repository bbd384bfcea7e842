package dev.profold.collector.dictionary;

/**
 * The collector-wide dictionary reached its configured size limit, one stream defined as many ids
 * as that limit, or the open streams map as many ids together as they may.
 */
public final class DictionaryFullException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public DictionaryFullException(int limit) {
    super(
        "the collector's dictionary is full ("
            + limit
            + " strings, attributes and path nodes; raise limits.dictionary_entries)");
  }

  private DictionaryFullException(String message) {
    super(message);
  }

  /**
   * The collector holds {@code limit} attributes, all it may ({@link
   * GlobalDictionary#maxAttributes}).
   */
  public static DictionaryFullException attributes(int limit) {
    return new DictionaryFullException(
        "the collector holds "
            + limit
            + " attributes (names of dimensions and measurements), all it may: a sixteenth of"
            + " limits.dictionary_entries. An attribute is freed when the last stream that"
            + " defined it ends. Names made of ids, users or endpoints belong in attribute"
            + " values, not names; raise limits.dictionary_entries if so many names are real");
  }

  /** The open streams map {@code limit} ids together, all they may. */
  public static DictionaryFullException streamIds(int limit) {
    return new DictionaryFullException(
        "the collector's open streams map "
            + limit
            + " ids of definitions together, all limits.stream_ids allows (each stream maps its"
            + " own ids, 24 to 96 bytes of heap each, even for content other streams defined);"
            + " raise limits.stream_ids, and the heap with it, for this many clients");
  }

  /** A stream defined {@code limit} ids, as many as the collector's whole dictionary holds. */
  public static DictionaryFullException stream(int limit) {
    return new DictionaryFullException(
        "this stream has defined "
            + limit
            + " ids of strings, attributes and path nodes, as many as the collector's whole"
            + " dictionary holds (limits.dictionary_entries): give each definition one id and"
            + " reuse it on the stream, or open a new stream");
  }
}
