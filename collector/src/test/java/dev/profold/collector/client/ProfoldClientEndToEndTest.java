package dev.profold.collector.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.AsyncRegion;
import dev.profold.client.Kind;
import dev.profold.client.Measure;
import dev.profold.client.Profold;
import dev.profold.client.ProfoldConfig;
import dev.profold.client.Region;
import dev.profold.client.Scope;
import dev.profold.client.ThreadAggregation;
import dev.profold.collector.config.CollectorConfig;
import dev.profold.collector.server.CollectorServer;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The client library against a real collector over gRPC on Netty: regions, scopes and measurements
 * recorded on several threads arrive with exact counts in the collector's Prometheus exposition.
 */
class ProfoldClientEndToEndTest {
  private CollectorServer server;

  @AfterEach
  void stop() throws Exception {
    Profold.shutdown(Duration.ofSeconds(5));
    if (server != null) {
      server.stop();
    }
  }

  /** Starts a collector with its defaults, and the client library (e2e/client-1) against it. */
  private void start(ProfoldConfig.Builder client) throws Exception {
    server =
        new CollectorServer(
            CollectorConfig.defaults().withOverrides(null, 0, 0, null), InstantSource.system());
    server.start();
    assertThat(
            Profold.start(
                client
                    .endpoint("127.0.0.1:" + server.grpcPort())
                    .service("e2e")
                    .instance("client-1")
                    .interval(Duration.ofMinutes(1))
                    .threadAggregation(ThreadAggregation.SUM)
                    .build()))
        .isTrue();
  }

  @Test
  void recordedRegionsArriveExactly() throws Exception {
    start(ProfoldConfig.builder());
    Measure items = Profold.measure("items", "");
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < 3; t++) {
      Thread w =
          new Thread(
              () -> {
                for (int i = 0; i < 100; i++) {
                  try (Region r = Profold.region("handle", Kind.COMPUTE);
                      Scope s = Profold.with("tenant", i % 2 == 0 ? "a" : "b")) {
                    items.record(2.0);
                    try (Region db = Profold.region("db", Kind.IO)) {
                      Profold.record("rows", 1.0);
                    }
                  }
                }
              },
              "worker-" + t);
      workers.add(w);
      w.start();
    }
    for (Thread w : workers) {
      w.join();
    }
    Region twice = Profold.region("misused", Kind.COMPUTE);
    twice.close();
    twice.close(); // misuse: counted, and reported to the collector with the overhead
    assertThat(Profold.flush(Duration.ofSeconds(20))).as("flushed and acknowledged").isTrue();

    String metrics = server.meters().scrape();
    String handle = "{instance=\"client-1\",kind=\"compute\",path=\"handle\",service=\"e2e\"}";
    String db = "{instance=\"client-1\",kind=\"io\",path=\"handle/db\",service=\"e2e\"}";
    assertThat(metrics)
        .contains("profold_region_time_seconds_count" + handle + " 300\n")
        .contains("profold_region_time_seconds_count" + db + " 300\n")
        .contains("profold_region_items_count" + handle + " 300\n")
        .contains("profold_region_items_sum" + handle + " 600.0\n")
        .contains("profold_region_rows_count" + db + " 300\n")
        .contains(
            "profold_client_misuse_total{instance=\"client-1\",kind=\"closed_twice\","
                + "service=\"e2e\"} 1.0\n")
        // The root, handle, its two tenants, db under each, and misused; out of 16384.
        .contains("profold_client_contexts{instance=\"client-1\",service=\"e2e\"} 7.0\n")
        .contains("profold_client_contexts_limit{instance=\"client-1\",service=\"e2e\"} 16384.0\n")
        .contains(
            "profold_client_dictionary_bytes_limit{instance=\"client-1\",service=\"e2e\"}"
                + " 4194304.0\n");
    // One delta from the flush, or two when the client's own interval boundary (aligned to the
    // wall clock's minute) fell during the test: every one of them applied, none refused.
    double received = sample(metrics, "profold_deltas_received_total");
    assertThat(received).isBetween(1.0, 2.0);
    assertThat(sample(metrics, "profold_deltas_applied_total")).isEqualTo(received);
    java.util.regex.Matcher dictionary =
        java.util.regex.Pattern.compile(
                "(?m)^profold_client_dictionary_bytes\\{instance=\"client-1\",service=\"e2e\"\\}"
                    + " (\\S+)")
            .matcher(metrics);
    assertThat(dictionary.find()).as("client dictionary series").isTrue();
    assertThat(Double.parseDouble(dictionary.group(1))).isPositive().isLessThan(4096);
    // The library reports its own CPU time (flush and exporter threads) in every delta.
    java.util.regex.Matcher cpu =
        java.util.regex.Pattern.compile(
                "profold_client_cpu_seconds_total\\{instance=\"client-1\",service=\"e2e\"\\} (\\S+)")
            .matcher(metrics);
    assertThat(cpu.find()).as("client CPU series").isTrue();
    assertThat(Double.parseDouble(cpu.group(1))).isPositive();
  }

  @Test
  void asyncRegionsClosedOnAnotherPoolArriveAsLatenciesUnderTheirPath() throws Exception {
    start(ProfoldConfig.builder());
    java.util.concurrent.ExecutorService callbacks =
        java.util.concurrent.Executors.newFixedThreadPool(2);
    List<java.util.concurrent.Future<?>> done = new ArrayList<>();
    Thread loop =
        new Thread(
            () -> {
              for (int i = 0; i < 50; i++) {
                try (Region r = Profold.region("serve", Kind.COMPUTE)) {
                  AsyncRegion call = Profold.asyncRegion("backend.call", Kind.WAIT);
                  done.add(callbacks.submit(call::end));
                }
              }
            },
            "event-loop-1");
    loop.start();
    loop.join();
    for (java.util.concurrent.Future<?> f : done) {
      f.get(20, TimeUnit.SECONDS);
    }
    callbacks.shutdown();
    assertThat(Profold.flush(Duration.ofSeconds(20))).as("flushed and acknowledged").isTrue();

    String metrics = server.meters().scrape();
    String serve = "{instance=\"client-1\",kind=\"compute\",path=\"serve\",service=\"e2e\"}";
    String call =
        "{instance=\"client-1\",kind=\"wait\",path=\"serve/backend.call\",service=\"e2e\"}";
    assertThat(metrics)
        .contains("profold_region_time_seconds_count" + serve + " 50\n")
        .contains("profold_region_async_duration_seconds_count" + call + " 50\n")
        .doesNotContain("profold_region_time_seconds_count" + call)
        .doesNotContain("profold_client_misuse_total");
  }

  /**
   * A process whose region names keep changing, with a dictionary of 16 KiB (a quarter of the
   * smallest message limit) that the 2,000 names would fill eight times over: every name arrives
   * under its own path, none as {@code profold.overflow}; and once the stream ends the collector
   * frees what it defined.
   */
  @Test
  void regionNamesThatKeepChangingAreAgedOutOfBothDictionaries() throws Exception {
    start(ProfoldConfig.builder().maxMessageBytes(64 * 1024));
    for (int i = 0; i < 100; i++) {
      for (int j = 0; j < 20; j++) {
        try (Region r = Profold.region(churningName(i, j), Kind.COMPUTE)) {
          assertThat(r).isNotNull();
        }
      }
      assertThat(Profold.flush(Duration.ofSeconds(20))).as("flush %d", i).isTrue();
    }

    String metrics = server.meters().scrape();
    for (int i = 0; i < 100; i++) {
      for (int j = 0; j < 20; j++) {
        assertThat(metrics)
            .contains(
                "profold_region_time_seconds_count{instance=\"client-1\",kind=\"compute\",path=\""
                    + churningName(i, j)
                    + "\",service=\"e2e\"} 1\n");
      }
    }
    assertThat(metrics)
        .doesNotContain("path=\"profold.overflow\"")
        .doesNotContain("kind=\"dictionary_full\"");

    Profold.shutdown(Duration.ofSeconds(5)); // the stream ends
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline && freed(server.meters().scrape()) == 0) {
      TimeUnit.MILLISECONDS.sleep(50); // a poll tick
    }
    assertThat(freed(server.meters().scrape())).isPositive();
  }

  private static String churningName(int i, int j) {
    return "churning.operation.number-" + i + "-" + j;
  }

  private static double freed(String metrics) {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("(?m)^profold_dictionary_freed_total (\\S+)")
            .matcher(metrics);
    return m.find() ? Double.parseDouble(m.group(1)) : 0;
  }

  /** The value of the unlabelled sample {@code name} in {@code metrics}. */
  private static double sample(String metrics, String name) {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("(?m)^" + name + " (\\S+)$").matcher(metrics);
    assertThat(m.find()).as(name).isTrue();
    return Double.parseDouble(m.group(1));
  }
}
