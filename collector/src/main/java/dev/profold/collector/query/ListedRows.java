package dev.profold.collector.query;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * The rows a listing query (no operator, no GROUP BY) holds while it reads, in arrival order. With
 * a LIMIT {@code n} it holds no more than it can show: the first {@code n} rows without ORDER BY,
 * the {@code n} first in the ORDER BY's order (ties to the earlier row, as a stable sort of all of
 * them would) with it, so that its memory does not grow with its input. Not thread-safe.
 */
final class ListedRows {
  /** A row and its place in the arrival order. */
  private record Kept(Map<String, Object> row, long seq) {}

  private final int limit; // -1: every row
  private final Comparator<Map<String, Object>> order; // null: the first rows are kept
  private final List<Kept> all = new ArrayList<>(); // without an order
  private final PriorityQueue<Kept> best; // with one: the worst kept row at the head
  private long next;

  /**
   * @param limit the rows shown at most, or -1 for every row
   * @param order the ORDER BY's order when rows beyond {@code limit} are to be chosen by it, or
   *     null to keep the first {@code limit} rows
   */
  ListedRows(int limit, Comparator<Map<String, Object>> order) {
    this.limit = limit;
    this.order = limit < 0 ? null : order;
    this.best =
        this.order == null
            ? null
            : new PriorityQueue<>(
                Comparator.<Kept, Map<String, Object>>comparing(Kept::row, this.order)
                    .thenComparingLong(Kept::seq)
                    .reversed());
  }

  /** Whether a row would be kept if it came now (false once the first {@code limit} are in). */
  boolean wantsMore() {
    return order != null || limit < 0 || all.size() < limit;
  }

  /** Offers the next row in arrival order. */
  void add(Map<String, Object> row) {
    Kept k = new Kept(row, next++);
    if (order == null) {
      if (wantsMore()) {
        all.add(k);
      }
      return;
    }
    if (best.size() < limit) {
      best.add(k);
    } else if (limit > 0 && order.compare(row, best.peek().row()) < 0) {
      best.poll(); // a later row equal to the worst kept one loses to it, as in a stable sort
      best.add(k);
    }
  }

  int size() {
    return order == null ? all.size() : best.size();
  }

  /** The rows held, in arrival order. */
  List<Map<String, Object>> rows() {
    List<Kept> kept = new ArrayList<>(order == null ? all : best);
    if (order != null) {
      kept.sort(Comparator.comparingLong(Kept::seq));
    }
    List<Map<String, Object>> out = new ArrayList<>(kept.size());
    for (Kept k : kept) {
      out.add(k.row());
    }
    return out;
  }
}
