package dev.profold.collector.query;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Lays out cells in aligned columns: two spaces apart, numeric columns right-aligned, others
 * left-aligned, no trailing blanks. Used by the table and tree formats.
 */
final class TextTable {
  private final List<String> headers;
  private final boolean[] numeric;
  private final List<String[]> lines = new ArrayList<>();

  TextTable(List<String> headers) {
    this.headers = List.copyOf(headers);
    this.numeric = new boolean[headers.size()];
    Arrays.fill(numeric, true);
  }

  /** Adds a line of cell values (null for an empty cell); non-numbers left-align their column. */
  void add(List<Object> cells) {
    String[] text = new String[headers.size()];
    for (int i = 0; i < text.length; i++) {
      Object v = i < cells.size() ? cells.get(i) : null;
      text[i] = Values.text(v);
      if (v != null && !(v instanceof Number)) {
        numeric[i] = false;
      }
    }
    lines.add(text);
  }

  /** Forces column {@code i} to left alignment (e.g. the tree's label column). */
  void leftAlign(int i) {
    numeric[i] = false;
  }

  void print(PrintWriter out) {
    int[] width = new int[headers.size()];
    for (int i = 0; i < width.length; i++) {
      width[i] = headers.get(i).length();
      for (String[] l : lines) {
        width[i] = Math.max(width[i], l[i].length());
      }
    }
    out.println(line(headers.toArray(new String[0]), width));
    for (String[] l : lines) {
      out.println(line(l, width));
    }
  }

  private String line(String[] cells, int[] width) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < cells.length; i++) {
      if (i > 0) {
        sb.append("  ");
      }
      String pad = " ".repeat(width[i] - cells[i].length());
      if (numeric[i]) {
        sb.append(pad).append(cells[i]);
      } else {
        sb.append(cells[i]).append(pad);
      }
    }
    int end = sb.length();
    while (end > 0 && sb.charAt(end - 1) == ' ') {
      end--;
    }
    sb.setLength(end);
    return sb.toString();
  }
}
