package dev.profold.client.internal.threads;

import dev.profold.reduce.Aggregate;
import java.util.Map;

/**
 * One entry a thread aggregator produces, before wire encoding.
 *
 * @param context the context (region path and scoped attributes) of the entry's key
 * @param labels further string dimensions of the key, in order: {@code thread.group} always; {@code
 *     thread} (NONE), {@code thread.role} (KEY: initial, slowest, fastest, rest) or {@code
 *     thread.cluster} (CALLTREE) by mode
 * @param metric measurement attribute id
 * @param perThread false: {@code state} holds the values themselves (merged over the threads the
 *     entry stands for); true (SET only): {@code state} holds one value per thread that visited the
 *     context, that thread's total for the metric, so its count is the number of threads and its
 *     min / max / sum of squares describe the spread across threads
 * @param state the aggregate
 */
public record AggregatedEntry(
    int context, Map<String, String> labels, int metric, boolean perThread, Aggregate state) {
  public AggregatedEntry {
    labels = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(labels));
  }
}
