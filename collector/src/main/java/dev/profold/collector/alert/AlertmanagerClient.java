package dev.profold.collector.alert;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;

/**
 * Posts alerts to Alertmanager's v2 API ({@code POST <url>/api/v2/alerts}, a JSON array of alerts
 * with {@code labels} (including {@code alertname}), {@code annotations}, {@code startsAt}, {@code
 * endsAt} and {@code generatorURL}). One blocking call per batch, bounded by the spec's timeout.
 * Thread-safe.
 */
final class AlertmanagerClient {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One alert as sent: firing ones end a few intervals ahead, resolved ones when they resolved. */
  record Notification(Alert alert, Instant endsAt) {}

  /** A request that did not succeed; {@code retryable} is false for answers retrying cannot fix. */
  static final class Failure extends Exception {
    private static final long serialVersionUID = 1L;
    final boolean retryable;

    Failure(String message, boolean retryable) {
      super(message);
      this.retryable = retryable;
    }
  }

  private final AlertmanagerSpec spec;
  private final URI generatorUrl;
  private final HttpClient http;

  AlertmanagerClient(AlertmanagerSpec spec, URI generatorUrl) {
    this.spec = spec;
    this.generatorUrl = generatorUrl;
    this.http =
        HttpClient.newBuilder()
            .connectTimeout(spec.timeout())
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();
  }

  /** Sends {@code batch}; returns when Alertmanager accepted it (2xx). */
  void post(Collection<Notification> batch) throws Failure, InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(spec.alertsEndpoint())
            .timeout(spec.timeout())
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(body(batch, generatorUrl)))
            .build();
    HttpResponse<String> r;
    try {
      r = http.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new Failure(spec.alertsEndpoint() + ": " + e, true);
    }
    int code = r.statusCode();
    if (code / 100 == 2) {
      return;
    }
    String text = r.body().strip();
    if (text.length() > 300) {
      text = text.substring(0, 300) + "...";
    }
    // 4xx means the alerts themselves were refused: sending them again cannot help (but 429 can).
    boolean retryable = code >= 500 || code == 429 || code == 408;
    throw new Failure(
        spec.alertsEndpoint() + " answered HTTP " + code + (text.isEmpty() ? "" : ": " + text),
        retryable);
  }

  /** The JSON body for {@code batch}. */
  static byte[] body(Collection<Notification> batch, URI generatorUrl) {
    ArrayNode array = JSON.createArrayNode();
    for (Notification n : batch) {
      Alert a = n.alert();
      ObjectNode o = array.addObject();
      ObjectNode labels = o.putObject("labels");
      labels.put("alertname", a.rule());
      for (Map.Entry<String, String> e : a.labels().entrySet()) {
        labels.put(e.getKey(), e.getValue());
      }
      ObjectNode annotations = o.putObject("annotations");
      a.annotations().forEach(annotations::put);
      o.put("startsAt", a.activeAt().toString());
      // Never before the start (a clock stepped back): Alertmanager refuses such an alert.
      Instant ends = n.endsAt().isBefore(a.activeAt()) ? a.activeAt() : n.endsAt();
      o.put("endsAt", ends.toString());
      if (generatorUrl != null) {
        o.put("generatorURL", generatorUrl.toString());
      }
    }
    try {
      return JSON.writeValueAsBytes(array);
    } catch (IOException e) {
      throw new IllegalStateException("cannot write alerts as JSON", e);
    }
  }
}
