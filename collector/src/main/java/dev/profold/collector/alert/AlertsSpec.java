package dev.profold.collector.alert;

import java.net.URI;
import java.util.List;

/**
 * The {@code alerts} section of the collector config.
 *
 * @param alertmanager where to push alerts; null to expose them as metrics only
 * @param externalUrl the collector's base URL as others reach it, for alerts' {@code generatorURL};
 *     null for {@code http://<listen>:<http_port>}
 * @param rules the rules, names unique
 */
public record AlertsSpec(AlertmanagerSpec alertmanager, URI externalUrl, List<AlertRule> rules) {
  public AlertsSpec {
    rules = List.copyOf(rules);
  }

  /** No rules, no Alertmanager (the default). */
  public static AlertsSpec none() {
    return new AlertsSpec(null, null, List.of());
  }
}
