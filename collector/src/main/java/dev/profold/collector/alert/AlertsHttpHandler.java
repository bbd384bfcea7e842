package dev.profold.collector.alert;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.io.OutputStream;
import java.util.List;
import java.util.function.Supplier;

/**
 * {@code GET /api/v1/alerts}: the pending and firing alerts of the last evaluation as JSON ({@code
 * {"alerts":[{"alert", "state", "labels", "annotations", "value", "activeAt", "firingSince",
 * "keepFiringSince"}]}}). Alerts sent to Alertmanager link here ({@code generatorURL}).
 * Thread-safe.
 */
public final class AlertsHttpHandler implements HttpHandler {
  public static final String PATH = "/api/v1/alerts";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Supplier<List<Alert>> alerts;

  public AlertsHttpHandler(Supplier<List<Alert>> alerts) {
    this.alerts = alerts;
  }

  @Override
  public void handle(HttpExchange ex) throws IOException {
    if (!ex.getRequestMethod().equals("GET") && !ex.getRequestMethod().equals("HEAD")) {
      ex.getResponseHeaders().set("Allow", "GET, HEAD");
      ex.sendResponseHeaders(405, -1);
      ex.close();
      return;
    }
    ObjectNode root = JSON.createObjectNode();
    ArrayNode list = root.putArray("alerts");
    for (Alert a : alerts.get()) {
      ObjectNode o = list.addObject();
      o.put("alert", a.rule());
      o.put("state", a.state().label());
      a.labels().forEach(o.putObject("labels")::put);
      a.annotations().forEach(o.putObject("annotations")::put);
      o.put("value", a.value());
      o.put("activeAt", a.activeAt().toString());
      if (a.firingSince() != null) {
        o.put("firingSince", a.firingSince().toString());
      }
      if (a.keepFiringSince() != null) {
        o.put("keepFiringSince", a.keepFiringSince().toString());
      }
    }
    byte[] body = JSON.writeValueAsBytes(root);
    ex.getResponseHeaders().set("Content-Type", "application/json");
    ex.getResponseHeaders().set("Cache-Control", "no-store");
    ex.sendResponseHeaders(200, ex.getRequestMethod().equals("HEAD") ? -1 : body.length);
    try (OutputStream out = ex.getResponseBody()) {
      if (!ex.getRequestMethod().equals("HEAD")) {
        out.write(body);
      }
    }
  }
}
