package dev.profold.collector.demo;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.config.CollectorConfig;
import dev.profold.collector.server.CollectorServer;
import java.time.Duration;
import java.time.InstantSource;
import java.util.concurrent.TimeUnit;
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
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      String metrics = "";
      while (System.nanoTime() < deadline
          && !(metrics.contains("profold_thread_class_ratio{class=\"sync\"")
              && metrics.contains("profold_region_time_seconds_sum"))) {
        TimeUnit.MILLISECONDS.sleep(200); // a poll tick
        metrics = server.meters().scrape();
      }
      assertThat(metrics)
          .contains("profold_region_time_seconds_sum{instance=\"checkout-0\"")
          .containsPattern(
              "profold_thread_class_ratio\\{class=\"sync\",instance=\"checkout-0\","
                  + "service=\"checkout\",thread_group=\"checkout-\\*-worker-\\*\"\\} 0\\.[0-9]*[1-9]")
          .containsPattern(
              "profold_thread_cpu_seconds\\{instance=\"checkout-0\",service=\"checkout\","
                  + "stat=\"max\",thread_group=\"checkout-\\*-worker-\\*\"\\} 0\\.[0-9]*[1-9]");
    } finally {
      server.stop();
    }
  }
}
