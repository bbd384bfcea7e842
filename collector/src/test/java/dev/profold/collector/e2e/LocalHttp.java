package dev.profold.collector.e2e;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** What the end-to-end tests with a local server process need: a free port, a status probe. */
final class LocalHttp {
  private LocalHttp() {}

  /** A port free now (a server started next takes it). */
  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  /** The status of GET {@code uri}, or -1 when nothing answers (yet). */
  static int status(HttpClient http, URI uri) {
    try {
      return http.send(
              HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(2)).build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }
}
