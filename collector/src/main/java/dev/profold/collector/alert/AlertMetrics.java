package dev.profold.collector.alert;

import dev.profold.collector.telemetry.OwnMeter;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The alerting's own counters (docs/metrics.md): evaluations, and alerts delivered to Alertmanager
 * by result. Every result series exists from the start (at 0), so {@code rate()} sees the first
 * failure. Thread-safe; recording never blocks.
 */
public final class AlertMetrics {
  private final Counter evaluations;
  private final Counter sent;
  private final Counter failed;
  private final Counter dropped;
  private final Counter errors;

  public AlertMetrics(MeterRegistry registry) {
    evaluations =
        OwnMeter.ALERT_EVALUATIONS
            .counter()
            .description("Evaluations of the alert rules (one per interval close).")
            .register(registry);
    sent = notifications(registry, "sent");
    failed = notifications(registry, "failed");
    dropped = notifications(registry, "dropped");
    errors =
        OwnMeter.ALERT_NOTIFICATION_ERRORS
            .counter()
            .description("Requests to Alertmanager that failed (each attempt, retries included).")
            .register(registry);
  }

  private static Counter notifications(MeterRegistry registry, String result) {
    return OwnMeter.ALERT_NOTIFICATIONS
        .counter()
        .tag("result", result)
        .description(
            "Alert notifications (one per alert and evaluation) for Alertmanager, by result: sent,"
                + " failed (given up after the retries) or dropped (the queue was full).")
        .register(registry);
  }

  void evaluated() {
    evaluations.increment();
  }

  void sent(int alerts) {
    sent.increment(alerts);
  }

  void failed(int alerts) {
    failed.increment(alerts);
  }

  void dropped(int alerts) {
    dropped.increment(alerts);
  }

  void requestFailed() {
    errors.increment();
  }
}
