package dev.profold.client.internal.threads;

import dev.profold.reduce.Aggregate;

/**
 * One thread's state for one (context, metric) pair over one interval.
 *
 * @param context interned context id (region path plus scoped attributes), see {@link ContextView}
 * @param metric measurement attribute id (the encoder's id)
 * @param state the values recorded; owned by the snapshot, never shared with the recording thread
 */
public record Cell(int context, int metric, Aggregate state) {
  /** The (context, metric) pair as one value, for maps: one cell per key in a thread's snapshot. */
  public long key() {
    return Grouping.key(context, metric);
  }
}
