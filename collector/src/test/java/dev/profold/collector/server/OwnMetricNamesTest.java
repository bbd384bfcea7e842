package dev.profold.collector.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.collector.config.CollectorConfig;
import dev.profold.collector.config.ConfigLoader;
import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.collector.scheme.SchemeException;
import dev.profold.collector.telemetry.OwnMeter;
import dev.profold.collector.testing.MutableClock;
import java.io.StringReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The collector's own meters against a real /metrics scrape: every one of them is an {@link
 * OwnMeter} with the names it claims, and no scheme name that would put a scheme's metrics among
 * them ({@code profold_<scheme>_...}) is accepted.
 */
class OwnMetricNamesTest {
  @TempDir Path dir;

  @Test
  void noSchemeCanTakeTheNameOfAMetricOfTheCollector() throws Exception {
    CollectorConfig c =
        ConfigLoader.parse(
            new StringReader(
                "grpc_port: 0\nhttp_port: 0\narchive:\n  directory: "
                    + dir.resolve("archive")
                    + "\n"),
            "collector.yaml");
    CollectorServer server =
        new CollectorServer(c, MutableClock.at(Instant.parse("2026-01-01T00:00:01Z")));
    server.start();
    String text;
    Set<String> meters;
    try {
      // the meters that only appear once something happened
      server.metrics().configReload(true);
      server.metrics().configReload(false);
      server.metrics().threadGroupsEvicted(1);
      server.metrics().seriesLeftOut();
      meters =
          server.meters().getMeters().stream()
              .map(m -> m.getId().getName())
              .filter(n -> n.startsWith("profold."))
              .collect(Collectors.toCollection(TreeSet::new));
      HttpResponse<String> r =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(
                          URI.create("http://127.0.0.1:" + server.httpPort() + "/metrics"))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(200);
      text = r.body();
    } finally {
      server.stop();
    }
    Set<String> samples =
        text.lines()
            .filter(l -> l.startsWith("profold_"))
            .map(l -> l.split("[{ ]", 2)[0])
            .collect(Collectors.toCollection(TreeSet::new));

    // Every meter of the collector is known, with the names it has in the scrape.
    List<String> known = Arrays.stream(OwnMeter.values()).map(OwnMeter::meterName).toList();
    assertThat(known).containsAll(meters);
    for (OwnMeter m : OwnMeter.values()) {
      if (meters.contains(m.meterName())) {
        assertThat(samples).as(m.meterName()).containsAll(m.sampleNames());
      }
    }
    assertThat(meters)
        .as("every meter is there (the archive's dropped counter at 0 since the archive is on)")
        .hasSize(OwnMeter.values().length);

    // No name in the scrape, but the built-in scheme's own, can be reached by a scheme: every
    // scheme name its profold_<scheme>_ prefix could be is refused.
    for (String sample : samples) {
      if (sample.startsWith("profold_" + SchemeDefinition.BUILT_IN + "_")) {
        continue;
      }
      String rest = sample.substring("profold_".length());
      for (int i = rest.indexOf('_'); i > 0; i = rest.indexOf('_', i + 1)) {
        String scheme = rest.substring(0, i);
        assertThatThrownBy(
                () ->
                    SchemeDefinition.compile(
                        scheme, "SELECT sum(time) GROUP BY service", Duration.ofSeconds(10), 10, 1))
            .as("scheme %s next to %s", scheme, sample)
            .isInstanceOf(SchemeException.class)
            .hasMessageContaining("the name is taken by the collector's own metrics");
      }
    }
    assertThat(samples)
        .contains(
            "profold_archive_intervals_written_total",
            "profold_thread_groups_evicted_total",
            "profold_fold_latency_seconds_max");
  }
}
