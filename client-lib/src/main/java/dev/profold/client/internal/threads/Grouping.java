package dev.profold.client.internal.threads;

import dev.profold.reduce.Aggregate;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;

/** Helpers the aggregators share: grouping threads, merging cells into fresh aggregates. */
final class Grouping {
  private Grouping() {}

  /** Threads by group name (sorted), each group's threads sorted by thread id. */
  static SortedMap<String, List<ThreadSnapshot>> byGroup(List<ThreadSnapshot> threads) {
    SortedMap<String, List<ThreadSnapshot>> groups = new TreeMap<>();
    for (ThreadSnapshot t : threads) {
      groups.computeIfAbsent(t.group(), g -> new ArrayList<>()).add(t);
    }
    for (List<ThreadSnapshot> members : groups.values()) {
      members.sort(Comparator.comparingLong(ThreadSnapshot::threadId));
    }
    return groups;
  }

  /** Labels {@code thread.group -> group}. */
  static Map<String, String> labels(String group) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(ThreadAggregators.GROUP, group);
    return labels;
  }

  /** Labels {@code thread.group -> group, name -> value}. */
  static Map<String, String> labels(String group, String name, String value) {
    Map<String, String> labels = labels(group);
    labels.put(name, value);
    return labels;
  }

  /** A (context, metric) pair packed so that numeric order is (context, metric) order. */
  static long key(int context, int metric) {
    return ((long) context << 32) | (metric & 0xFFFF_FFFFL);
  }

  static int context(long key) {
    return (int) (key >> 32);
  }

  static int metric(long key) {
    return (int) key;
  }

  /** The merge of the threads' cells per (context, metric), in fresh aggregates, sorted. */
  static SortedMap<Long, Aggregate> merge(List<ThreadSnapshot> threads) {
    SortedMap<Long, Aggregate> merged = new TreeMap<>();
    for (ThreadSnapshot t : threads) {
      for (Cell c : t.cells()) {
        merged.computeIfAbsent(key(c.context(), c.metric()), k -> new Aggregate()).merge(c.state());
      }
    }
    return merged;
  }

  /**
   * Appends one entry per (context, metric) the threads recorded, holding the merge of their cells,
   * in (context, metric) order.
   */
  static void emitMerged(
      List<ThreadSnapshot> threads, Map<String, String> labels, List<AggregatedEntry> out) {
    for (Map.Entry<Long, Aggregate> e : merge(threads).entrySet()) {
      long k = e.getKey();
      out.add(new AggregatedEntry(context(k), labels, metric(k), false, e.getValue()));
    }
  }
}
