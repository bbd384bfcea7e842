package dev.profold.collector.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.Kind;
import dev.profold.client.ProfoldConfig;
import dev.profold.client.Region;
import dev.profold.client.ThreadAggregation;
import dev.profold.client.internal.record.Recorder;
import dev.profold.client.internal.runtime.ProfoldRuntime;
import dev.profold.collector.alert.Alert;
import dev.profold.collector.alert.AlertState;
import dev.profold.collector.config.CollectorConfig;
import dev.profold.collector.config.ConfigLoader;
import dev.profold.collector.server.CollectorServer;
import dev.profold.collector.testing.ThreadsScheme;
import java.io.StringReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * An imbalanced pool timed with the client library's regions, end to end: three pools of four
 * threads, each sent with another thread aggregation (NONE, SET, KEY), pushed over gRPC to a real
 * collector that keeps their thread detail in one scheme and alerts on the imbalance across each
 * pool's threads.
 *
 * <p>The planted problem, per round: worker 0 works 40 ms, workers 1-3 work 10 ms and wait at a
 * barrier for worker 0. At {@code round/work} the per-thread max is 40 ms and the average 17.5 ms,
 * so imb / max = 0.5625; at {@code round/barrier} three threads wait 30 ms, so wait (the average) /
 * max = 0.75. Both ratios hold for any number of rounds in an interval. Work is timed sleeping to a
 * deadline, so the planted times hold however busy the machine is.
 */
class ThreadImbalanceEndToEndTest {
  private static final Duration DEADLINE = Duration.ofSeconds(60);
  private static final String CONFIG =
      """
      grpc_port: 0
      http_port: 0
      interval: 1s
      schemes:
        - name: region
        - name: threads
          query: THREADS_QUERY
      alerts:
        rules:
          - name: ImbalancedThreads
            expr: thread_region_imbalance_seconds{path="round/work"} > 0.05
            for: 2
            annotations:
              max: "{{ $context.max }}"
              slowest: "{{ $context.slowest_thread }}"
              source: "{{ $context.source }}"
              significant: "{{ $context.significant }}"
          - name: WaitingThreads
            expr: thread_region_wait_seconds{path="round/barrier"} > 0.05
            for: 2
            annotations:
              max: "{{ $context.max }}"
      """
          .replace("THREADS_QUERY", ThreadsScheme.QUERY);

  private final AtomicBoolean stop = new AtomicBoolean();
  private final List<Thread> workload = new ArrayList<>();
  private CollectorServer server;
  private ProfoldRuntime runtime;

  @BeforeEach
  void start() throws Exception {
    CollectorConfig c = ConfigLoader.parse(new StringReader(CONFIG), "collector.yaml");
    server = new CollectorServer(c, InstantSource.system());
    server.start();
    runtime =
        ProfoldRuntime.start(
            ProfoldConfig.builder()
                .endpoint("127.0.0.1:" + server.grpcPort())
                .service("reports")
                .instance("reports-1")
                .interval(Duration.ofSeconds(1))
                .threadAggregation("pool-none-*", ThreadAggregation.NONE)
                .threadAggregation("pool-set-*", ThreadAggregation.SET)
                .threadAggregation("pool-key-*", ThreadAggregation.KEY)
                .build());
  }

  @AfterEach
  void stopEverything() throws Exception {
    stop.set(true);
    for (Thread t : workload) {
      t.interrupt();
      t.join(10_000);
    }
    runtime.shutdown(Duration.ofSeconds(5));
    server.stop();
  }

  private static void sleepFor(long nanos) {
    long until = System.nanoTime() + nanos;
    for (long left = nanos; left > 0; left = until - System.nanoTime()) {
      LockSupport.parkNanos(left);
    }
  }

  private void pool(String name) {
    Recorder r = runtime.recorder();
    CyclicBarrier barrier = new CyclicBarrier(4);
    for (int k = 0; k < 4; k++) {
      long work = k == 0 ? 40_000_000 : 10_000_000;
      Thread t =
          new Thread(
              () -> {
                while (!stop.get()) {
                  try (Region round = r.region("round", Kind.COMPUTE)) {
                    try (Region w = r.region("work", Kind.COMPUTE)) {
                      sleepFor(work);
                    }
                    try (Region b = r.region("barrier", Kind.WAIT)) {
                      barrier.await();
                    }
                  } catch (InterruptedException | BrokenBarrierException e) {
                    return; // the test is ending
                  }
                }
              },
              name + "-" + k);
      t.setDaemon(true);
      workload.add(t);
      t.start();
    }
  }

  /** The firing alert of {@code rule} for thread group {@code group}, evaluated after {@code n}. */
  private List<Alert> evaluations(String rule, String group, int n) throws InterruptedException {
    List<Alert> seen = new ArrayList<>();
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    while (seen.size() < n && System.nanoTime() < deadline) {
      server.alerts().alerts().stream()
          .filter(a -> a.rule().equals(rule) && a.state() == AlertState.FIRING)
          .filter(a -> group.equals(a.labels().get("thread_group")))
          .findFirst()
          .filter(a -> seen.isEmpty() || seen.get(seen.size() - 1).value() != a.value())
          .ifPresent(seen::add);
      TimeUnit.MILLISECONDS.sleep(100); // a poll tick
    }
    assertThat(seen)
        .as("%s evaluations of %s for %s; alerts: %s", n, rule, group, server.alerts().alerts())
        .hasSize(n);
    return seen;
  }

  private static double ratio(Alert a) {
    return a.value() / Double.parseDouble(a.annotations().get("max"));
  }

  @Test
  void eachThreadAggregationShowsThePlantedImbalanceAcrossThreads() throws Exception {
    for (String p : List.of("pool-none", "pool-set", "pool-key")) {
      pool(p);
    }
    for (String p : List.of("pool-none", "pool-set", "pool-key")) {
      String group = p + "-*";
      for (Alert a : evaluations("ImbalancedThreads", group, 3)) {
        System.out.printf(
            Locale.ROOT,
            "%s: imb %.4f s, max %s s, imb/max %.4f (planted 0.5625), slowest %s%n",
            group,
            a.value(),
            a.annotations().get("max"),
            ratio(a),
            a.annotations().get("slowest"));
        assertThat(a.labels())
            .containsEntry("service", "reports")
            .containsEntry("instance", "reports-1")
            .containsEntry("kind", "compute");
        assertThat(a.annotations()).containsEntry("significant", "true");
        assertThat(ratio(a)).as("imb / max of %s", a).isBetween(0.5625 * 0.8, 0.5625 * 1.2);
      }
      Alert last = evaluations("ImbalancedThreads", group, 1).get(0);
      switch (p) {
        case "pool-none" ->
            assertThat(last.annotations())
                .containsEntry("source", "none")
                .containsEntry("slowest", "pool-none-0");
        case "pool-set" -> assertThat(last.annotations()).containsEntry("source", "set");
        default ->
            assertThat(last.annotations())
                .containsEntry("source", "key")
                .containsEntry("slowest", "slowest");
      }
      for (Alert a : evaluations("WaitingThreads", group, 2)) {
        System.out.printf(
            Locale.ROOT,
            "%s: wait %.4f s, max %s s, wait/max %.4f (planted 0.75)%n",
            group,
            a.value(),
            a.annotations().get("max"),
            ratio(a));
        assertThat(ratio(a)).as("wait / max of %s", a).isBetween(0.75 * 0.8, 0.75 * 1.2);
      }
    }
    String metrics =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + server.httpPort() + "/metrics"))
                    .build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    for (String p : List.of("pool-none", "pool-set", "pool-key")) {
      assertThat(metrics)
          .contains(
              "profold_thread_region_imbalance_seconds{instance=\"reports-1\",kind=\"compute\","
                  + "path=\"round/work\",service=\"reports\",thread_group=\""
                  + p
                  + "-*\"}");
    }
  }
}
