package dev.profold.collector.query.online;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Queries over HTTP run at most {@link QueryHttpHandler#MAX_RUNNING} at a time: each holds one of
 * the server's threads while it runs, and the others must stay free for scrapes and health checks.
 */
class QueryHttpLimitTest {
  private final CountDownLatch entered = new CountDownLatch(QueryHttpHandler.MAX_RUNNING);
  private final CountDownLatch release = new CountDownLatch(1);
  private final ExecutorService threads = Executors.newFixedThreadPool(8);
  private final HttpClient client = HttpClient.newHttpClient();
  private HttpServer server;

  @BeforeEach
  void start() throws Exception {
    OnlineQuery slow =
        new OnlineQuery(
            () -> {
              entered.countDown();
              try {
                release.await(30, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              return SnapshotFixtures.snapshot(
                  SnapshotFixtures.scheme(
                      "region",
                      "",
                      List.of(SnapshotFixtures.time("checkout", "main", 1.0)),
                      List.of()));
            });
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
    server.setExecutor(threads);
    server.createContext(
        QueryHttpHandler.PATH,
        new QueryHttpHandler(slow, InstantSource.fixed(Instant.parse("2026-01-01T00:00:00Z"))));
    server.start();
  }

  @AfterEach
  void stop() {
    release.countDown();
    server.stop(0);
    threads.shutdownNow();
  }

  private HttpRequest query() {
    return HttpRequest.newBuilder(
            URI.create(
                "http://127.0.0.1:"
                    + server.getAddress().getPort()
                    + QueryHttpHandler.PATH
                    + "?q=SELECT%20count()"))
        .timeout(Duration.ofSeconds(20))
        .build();
  }

  @Test
  void aQueryBeyondTheRunningOnesIsAskedToRetryAndTheRunningOnesFinish() throws Exception {
    List<CompletableFuture<HttpResponse<String>>> running = new ArrayList<>();
    for (int i = 0; i < QueryHttpHandler.MAX_RUNNING; i++) {
      running.add(client.sendAsync(query(), HttpResponse.BodyHandlers.ofString()));
    }
    assertThat(entered.await(10, TimeUnit.SECONDS)).as("both queries running").isTrue();

    HttpResponse<String> refused = client.send(query(), HttpResponse.BodyHandlers.ofString());
    assertThat(refused.statusCode()).isEqualTo(503);
    assertThat(refused.headers().firstValue("Retry-After")).hasValue("1");
    assertThat(refused.body()).contains("2 queries are running already; retry in a second");

    release.countDown();
    for (CompletableFuture<HttpResponse<String>> r : running) {
      assertThat(r.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }
    assertThat(client.send(query(), HttpResponse.BodyHandlers.ofString()).statusCode())
        .as("room again once they finished")
        .isEqualTo(200);
  }
}
