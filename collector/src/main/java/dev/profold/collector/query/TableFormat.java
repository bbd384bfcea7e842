package dev.profold.collector.query;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The {@code table} format: a header line and one aligned line per row. */
final class TableFormat {
  private TableFormat() {}

  static void write(QueryResult result, PrintWriter out) {
    TextTable t = new TextTable(result.columns());
    for (Map<String, Object> row : result.rows()) {
      List<Object> cells = new ArrayList<>();
      for (String c : result.columns()) {
        cells.add(row.get(c));
      }
      t.add(cells);
    }
    t.print(out);
  }
}
