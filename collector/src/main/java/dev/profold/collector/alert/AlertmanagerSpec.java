package dev.profold.collector.alert;

import java.net.URI;
import java.time.Duration;

/**
 * Where and how alerts are pushed to Alertmanager (its v2 API).
 *
 * @param url Alertmanager's base URL, e.g. {@code http://127.0.0.1:9093}; alerts go to {@code
 *     <url>/api/v2/alerts}
 * @param timeout connect and request timeout of one attempt
 * @param retries further attempts after a failed one, with exponential backoff
 */
public record AlertmanagerSpec(URI url, Duration timeout, int retries) {
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);
  public static final int DEFAULT_RETRIES = 3;

  /** The endpoint alerts are posted to. */
  public URI alertsEndpoint() {
    String base = url.toString();
    return URI.create((base.endsWith("/") ? base : base + "/") + "api/v2/alerts");
  }
}
