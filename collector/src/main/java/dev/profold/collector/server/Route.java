package dev.profold.collector.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Set;

/**
 * One HTTP endpoint of the collector: its handler answers only its own path, exactly, and only the
 * methods it takes. The JDK's server hands a context every path that starts with the context's (so
 * {@code /metricsxyz} would be a scrape) and every method (a {@code POST /metrics} too); here
 * another path is 404 and another method 405 with an {@code Allow} header, as clients and proxies
 * expect.
 */
final class Route implements HttpHandler {
  /** Where a 404 points to. */
  static final String PATHS_HINT =
      "try /metrics, /healthz, /readyz, /api/v1/query or /api/v1/alerts";

  private final String path;
  private final Set<String> methods;
  private final HttpHandler handler;

  /** {@code handler} for {@code path} exactly, with the request {@code methods} it takes. */
  Route(String path, Set<String> methods, HttpHandler handler) {
    this.path = path;
    this.methods = Set.copyOf(methods);
    this.handler = handler;
  }

  /** {@code handler} for {@code path} exactly, with GET and HEAD. */
  static Route get(String path, HttpHandler handler) {
    return new Route(path, Set.of("GET", "HEAD"), handler);
  }

  /** The path it answers. */
  String path() {
    return path;
  }

  @Override
  public void handle(HttpExchange ex) throws IOException {
    if (!ex.getRequestURI().getPath().equals(path)) {
      text(ex, 404, "not found: " + ex.getRequestURI().getPath() + "; " + PATHS_HINT + "\n");
    } else if (!methods.contains(ex.getRequestMethod())) {
      ex.getResponseHeaders().set("Allow", String.join(", ", new java.util.TreeSet<>(methods)));
      text(
          ex,
          405,
          ex.getRequestMethod() + " is not allowed on " + path + "; use " + allowed() + "\n");
    } else {
      handler.handle(ex);
    }
  }

  private String allowed() {
    return String.join(" or ", new java.util.TreeSet<>(methods));
  }

  /** Answers {@code body} as plain text with {@code code}; no body to a HEAD request. */
  static void text(HttpExchange ex, int code, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
    ex.getResponseHeaders().set("Cache-Control", "no-store"); // health and errors: now, not then
    if (ex.getRequestMethod().equals("HEAD")) {
      ex.sendResponseHeaders(code, -1);
      return;
    }
    ex.sendResponseHeaders(code, bytes.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(bytes);
    }
  }
}
