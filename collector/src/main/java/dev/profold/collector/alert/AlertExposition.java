package dev.profold.collector.alert;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.prometheus.metrics.model.snapshots.PrometheusNaming;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The alerts in /metrics, built at scrape time from the last evaluation:
 *
 * <ul>
 *   <li>{@code profold_alert_firing{alert="<rule>", <alert labels>} 1} per firing alert;
 *   <li>{@code profold_alert_pending{alert="<rule>", <alert labels>} 1} per pending alert;
 *   <li>{@code profold_alert_rules}: the number of rules loaded.
 * </ul>
 *
 * An alert that is not firing (or not pending) has no series: as with Prometheus's {@code ALERTS},
 * absence means inactive. Alert labels whose names Prometheus does not accept are left out.
 * Thread-safe: it keeps no state between scrapes.
 */
public final class AlertExposition implements MultiCollector {
  private final Supplier<List<Alert>> alerts;
  private final Supplier<Integer> ruleCount;

  public AlertExposition(Supplier<List<Alert>> alerts, Supplier<Integer> ruleCount) {
    this.alerts = alerts;
    this.ruleCount = ruleCount;
  }

  @Override
  public MetricSnapshots collect() {
    GaugeSnapshot.Builder firing =
        GaugeSnapshot.builder()
            .name("profold_alert_firing")
            .help("1 for each firing alert (rule and label set); absent when not firing.");
    GaugeSnapshot.Builder pending =
        GaugeSnapshot.builder()
            .name("profold_alert_pending")
            .help(
                "1 for each alert whose condition holds but not yet for the rule's 'for'"
                    + " evaluations; absent otherwise.");
    for (Alert a : alerts.get()) {
      GaugeDataPointSnapshot point =
          GaugeDataPointSnapshot.builder().labels(labels(a)).value(1).build();
      if (a.state() == AlertState.FIRING) {
        firing.dataPoint(point);
      } else if (a.state() == AlertState.PENDING) {
        pending.dataPoint(point);
      }
    }
    GaugeSnapshot rules =
        GaugeSnapshot.builder()
            .name("profold_alert_rules")
            .help("Alert rules loaded.")
            .dataPoint(GaugeDataPointSnapshot.builder().value(ruleCount.get()).build())
            .build();
    return new MetricSnapshots(firing.build(), pending.build(), rules);
  }

  private static Labels labels(Alert a) {
    List<String> names = new ArrayList<>();
    List<String> values = new ArrayList<>();
    names.add("alert");
    values.add(a.rule());
    for (Map.Entry<String, String> e : a.labels().entrySet()) {
      if (PrometheusNaming.isValidLabelName(e.getKey())
          && !AlertRule.RESERVED_LABELS.contains(e.getKey())) {
        names.add(e.getKey());
        values.add(e.getValue());
      }
    }
    return Labels.of(names, values);
  }
}
