package dev.profold.collector.query;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** How a {@link QueryResult} is printed. */
public enum OutputFormat {
  /** Aligned text columns (the default). */
  TABLE,
  /** A JSON array of row objects. */
  JSON,
  /** Comma-separated values with a header line (RFC 4180 quoting). */
  CSV,
  /** Rows arranged by their nested path, one indentation step per level. */
  TREE;

  /** Prints {@code result} in this format. */
  public void write(QueryResult result, PrintWriter out) throws IOException {
    switch (this) {
      case TABLE -> TableFormat.write(result, out);
      case JSON -> JsonRecords.writeResult(result, out);
      case CSV -> CsvFormat.write(result, out);
      case TREE -> TreeFormat.write(result, out);
    }
    out.flush();
  }

  /** The format named {@code name} (case-insensitive), or null. */
  public static OutputFormat named(String name) {
    for (OutputFormat f : values()) {
      if (f.name().equalsIgnoreCase(name)) {
        return f;
      }
    }
    return null;
  }

  /** The names, lower case, for messages: "table, json, csv, tree". */
  public static String names() {
    return Arrays.stream(values()).map(OutputFormat::toString).collect(Collectors.joining(", "));
  }

  @Override
  public String toString() {
    return name().toLowerCase(Locale.ROOT);
  }
}
