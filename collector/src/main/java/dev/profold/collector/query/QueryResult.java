package dev.profold.collector.query;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The rows a query produced, ready to print. Immutable.
 *
 * <p>Each row maps column header to value in column order; a column without a value in a row is
 * absent from that row's map. Values follow {@link Values}: paths stay {@code List<String>}
 * (formats print them as {@code main/foo}).
 *
 * @param columns column headers in order (aliases from {@code AS} applied)
 * @param rows rows in output order
 * @param pathColumn the column holding nested paths (the axis of the tree format), or null
 */
public record QueryResult(List<String> columns, List<Map<String, Object>> rows, String pathColumn) {

  /** Copies the lists and rows. */
  public QueryResult {
    columns = List.copyOf(columns);
    List<Map<String, Object>> copy = new ArrayList<>(rows.size());
    for (Map<String, Object> r : rows) {
      copy.add(Collections.unmodifiableMap(new LinkedHashMap<>(r)));
    }
    rows = Collections.unmodifiableList(copy);
  }
}
