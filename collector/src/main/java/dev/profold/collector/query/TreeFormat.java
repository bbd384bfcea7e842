package dev.profold.collector.query;

import java.io.PrintWriter;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
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
    // Depth first, children in order, with a stack of its own: a path may be thousands of levels
    // deep, more than the thread's stack would take in recursion.
    Deque<Map.Entry<Node, Integer>> stack = new ArrayDeque<>();
    pushChildren(root, 0, stack);
    while (!stack.isEmpty()) {
      Map.Entry<Node, Integer> e = stack.pop();
      Node n = e.getKey();
      int depth = e.getValue();
      String label = "  ".repeat(depth) + n.label;
      if (n.rows.isEmpty()) {
        t.add(cells(label, Map.of(), others));
      }
      for (Map<String, Object> row : n.rows) {
        t.add(cells(label, row, others));
      }
      pushChildren(n, depth + 1, stack);
    }
    t.print(out);
  }

  /** Pushes {@code n}'s children at {@code depth} so that the first is popped first. */
  private static void pushChildren(Node n, int depth, Deque<Map.Entry<Node, Integer>> stack) {
    List<Node> children = new ArrayList<>(n.children.values());
    for (int i = children.size() - 1; i >= 0; i--) {
      stack.push(Map.entry(children.get(i), depth));
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
