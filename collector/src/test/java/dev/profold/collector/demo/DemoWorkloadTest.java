package dev.profold.collector.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.config.CollectorConfig;
import dev.profold.collector.config.ConfigLoader;
import dev.profold.collector.server.CollectorServer;
import dev.profold.collector.testing.ThreadsScheme;
import java.io.StringReader;
import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The demo workload against a real collector: regions and thread activity reach /metrics. */
class DemoWorkloadTest {
  @Test
  void theDemoShowsRegionsAndItsWorkersOverheadClasses() throws Exception {
    CollectorServer server =
        new CollectorServer(
            CollectorConfig.defaults().withOverrides(null, 0, 0, Duration.ofSeconds(1)),
            InstantSource.system());
    server.start();
    try (DemoWorkload demo =
        new DemoWorkload("127.0.0.1", server.grpcPort(), Duration.ofSeconds(1))) {
      demo.start();
      // Wait for exactly what is asserted: instances report in any order, so another
      // instance's regions may reach /metrics before checkout-0's.
      Pattern regions =
          Pattern.compile("profold_region_time_seconds_sum\\{instance=\"checkout-0\"");
      Pattern sync =
          Pattern.compile(
              "profold_thread_class_ratio\\{class=\"sync\",instance=\"checkout-0\","
                  + "service=\"checkout\",thread_group=\"checkout-\\*-worker-\\*\"\\} 0\\.[0-9]*[1-9]");
      Pattern cpu =
          Pattern.compile(
              "profold_thread_cpu_seconds\\{instance=\"checkout-0\",service=\"checkout\","
                  + "stat=\"max\",thread_group=\"checkout-\\*-worker-\\*\"\\} 0\\.[0-9]*[1-9]");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      String metrics = "";
      while (System.nanoTime() < deadline
          && !(regions.matcher(metrics).find()
              && sync.matcher(metrics).find()
              && cpu.matcher(metrics).find())) {
        TimeUnit.MILLISECONDS.sleep(200); // a poll tick
        metrics = server.meters().scrape();
      }
      assertThat(metrics).containsPattern(regions).containsPattern(sync).containsPattern(cpu);
    } finally {
      server.stop();
    }
  }

  @Test
  void closingSendsEachInstancesLastIntervalAndWaitsForItsAck() throws Exception {
    // The demo only half-closed its streams: the interval it was stopped in never arrived, and
    // the collector's stop, which archives the current interval, had nothing of it.
    CollectorServer server =
        new CollectorServer(
            CollectorConfig.defaults().withOverrides(null, 0, 0, Duration.ofSeconds(60)),
            InstantSource.system());
    server.start();
    try {
      DemoWorkload demo = new DemoWorkload("127.0.0.1", server.grpcPort(), Duration.ofSeconds(60));
      demo.start();
      demo.close(); // long before the first 60 s interval ends
      // Each instance waits up to a second for its ack; on a loaded machine one may come later.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (!server.meters().scrape().contains("profold_deltas_applied_total 4.0")
          && System.nanoTime() < deadline) {
        TimeUnit.MILLISECONDS.sleep(50); // a poll tick
      }
      assertThat(server.meters().scrape()).contains("profold_deltas_applied_total 4.0");
    } finally {
      server.stop();
    }
  }

  @Test
  void withTheThreadsSchemeTheSearchWorkersHotShardShowsAsThreadImbalance() throws Exception {
    String yaml =
        """
        grpc_port: 0
        http_port: 0
        interval: 1s
        schemes:
          - name: region
          - name: threads
            query: THREADS_QUERY
        """
            .replace("THREADS_QUERY", ThreadsScheme.QUERY);
    CollectorServer server =
        new CollectorServer(
            ConfigLoader.parse(new StringReader(yaml), "collector.yaml"), InstantSource.system());
    server.start();
    try (DemoWorkload demo =
        new DemoWorkload("127.0.0.1", server.grpcPort(), Duration.ofSeconds(1))) {
      demo.start();
      // The first worker scans three times as long as the other: imb = max - mean > 0.
      Pattern imbalance =
          Pattern.compile(
              "profold_thread_region_imbalance_seconds\\{instance=\"search-0\",kind=\"compute\","
                  + "path=\"query/index.scan\",service=\"search\","
                  + "thread_group=\"search-\\*-worker-\\*\"\\} ([0-9.eE+-]+)");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      String metrics = "";
      while (System.nanoTime() < deadline && !imbalance.matcher(metrics).find()) {
        TimeUnit.MILLISECONDS.sleep(200); // a poll tick
        metrics = server.meters().scrape();
      }
      Matcher m = imbalance.matcher(metrics);
      assertThat(m.find()).as("the hot shard's imbalance in /metrics").isTrue();
      assertThat(Double.parseDouble(m.group(1))).isPositive();
    } finally {
      server.stop();
    }
  }
}
