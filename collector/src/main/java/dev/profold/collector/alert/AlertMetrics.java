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
  private final Counter notClosed;
  private final Counter unavailable;

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
    notClosed = skipped(registry, "interval_not_closed");
    unavailable = skipped(registry, "values_unavailable");
  }

  private static Counter skipped(MeterRegistry registry, String reason) {
    return OwnMeter.ALERT_EVALUATIONS_SKIPPED
        .counter()
        .tag("reason", reason)
        .description(
            "Interval closes whose alert evaluation was skipped, by reason: interval_not_closed"
                + " (the fold thread did not close it in time) or values_unavailable; the alerts"
                + " keep their state and firing ones are sent again.")
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

  /**
   * An evaluation skipped for {@code reason} ({@code interval_not_closed} or {@code
   * values_unavailable}).
   */
  void skipped(String reason) {
    (reason.equals("interval_not_closed") ? notClosed : unavailable).increment();
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
