package dev.profold.client.internal.jfr;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Ids of threads whose {@code jdk.ThreadEnd} was delivered recently, so that an event of such a
 * thread delivered after its end is recognised: each id is kept for {@code lifetime} intervals
 * after its end, and at most {@code max} ids are kept (the oldest go first). Java thread ids are
 * never reused, so a remembered id names no other thread. Not thread-safe: the JFR consumer thread
 * uses it.
 */
final class RecentEnds {
  private final int max;
  private final long lifetime;
  private final LinkedHashMap<Long, Long> ends =
      new LinkedHashMap<>(); // id -> interval, oldest first

  /**
   * Keeps at most {@code max} ids (at least 1), each for {@code lifetime} intervals (at least 1).
   */
  RecentEnds(int max, long lifetime) {
    if (max < 1 || lifetime < 1) {
      throw new IllegalArgumentException("max and lifetime must be 1 or more");
    }
    this.max = max;
    this.lifetime = lifetime;
  }

  /** Thread {@code threadId} ended in interval {@code interval}. */
  void add(long threadId, long interval) {
    ends.put(threadId, interval);
    if (ends.size() > max) {
      Iterator<Long> oldest = ends.keySet().iterator();
      oldest.next();
      oldest.remove();
    }
  }

  /** True when thread {@code threadId} ended and is still remembered. */
  boolean contains(long threadId) {
    return ends.containsKey(threadId);
  }

  /** Forgets the ends {@code lifetime} or more intervals before {@code interval}. */
  void expire(long interval) {
    Iterator<Map.Entry<Long, Long>> it = ends.entrySet().iterator();
    while (it.hasNext() && interval - it.next().getValue() >= lifetime) {
      it.remove();
    }
  }

  /** Forgets every end. */
  void clear() {
    ends.clear();
  }

  /** Ids remembered. */
  int size() {
    return ends.size();
  }
}
