package dev.profold.client.internal.export;

import dev.profold.proto.v1.ClientOverhead;
import dev.profold.proto.v1.Delta;
import java.util.Map;

/**
 * What dropping a (possibly merged) delta costs: the submitted deltas it stands for, the events it
 * takes with it, and the misuse and export counts it carried, which a later delta reports again.
 * Immutable.
 */
record Loss(long deltas, long events, Map<String, Long> misuse, long reconnects, long merges) {

  /** Dropping {@code d} as submitted (not numbered yet): one delta. */
  static Loss ofSubmitted(Delta d) {
    return of(d, 1);
  }

  /** Dropping buffered delta {@code d}: every submitted delta it covers (merged or split). */
  static Loss ofBuffered(Delta d) {
    return of(d, DeltaBuffer.covered(d));
  }

  private static Loss of(Delta d, long deltas) {
    ClientOverhead o = d.getOverhead();
    return new Loss(
        deltas, events(d), o.getMisuseMap(), o.getExportReconnects(), o.getExportDeltasMerged());
  }

  /**
   * The events a dropped delta takes with it: those recorded in it, and those it reported as
   * dropped (its overhead), which the collector would otherwise never hear of. Counted in {@link
   * ExporterStats#eventsLost()}, they are reported again in a later delta.
   */
  private static long events(Delta d) {
    return DeltaBuffer.events(d) + d.getOverhead().getEventsDropped();
  }
}
