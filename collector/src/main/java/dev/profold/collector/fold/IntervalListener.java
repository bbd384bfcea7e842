package dev.profold.collector.fold;

import dev.profold.sinks.snapshot.IntervalSnapshot;
import java.util.List;

/**
 * Told about every closed interval that had data, on the fold thread, in closing order. Must return
 * quickly and never block (hand the work to another thread).
 */
@FunctionalInterface
public interface IntervalListener {
  /**
   * Interval {@code interval} of scheme {@code scheme} closed.
   *
   * @param labelNames the scheme's label names, in the order of the series' label values
   * @param pathLabels the labels whose values are nested paths
   */
  void closed(
      String scheme, List<String> labelNames, List<String> pathLabels, IntervalSnapshot interval);
}
