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
   * @param labelNames the scheme's GROUP BY attributes as its query names them ({@code
   *     thread.group}, not the Prometheus label {@code thread_group}), in the order of the series'
   *     label values, so that records named by them answer the scheme's own query
   * @param pathLabels those of them whose values are nested paths
   */
  void closed(
      String scheme, List<String> labelNames, List<String> pathLabels, IntervalSnapshot interval);
}
