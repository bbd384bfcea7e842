package dev.profold.collector.alert;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * An HTTP server standing in for Alertmanager's {@code POST /api/v2/alerts}: it records every
 * request body and answers with scripted status codes (200 once the script is used up).
 */
final class FakeAlertmanager implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpServer server;
  private final Deque<Integer> script = new ArrayDeque<>();
  private final List<JsonNode> requests = new ArrayList<>();
  private final List<String> paths = new ArrayList<>();

  FakeAlertmanager() throws IOException {
    server =
        HttpServer.create(new InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 8);
    server.createContext(
        "/",
        ex -> {
          byte[] body = ex.getRequestBody().readAllBytes();
          int code;
          synchronized (this) {
            paths.add(ex.getRequestMethod() + " " + ex.getRequestURI().getPath());
            requests.add(JSON.readTree(body));
            code = script.isEmpty() ? 200 : script.poll();
          }
          byte[] answer = (code == 200 ? "" : "error " + code).getBytes(StandardCharsets.UTF_8);
          ex.sendResponseHeaders(code, answer.length == 0 ? -1 : answer.length);
          try (OutputStream out = ex.getResponseBody()) {
            out.write(answer);
          }
        });
    server.start();
  }

  /** Answers the next requests with these status codes, in order. */
  synchronized FakeAlertmanager answer(Integer... codes) {
    script.addAll(List.of(codes));
    return this;
  }

  URI url() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  synchronized List<JsonNode> requests() {
    return List.copyOf(requests);
  }

  synchronized List<String> paths() {
    return List.copyOf(paths);
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
