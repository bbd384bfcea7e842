package dev.profold.collector.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.proto.v1.AckResult;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.ExportResponse;
import dev.profold.proto.v1.IngestGrpc;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ValueType;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.WireStates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The built jar with a config file of two schemes: both show in /metrics under their own names
 * (promtool-clean), and a SIGHUP after editing the file adds a third scheme while the unchanged
 * ones keep their data.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SchemesJarIT {
  private static final String CONFIG =
      """
      interval: 60s
      schemes:
        - name: region
        - name: io_by_service
          query: SELECT sum(time), quantile(time, 0.99) WHERE kind=io GROUP BY service, tenant
          retention: 10
      """;

  private JarDaemon d;
  private Path config;

  @BeforeAll
  void startDaemon() throws Exception {
    config = Files.createTempFile("profold-config", ".yaml");
    Files.writeString(config, CONFIG);
    d = JarDaemon.start("--config", config.toString());
  }

  @AfterAll
  void stopDaemon() {
    if (d != null) {
      d.kill();
    }
  }

  private String scrape() throws Exception {
    return d.scrape();
  }

  /** Exports one delta of service e2e: an IO region and a compute region, tenant acme. */
  private void push(String instance, long sequence) {
    Instant now = Instant.now();
    long end = now.getEpochSecond() * 1_000_000_000L + now.getNano();
    DeltaEncoder enc =
        new DeltaEncoder(
            SourceIdentity.newBuilder()
                .setService("e2e")
                .setInstance(instance)
                .setIncarnationId(7)
                .setProcessStartUnixNanos(end - 5_000_000_000L)
                .build());
    int region = enc.dimension("region", ValueType.VALUE_TYPE_PATH);
    int tenant = enc.dimension("tenant", ValueType.VALUE_TYPE_STRING);
    int time = enc.measurement("time", ValueType.VALUE_TYPE_DOUBLE, "seconds");
    int main = enc.pathNode(0, region, "main", RegionKind.REGION_KIND_COMPUTE);
    int io = enc.pathNode(main, region, "read", RegionKind.REGION_KIND_IO);
    int acme = enc.string("acme");
    Delta.Builder delta =
        Delta.newBuilder()
            .setSequence(sequence)
            .setIntervalStartUnixNanos(end - 1_000_000_000L)
            .setIntervalEndUnixNanos(end);
    for (int node : new int[] {main, io}) {
      Aggregate a = new Aggregate();
      a.record(node == io ? 0.5 : 2.0);
      delta.addEntries(
          Entry.newBuilder()
              .addKey(AttributeValue.newBuilder().setAttributeId(region).setPathNodeId(node))
              .addKey(AttributeValue.newBuilder().setAttributeId(tenant).setStringId(acme))
              .addMeasurements(
                  Measurement.newBuilder().setAttributeId(time).setState(WireStates.toProto(a))));
    }
    ExportResponse r =
        IngestGrpc.newBlockingStub(d.channel)
            .withDeadlineAfter(10, TimeUnit.SECONDS)
            .export(enc.prepare(delta).build());
    assertThat(r.getResult()).isEqualTo(AckResult.ACK_RESULT_APPLIED);
  }

  @Test
  @Order(1)
  void everySchemeHasItsOwnMetricFamiliesAndPassesPromtool() throws Exception {
    push("a", 1);
    push("b", 1);
    String metrics = scrape();
    assertThat(metrics)
        .contains(
            "profold_region_time_seconds_count{instance=\"a\",kind=\"io\",path=\"main/read\","
                + "service=\"e2e\"} 1\n")
        // One group for both instances, IO only.
        .contains("profold_io_by_service_time_seconds_count{service=\"e2e\",tenant=\"acme\"} 2\n")
        .contains("profold_io_by_service_time_seconds_sum{service=\"e2e\",tenant=\"acme\"} 1.0\n")
        .doesNotContain(
            "profold_io_by_service_time_seconds_count{service=\"e2e\",tenant=\"acme\"} 4");
    Path promtool = ExternalTools.find("promtool", "prometheus");
    Path file = Files.createTempFile("profold-metrics", ".txt");
    Files.writeString(file, metrics);
    ExternalTools.Result r =
        ExternalTools.run(
            List.of(promtool.toString(), "check", "metrics"), file, Duration.ofSeconds(30));
    assertThat(r.exitCode()).as("promtool check metrics output:%n%s", r.output()).isZero();
  }

  @Test
  @Order(2)
  void sighupAppliesTheEditedSchemesAndKeepsTheUnchangedOnes() throws Exception {
    Files.writeString(
        config,
        CONFIG
            + """
              - name: by_path
                query: SELECT max(time) GROUP BY path
            """);
    Process kill = new ProcessBuilder("kill", "-HUP", Long.toString(d.process.pid())).start();
    assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(kill.exitValue()).isZero();
    String metrics = awaitMetric("profold_config_reloads_total{result=\"ok\"}");
    assertThat(metrics)
        // Unchanged: state kept.
        .contains("profold_io_by_service_time_seconds_count{service=\"e2e\",tenant=\"acme\"} 2\n");
    push("a", 2);
    metrics = scrape();
    assertThat(metrics)
        .contains("profold_io_by_service_time_seconds_count{service=\"e2e\",tenant=\"acme\"} 3\n")
        .contains("profold_by_path_time_seconds_count{path=\"main/read\"} 1\n")
        .contains("profold_by_path_time_seconds_count{path=\"main\"} 1\n");
    assertThat(d.stderrText()).contains("reloaded: schemes kept [region, io_by_service]");
  }

  /** Scrapes until {@code needle} shows (the reload runs on the daemon's own thread). */
  private String awaitMetric(String needle) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (true) {
      String metrics = scrape();
      if (metrics.contains(needle) || System.nanoTime() > deadline) {
        assertThat(metrics).as("stderr: %s", d.stderrText()).contains(needle);
        return metrics;
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
    }
  }

  /**
   * Started with SIGHUP ignored ({@code nohup}), the JVM never runs a SIGHUP handler: the daemon
   * says so, and does not claim to reload on SIGHUP (it still watches the file).
   */
  @Test
  @Order(10)
  void startedUnderNohupItDoesNotPromiseReloadsOnSighup() throws Exception {
    JarDaemon n = JarDaemon.startUnder(List.of("nohup"), "--config", config.toString());
    try {
      assertThat(n.nextStdoutLine())
          .as("the config line")
          .contains("reloaded on file change")
          .doesNotContain("SIGHUP");
      assertThat(n.stderrText()).contains("SIGHUP is ignored by this process");
    } finally {
      n.kill();
    }
  }
}
