package dev.profold.collector.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.config.CollectorConfig;
import dev.profold.collector.config.ConfigLoader;
import dev.profold.collector.telemetry.RejectReason;
import dev.profold.collector.testing.MutableClock;
import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Counters that only move when something goes wrong are in the first scrape, at 0, so that {@code
 * rate()} and alerts on them work before the first event: every rejection reason, and the overflow
 * and saturation counters of every scheme, including one added by a reload.
 */
class ZeroCountersTest {
  private static final String CONFIG =
      """
      grpc_port: 0
      http_port: 0
      schemes:
        - name: region
        - name: by_service
          query: SELECT sum(time) GROUP BY service
      """;

  /** The {@code reason} values in the row of {@code profold_deltas_rejected_total}. */
  private static List<String> documentedReasons() throws IOException {
    String row =
        Files.readAllLines(Path.of("..", "docs", "metrics.md")).stream()
            .filter(l -> l.startsWith("| `profold_deltas_rejected_total` |"))
            .findFirst()
            .orElseThrow();
    String labels = row.split("\\|")[3];
    Matcher m = Pattern.compile("`([a-z_]+)`").matcher(labels);
    List<String> out = new ArrayList<>();
    while (m.find()) {
      if (!m.group(1).equals("reason")) {
        out.add(m.group(1));
      }
    }
    return out;
  }

  @Test
  void withTheArchiveOnBothReasonsForADroppedIntervalAreAtZero(@TempDir Path dir) throws Exception {
    CollectorConfig c =
        ConfigLoader.parse(
            new StringReader(CONFIG + "archive:\n  directory: " + dir.resolve("archive") + "\n"),
            "collector.yaml");
    CollectorServer server =
        new CollectorServer(c, MutableClock.at(Instant.parse("2026-01-01T00:00:01Z")));
    server.start();
    try {
      assertThat(server.meters().scrape())
          .contains("profold_archive_intervals_dropped_total{reason=\"queue_full\"} 0.0\n")
          .contains("profold_archive_intervals_dropped_total{reason=\"write_failed\"} 0.0\n");
    } finally {
      server.stop();
    }
  }

  @Test
  void aFreshCollectorScrapesEveryRejectionReasonAndEverySchemesOverflowAtZero() throws Exception {
    CollectorConfig c = ConfigLoader.parse(new StringReader(CONFIG), "collector.yaml");
    CollectorServer server =
        new CollectorServer(c, MutableClock.at(Instant.parse("2026-01-01T00:00:01Z")));
    server.start();
    try {
      String text = server.meters().scrape();
      for (RejectReason r : RejectReason.values()) {
        assertThat(text)
            .contains("profold_deltas_rejected_total{reason=\"" + r.label() + "\"} 0.0\n");
      }
      assertThat(RejectReason.values())
          .extracting(RejectReason::label)
          .as("the reasons docs/metrics.md lists")
          .containsExactlyInAnyOrderElementsOf(documentedReasons());
      assertThat(text)
          .contains("profold_config_reloads_total{result=\"ok\"} 0.0\n")
          .contains("profold_config_reloads_total{result=\"error\"} 0.0\n")
          .contains("profold_exposition_series_left_out_total 0.0\n");
      for (String scheme : List.of("region", "by_service")) {
        assertThat(text)
            .contains("profold_scheme_overflow_measurements_total{scheme=\"" + scheme + "\"} 0.0\n")
            .contains("profold_scheme_counts_saturated_total{scheme=\"" + scheme + "\"} 0.0\n");
      }

      CollectorConfig next =
          ConfigLoader.parse(
              new StringReader(
                  CONFIG
                      + "  - name: by_instance\n"
                      + "    query: SELECT sum(time) GROUP BY service, instance\n"),
              "collector.yaml");
      server.reconfigure(next.schemeDefinitions(), next.alerts().rules());
      assertThat(server.meters().scrape())
          .contains("profold_scheme_overflow_measurements_total{scheme=\"by_instance\"} 0.0\n")
          .contains("profold_scheme_counts_saturated_total{scheme=\"by_instance\"} 0.0\n");

      // A reload that removes a scheme takes its counters out with its series.
      CollectorConfig fewer =
          ConfigLoader.parse(new StringReader("grpc_port: 0\nhttp_port: 0\n"), "collector.yaml");
      server.reconfigure(fewer.schemeDefinitions(), fewer.alerts().rules());
      assertThat(server.meters().scrape())
          .contains("profold_scheme_overflow_measurements_total{scheme=\"region\"} 0.0\n")
          .doesNotContain("scheme=\"by_service\"")
          .doesNotContain("scheme=\"by_instance\"");
    } finally {
      server.stop();
    }
  }
}
