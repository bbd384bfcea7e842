package dev.profold.collector.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.config.ConfigLoader;
import dev.profold.collector.testing.MutableClock;
import java.io.StringReader;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The collector's HTTP endpoints answer their own path and methods only. */
class HttpRoutesTest {
  @TempDir Path dir;
  private CollectorServer server;
  private final HttpClient client = HttpClient.newHttpClient();

  @BeforeEach
  void start() throws Exception {
    server =
        new CollectorServer(
            ConfigLoader.parse(
                new StringReader(
                    "grpc_port: 0\nhttp_port: 0\narchive:\n  directory: "
                        + dir.resolve("archive")
                        + "\n"),
                "collector.yaml"),
            MutableClock.at(Instant.parse("2026-01-01T00:00:01Z")));
    server.start();
  }

  @AfterEach
  void stop() throws Exception {
    server.stop();
  }

  private HttpResponse<String> send(String method, String path) throws Exception {
    return client.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + path))
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void eachEndpointAnswersItsPathWithGetAndHead() throws Exception {
    assertThat(send("GET", "/metrics").statusCode()).isEqualTo(200);
    assertThat(send("GET", "/metrics").body()).contains("profold_");
    assertThat(send("GET", "/healthz").body()).isEqualTo("ok\n");
    assertThat(send("GET", "/readyz").body()).isEqualTo("ready\n");
    assertThat(send("GET", "/api/v1/alerts").statusCode()).isEqualTo(200);
    assertThat(send("GET", "/").body()).startsWith("Profold collector");
    HttpResponse<String> head = send("HEAD", "/healthz");
    assertThat(head.statusCode()).isEqualTo(200);
    assertThat(head.body()).isEmpty();
    // Answers about now: a cache in front (a default TTL) served old ones.
    for (String path :
        List.of("/healthz", "/readyz", "/api/v1/alerts", "/api/v1/query?q=SELECT+count()")) {
      assertThat(send("GET", path).headers().firstValue("Cache-Control"))
          .as(path)
          .hasValue("no-store");
    }
  }

  @Test
  void clientsStalledInTheMiddleOfARequestDoNotHoldUpHealthOrScrapes() throws Exception {
    // Each stalled request holds a serving thread until the JDK server's request timeout (10 s)
    // closes it. Before: two of them took both threads, and every endpoint hung; later eight of
    // them took all eight, and a health probe waited 10 s.
    List<Socket> stalled = new ArrayList<>();
    try {
      for (int i = 0; i < 12; i++) {
        Socket s = new Socket("127.0.0.1", server.httpPort());
        s.getOutputStream().write("GET /metr".getBytes(StandardCharsets.US_ASCII));
        s.getOutputStream().flush();
        stalled.add(s);
      }
      HttpRequest health =
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/healthz"))
              .timeout(Duration.ofSeconds(8))
              .build();
      assertThat(client.send(health, HttpResponse.BodyHandlers.ofString()).body())
          .isEqualTo("ok\n");
      HttpRequest scrape =
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.httpPort() + "/metrics"))
              .timeout(Duration.ofSeconds(8))
              .build();
      assertThat(client.send(scrape, HttpResponse.BodyHandlers.ofString()).statusCode())
          .isEqualTo(200);
    } finally {
      for (Socket s : stalled) {
        s.close();
      }
    }
  }

  @Test
  void aPathThatOnlyStartsLikeAnEndpointIsNotFound() throws Exception {
    // Before: the JDK server's prefix match made /metricsxyz a scrape.
    for (String path : new String[] {"/metricsxyz", "/metrics/x", "/healthzz", "/api/v1/alertsx"}) {
      HttpResponse<String> r = send("GET", path);
      assertThat(r.statusCode()).as(path).isEqualTo(404);
      assertThat(r.body()).as(path).startsWith("not found: " + path + "; try /metrics");
    }
    assertThat(send("GET", "/nothing").statusCode()).isEqualTo(404);
  }

  @Test
  void anotherMethodIsNotAllowedAndSaysWhichAre() throws Exception {
    // Before: POST /metrics was answered as a scrape.
    for (String path : new String[] {"/metrics", "/healthz", "/readyz", "/", "/api/v1/alerts"}) {
      HttpResponse<String> r = send("POST", path);
      assertThat(r.statusCode()).as(path).isEqualTo(405);
      assertThat(r.headers().firstValue("Allow")).as(path).hasValue("GET, HEAD");
    }
    assertThat(send("DELETE", "/metrics").body())
        .isEqualTo("DELETE is not allowed on /metrics; use GET or HEAD\n");
  }
}
