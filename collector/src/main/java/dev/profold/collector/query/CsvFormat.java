package dev.profold.collector.query;

import java.io.PrintWriter;
import java.util.List;
import java.util.Map;

/**
 * The {@code csv} format: a header line, then one line per row; fields holding a comma, quote or
 * line break are quoted with inner quotes doubled (RFC 4180); empty cells are empty fields.
 */
final class CsvFormat {
  private CsvFormat() {}

  static void write(QueryResult result, PrintWriter out) {
    StringBuilder sb = new StringBuilder();
    List<String> columns = result.columns();
    for (int i = 0; i < columns.size(); i++) {
      field(sb, i, columns.get(i));
    }
    line(sb, out);
    for (Map<String, Object> row : result.rows()) {
      for (int i = 0; i < columns.size(); i++) {
        field(sb, i, Values.text(row.get(columns.get(i))));
      }
      line(sb, out);
    }
  }

  private static void field(StringBuilder sb, int index, String text) {
    if (index > 0) {
      sb.append(',');
    }
    if (text.indexOf(',') >= 0
        || text.indexOf('"') >= 0
        || text.indexOf('\n') >= 0
        || text.indexOf('\r') >= 0) {
      sb.append('"').append(text.replace("\"", "\"\"")).append('"');
    } else {
      sb.append(text);
    }
  }

  private static void line(StringBuilder sb, PrintWriter out) {
    out.print(sb);
    out.print("\r\n");
    sb.setLength(0);
  }
}
