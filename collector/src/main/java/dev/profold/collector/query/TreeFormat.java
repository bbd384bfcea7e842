package dev.profold.collector.query;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code tree} format: rows arranged by their nested path ({@link QueryResult#pathColumn()}),
 * each level indented by two spaces and labelled with its last path element; children follow their
 * parent in the order rows first reach them (so ORDER BY orders siblings). Path prefixes without a
 * row of their own get a label line with empty cells; rows without a path come first. Without a
 * path column it prints as {@code table}.
 */
final class TreeFormat {
  private TreeFormat() {}

  private static final class Node {
    final String label;
    final List<Map<String, Object>> rows = new ArrayList<>();
    final Map<String, Node> children = new LinkedHashMap<>();

    Node(String label) {
      this.label = label;
    }
  }

  static void write(QueryResult result, PrintWriter out) {
    String pathColumn = result.pathColumn();
    if (pathColumn == null) {
      TableFormat.write(result, out);
      return;
    }
    Node root = new Node("");
    for (Map<String, Object> row : result.rows()) {
      Node n = root;
      if (row.get(pathColumn) instanceof List<?> path) {
        for (Object e : path) {
          n = n.children.computeIfAbsent(String.valueOf(e), Node::new);
        }
      }
      n.rows.add(row);
    }
    List<String> others = new ArrayList<>();
    for (String c : result.columns()) {
      if (!c.equals(pathColumn)) {
        others.add(c);
      }
    }
    List<String> headers = new ArrayList<>();
    headers.add(pathColumn);
    headers.addAll(others);
    TextTable t = new TextTable(headers);
    t.leftAlign(0);
    for (Map<String, Object> row : root.rows) {
      t.add(cells("", row, others));
    }
    for (Node child : root.children.values()) {
      print(child, 0, others, t);
    }
    t.print(out);
  }

  private static void print(Node n, int depth, List<String> others, TextTable t) {
    String label = "  ".repeat(depth) + n.label;
    if (n.rows.isEmpty()) {
      t.add(cells(label, Map.of(), others));
    }
    for (Map<String, Object> row : n.rows) {
      t.add(cells(label, row, others));
    }
    for (Node child : n.children.values()) {
      print(child, depth + 1, others, t);
    }
  }

  private static List<Object> cells(String label, Map<String, Object> row, List<String> others) {
    List<Object> cells = new ArrayList<>();
    cells.add(label);
    for (String c : others) {
      cells.add(row.get(c));
    }
    return cells;
  }
}
