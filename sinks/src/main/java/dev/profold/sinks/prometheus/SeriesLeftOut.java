package dev.profold.sinks.prometheus;

import java.util.List;

/**
 * Told of each series a scrape leaves out because Prometheus's model refused it (a bug: the
 * exposition builds only what the model accepts), so that one series cannot fail the whole scrape.
 * Called on the scraping thread; implementations must be thread-safe and must not block.
 */
@FunctionalInterface
public interface SeriesLeftOut {
  /** Ignores them. */
  SeriesLeftOut IGNORE = (family, labelValues, cause) -> {};

  /**
   * One series was left out of the scrape.
   *
   * @param family the metric family's name
   * @param labelValues the series' label values, in the scheme's label order
   * @param cause what the model threw
   */
  void leftOut(String family, List<String> labelValues, RuntimeException cause);
}
