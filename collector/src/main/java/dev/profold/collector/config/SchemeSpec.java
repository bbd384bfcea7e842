package dev.profold.collector.config;

import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.collector.scheme.SchemeException;
import java.time.Duration;

/**
 * A scheme as written in the config file; settings left out follow the collector's ({@code
 * interval}, {@code cardinality_limit}) when the scheme is built.
 *
 * @param name scheme name
 * @param query CalQL query; null for the built-in scheme's (allowed for {@code region} only)
 * @param interval interval, or null for the collector's
 * @param cardinalityLimit group limit, or null for the collector's {@code cardinality_limit}
 * @param retention closed intervals kept
 */
public record SchemeSpec(
    String name, String query, Duration interval, Integer cardinalityLimit, int retention) {

  /** The built-in scheme, following the collector's interval and limit. */
  public static SchemeSpec builtIn() {
    return new SchemeSpec(
        SchemeDefinition.BUILT_IN, null, null, null, SchemeDefinition.DEFAULT_RETENTION);
  }

  /** Builds the scheme with the collector's {@code interval} and {@code cardinalityLimit}. */
  public SchemeDefinition compile(Duration collectorInterval, int collectorLimit)
      throws SchemeException {
    return SchemeDefinition.compile(
        name,
        query == null ? SchemeDefinition.BUILT_IN_QUERY : query,
        interval == null ? collectorInterval : interval,
        cardinalityLimit == null ? collectorLimit : cardinalityLimit,
        retention);
  }
}
