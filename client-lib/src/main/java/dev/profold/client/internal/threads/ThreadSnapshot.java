package dev.profold.client.internal.threads;

import java.util.List;

/**
 * What one thread recorded in one interval, handed to a {@link ThreadAggregator} by the flush.
 *
 * @param threadId {@link Thread#getId()}
 * @param name the thread's name
 * @param group the normalised pool name ({@code http-exec-17} becomes {@code http-exec-*})
 * @param initial true for the process's initial (main) thread
 * @param cells the thread's non-empty cells, at most one per (context, metric)
 */
public record ThreadSnapshot(
    long threadId, String name, String group, boolean initial, List<Cell> cells) {
  public ThreadSnapshot {
    cells = List.copyOf(cells);
  }
}
