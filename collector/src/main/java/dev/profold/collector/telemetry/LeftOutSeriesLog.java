package dev.profold.collector.telemetry;

import dev.profold.sinks.prometheus.SeriesLeftOut;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts the series a scrape leaves out ({@code profold_exposition_series_left_out_total}, one per
 * series and scrape) and logs each distinct series once: a series that stays bad would otherwise
 * log at every scrape. It remembers at most {@value #REMEMBERED} series; beyond them it logs that
 * further ones are only counted, once. Thread-safe.
 */
public final class LeftOutSeriesLog implements SeriesLeftOut {
  private static final Logger log = LoggerFactory.getLogger(LeftOutSeriesLog.class);
  static final int REMEMBERED = 64;

  private final CollectorMetrics metrics;
  private final Set<List<String>> logged = ConcurrentHashMap.newKeySet();

  public LeftOutSeriesLog(CollectorMetrics metrics) {
    this.metrics = metrics;
  }

  @Override
  public void leftOut(String family, List<String> labelValues, RuntimeException cause) {
    metrics.seriesLeftOut();
    List<String> key = List.of(family, String.join("\u0000", labelValues));
    if (logged.size() >= REMEMBERED) {
      return;
    }
    if (logged.add(key)) {
      if (logged.size() == REMEMBERED) {
        log.error(
            "left series {} {} out of /metrics: {} (a collector bug, please report it); further"
                + " series left out are only counted in"
                + " profold_exposition_series_left_out_total",
            family,
            labelValues,
            cause.toString());
      } else {
        log.error(
            "left series {} {} out of /metrics: {} (a collector bug, please report it); it is"
                + " logged once, counted in profold_exposition_series_left_out_total at every"
                + " scrape",
            family,
            labelValues,
            cause.toString());
      }
    }
  }
}
