package dev.profold.collector.alert;

import static dev.profold.collector.alert.Rules.rule;
import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.analysis.DerivedValue;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The state machine step by step, as a table: one row per evaluation. */
class AlertEvaluatorTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private static Instant at(int k) {
    return T0.plus(Duration.ofSeconds(10L * k));
  }

  private static DerivedValue sync(String service, double value) {
    return new DerivedValue(
        "thread_class_ratio",
        Map.of("service", service, "class", "sync"),
        value,
        Map.of("top_paths", "handle/cart.lock"));
  }

  @Test
  void pendingThenFiringThenResolvedAfterForEvaluations() {
    AlertEvaluator ev =
        new AlertEvaluator(
            List.of(
                rule(
                    "LockContention",
                    "thread_class_ratio{class=\"sync\"} > 0.2",
                    3,
                    Map.of("severity", "page"),
                    Map.of(
                        "summary",
                        "{{ $labels.service }}: {{ $value | percent }} in {{ $context.top_paths }}"))));
    // value per evaluation -> expected state of the checkout alert (null: inactive), resolved?
    Object[][] table = {
      {0.1, null, false},
      {0.3, AlertState.PENDING, false},
      {0.4, AlertState.PENDING, false},
      {0.5, AlertState.FIRING, false},
      {0.6, AlertState.FIRING, false},
      {0.2, null, true}, // not > 0.2: resolves
      {0.3, AlertState.PENDING, false},
      {0.1, null, false}, // pending -> inactive: nothing reported
    };
    for (int k = 0; k < table.length; k++) {
      AlertEvaluator.Evaluation e =
          ev.evaluate(at(k), List.of(sync("checkout", (double) table[k][0])));
      String row = "evaluation " + k;
      if (table[k][1] == null) {
        assertThat(e.active()).as(row).isEmpty();
      } else {
        assertThat(e.active())
            .as(row)
            .singleElement()
            .extracting(Alert::state)
            .isEqualTo(table[k][1]);
      }
      assertThat(e.resolved()).as(row).hasSize((boolean) table[k][2] ? 1 : 0);
    }
  }

  @Test
  void keepFiringForHoldsAFiringAlertThroughThatManyFailedEvaluations() {
    AlertEvaluator ev =
        new AlertEvaluator(
            List.of(
                Rules.rule(
                    "LockContention",
                    "thread_class_ratio{class=\"sync\"} > 0.2",
                    2,
                    2,
                    Map.of(),
                    Map.of("summary", "{{ $value | percent }}"))));
    // value per evaluation (NaN: no value) -> expected state, resolved?, keepFiringSince (index)
    Object[][] table = {
      {0.1, null, false, -1}, // a pending alert is not kept: nothing to keep yet
      {0.3, AlertState.PENDING, false, -1},
      {0.1, null, false, -1},
      {0.3, AlertState.PENDING, false, -1},
      {0.4, AlertState.FIRING, false, -1},
      {0.1, AlertState.FIRING, false, 5}, // kept: one of two
      {Double.NaN, AlertState.FIRING, false, 5}, // its value gone counts the same: two of two
      {0.5, AlertState.FIRING, false, -1}, // holds again: the count starts afresh
      {0.1, AlertState.FIRING, false, 8},
      {0.2, AlertState.FIRING, false, 8},
      {0.1, null, true, -1}, // the third in a row: resolved
    };
    for (int k = 0; k < table.length; k++) {
      double v = (double) table[k][0];
      AlertEvaluator.Evaluation e =
          ev.evaluate(at(k), Double.isNaN(v) ? List.of() : List.of(sync("checkout", v)));
      String row = "evaluation " + k;
      if (table[k][1] == null) {
        assertThat(e.active()).as(row).isEmpty();
      } else {
        Alert a = e.active().get(0);
        assertThat(e.active()).as(row).hasSize(1);
        assertThat(a.state()).as(row).isEqualTo(table[k][1]);
        int since = (int) table[k][3];
        assertThat(a.keepFiringSince()).as(row).isEqualTo(since < 0 ? null : at(since));
        if (a.state() == AlertState.FIRING) {
          assertThat(a.firingSince()).as(row).isEqualTo(at(4));
          assertThat(a.activeAt()).as(row).isEqualTo(at(3));
          // kept firing, it shows the last value that held
          assertThat(a.value()).as(row).isEqualTo(k < 7 ? 0.4 : 0.5);
        }
      }
      assertThat(e.resolved()).as(row).hasSize((boolean) table[k][2] ? 1 : 0);
    }
  }

  @Test
  void alertsCarryLabelsAnnotationsAndTimes() {
    AlertEvaluator ev =
        new AlertEvaluator(
            List.of(
                rule(
                    "LockContention",
                    "thread_class_ratio{class=\"sync\"} > 0.2",
                    2,
                    Map.of("severity", "page", "class", "lock"),
                    Map.of(
                        "summary",
                        "{{ $labels.service }}: {{ $value | percent }} in {{ $context.top_paths }}"))));
    ev.evaluate(at(0), List.of(sync("checkout", 0.25)));
    Alert firing = ev.evaluate(at(1), List.of(sync("checkout", 0.5))).firing().get(0);
    assertThat(firing.rule()).isEqualTo("LockContention");
    // The rule's labels win over the value's ("class").
    assertThat(firing.labels())
        .containsExactlyEntriesOf(
            new java.util.TreeMap<>(
                Map.of("class", "lock", "service", "checkout", "severity", "page")));
    assertThat(firing.annotations()).containsEntry("summary", "checkout: 50% in handle/cart.lock");
    assertThat(firing.value()).isEqualTo(0.5);
    assertThat(firing.activeAt()).isEqualTo(at(0));
    assertThat(firing.firingSince()).isEqualTo(at(1));
    assertThat(firing.resolvedAt()).isNull();

    Alert resolved = ev.evaluate(at(2), List.of()).resolved().get(0);
    assertThat(resolved.state()).isEqualTo(AlertState.RESOLVED);
    assertThat(resolved.resolvedAt()).isEqualTo(at(2));
    // The last values seen while it held.
    assertThat(resolved.value()).isEqualTo(0.5);
    assertThat(resolved.annotations())
        .containsEntry("summary", "checkout: 50% in handle/cart.lock");
  }

  @Test
  void ruleLabelsAreTemplatesRenderedOnceWhenTheAlertBecomesPending() {
    AlertEvaluator ev =
        new AlertEvaluator(
            List.of(
                rule(
                    "LockContention",
                    "thread_class_ratio > 0.2",
                    2,
                    Map.of(
                        "team", "{{ $labels.service }}-oncall", "first", "{{ $value | percent }}"),
                    Map.of())));
    ev.evaluate(at(0), List.of(sync("checkout", 0.25)));
    Alert firing = ev.evaluate(at(1), List.of(sync("checkout", 0.5))).firing().get(0);
    assertThat(firing.labels()).containsEntry("team", "checkout-oncall");
    // Rendered when pending began: the label set of one alert does not change while it lasts.
    assertThat(firing.labels()).containsEntry("first", "25%");
  }

  @Test
  void oneAlertPerLabelSetAndForOneFiresAtOnce() {
    AlertEvaluator ev = new AlertEvaluator(List.of(rule("Sync", "thread_class_ratio > 0.2", 1)));
    AlertEvaluator.Evaluation e =
        ev.evaluate(
            at(0),
            List.of(
                sync("checkout", 0.3),
                sync("search", 0.1),
                sync("inventory", 0.9),
                sync("checkout", 0.0), // same labels again: the first one counts
                DerivedValue.of("other_value", Map.of("service", "x"), 5)));
    assertThat(e.firing())
        .extracting(a -> a.labels().get("service"))
        .containsExactly("checkout", "inventory");
    // A value that vanished resolves its alert; the others keep firing.
    e = ev.evaluate(at(1), List.of(sync("inventory", 0.9)));
    assertThat(e.resolved()).extracting(a -> a.labels().get("service")).containsExactly("checkout");
    assertThat(e.firing()).extracting(a -> a.labels().get("service")).containsExactly("inventory");
    assertThat(e.firing().get(0).activeAt()).isEqualTo(at(0));
  }

  @Test
  void valuesWhoseAlertsWouldShareALabelSetMakeOneAlertTheFirst() {
    // The rule's label overrides the one label that tells the two values apart: two alerts with
    // one label set would be two equal series of profold_alert_firing, failing every scrape.
    AlertEvaluator ev =
        new AlertEvaluator(
            List.of(
                rule(
                    "Blocked",
                    "thread_class_ratio{class=~\"sync|wait\"} > 0.2",
                    1,
                    Map.of("class", "blocked"),
                    Map.of("summary", "{{ $value }}"))));
    DerivedValue wait =
        new DerivedValue(
            "thread_class_ratio", Map.of("service", "checkout", "class", "wait"), 0.4, Map.of());
    AlertEvaluator.Evaluation e = ev.evaluate(at(0), List.of(sync("checkout", 0.3), wait));
    assertThat(e.active()).hasSize(1);
    assertThat(e.active().get(0).labels())
        .containsExactlyInAnyOrderEntriesOf(Map.of("service", "checkout", "class", "blocked"));
    assertThat(e.active().get(0).value()).isEqualTo(0.3);
    // When the first one's condition ends, the label set is free for the other.
    e = ev.evaluate(at(1), List.of(sync("checkout", 0.1), wait));
    assertThat(e.resolved()).extracting(Alert::value).containsExactly(0.3);
    assertThat(e.firing()).extracting(Alert::value).containsExactly(0.4);
    // In the same evaluation whatever the values' order (the other first waited an evaluation).
    AlertEvaluator reversed = new AlertEvaluator(ev.rules());
    reversed.evaluate(at(0), List.of(sync("checkout", 0.3), wait));
    e = reversed.evaluate(at(1), List.of(wait, sync("checkout", 0.1)));
    assertThat(e.resolved()).extracting(Alert::value).containsExactly(0.3);
    assertThat(e.firing()).extracting(Alert::value).containsExactly(0.4);
  }

  @Test
  void reservedLabelsOfValuesDoNotLeakIntoAlerts() {
    AlertEvaluator ev = new AlertEvaluator(List.of(rule("R", "v > 0", 1)));
    Alert a =
        ev.evaluate(
                at(0),
                List.of(
                    DerivedValue.of(
                        "v",
                        Map.of(
                            "alertname",
                            "x",
                            "alert",
                            "y",
                            "k",
                            "z",
                            "bad-name",
                            "v",
                            "__meta",
                            "w"),
                        1)))
            .firing()
            .get(0);
    assertThat(a.labels()).containsOnlyKeys("k");
  }

  @Test
  void replacingRulesKeepsUnchangedOnesAndResolvesTheRest() {
    AlertRule keep = rule("Keep", "thread_class_ratio > 0.2", 1);
    AlertRule change = rule("Change", "thread_class_ratio > 0.2", 1);
    AlertRule drop = rule("Drop", "thread_class_ratio > 0.2", 1);
    AlertEvaluator ev = new AlertEvaluator(List.of(keep, change, drop));
    ev.evaluate(at(0), List.of(sync("checkout", 0.5)));

    AlertEvaluator.RulesChange c =
        ev.replaceRules(
            List.of(
                rule("New", "thread_class_ratio > 0.2", 2),
                rule("Change", "thread_class_ratio > 0.3", 1),
                rule("Keep", "thread_class_ratio > 0.2", 1)),
            at(1));
    assertThat(c.kept()).containsExactly("Keep");
    assertThat(c.started()).containsExactly("New", "Change");
    assertThat(c.removed()).containsExactly("Drop");
    assertThat(c.resolved()).extracting(Alert::rule).containsExactlyInAnyOrder("Change", "Drop");
    assertThat(c.resolved()).allSatisfy(a -> assertThat(a.resolvedAt()).isEqualTo(at(1)));
    // Kept: still firing since the first evaluation.
    assertThat(ev.active())
        .singleElement()
        .satisfies(
            a -> {
              assertThat(a.rule()).isEqualTo("Keep");
              assertThat(a.firingSince()).isEqualTo(at(0));
            });
    assertThat(ev.rules()).extracting(AlertRule::name).containsExactly("New", "Change", "Keep");
    AlertEvaluator.Evaluation e = ev.evaluate(at(2), List.of(sync("checkout", 0.5)));
    assertThat(e.active())
        .extracting(Alert::rule, Alert::state)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("New", AlertState.PENDING),
            org.assertj.core.groups.Tuple.tuple("Change", AlertState.FIRING),
            org.assertj.core.groups.Tuple.tuple("Keep", AlertState.FIRING));
  }

  @Test
  void aReloadChangingOnlyKeepFiringForKeepsTheAlertsUnderTheNewCount() {
    AlertEvaluator ev =
        new AlertEvaluator(
            List.of(Rules.rule("Flapping", "thread_class_ratio > 0.2", 1, 0, Map.of(), Map.of())));
    ev.evaluate(at(0), List.of(sync("checkout", 0.5)));

    AlertEvaluator.RulesChange c =
        ev.replaceRules(
            List.of(Rules.rule("Flapping", "thread_class_ratio > 0.2", 1, 2, Map.of(), Map.of())),
            at(1));

    // Before, the rule counted as changed: its alert resolved, and paged again at the next holds.
    assertThat(c.kept()).containsExactly("Flapping");
    assertThat(c.resolved()).isEmpty();
    assertThat(ev.rules().get(0).keepFiringFor()).isEqualTo(2);
    AlertEvaluator.Evaluation e = ev.evaluate(at(2), List.of(sync("checkout", 0.1)));
    assertThat(e.resolved()).as("kept under the new count").isEmpty();
    assertThat(e.firing())
        .singleElement()
        .satisfies(
            a -> {
              assertThat(a.firingSince()).isEqualTo(at(0));
              assertThat(a.keepFiringSince()).isEqualTo(at(2));
            });
  }

  @Test
  void anAlertKeptFiringIsCarriedOnByAnotherValueWithItsLabelsThatHolds() {
    for (boolean checkoutFirst : new boolean[] {true, false}) {
      // The rule's label hides what tells the two values apart: their alerts are one.
      AlertEvaluator ev =
          new AlertEvaluator(
              List.of(
                  Rules.rule(
                      "R", "thread_class_ratio > 0.2", 1, 1, Map.of("service", "any"), Map.of())));
      ev.evaluate(at(0), List.of(sync("checkout", 0.5)));
      double[][] steps = { // checkout, search (NaN: no value)
        {0.1, Double.NaN}, // checkout's alert kept: one of one
        {0.1, 0.6}, // its count runs out, but search holds: search carries the alert on
        {Double.NaN, 0.7},
        {0.1, 0.8},
      };
      for (int k = 0; k < steps.length; k++) {
        List<DerivedValue> values = new java.util.ArrayList<>();
        if (!Double.isNaN(steps[k][0])) {
          values.add(sync("checkout", steps[k][0]));
        }
        if (!Double.isNaN(steps[k][1])) {
          values.add(checkoutFirst ? values.size() : 0, sync("search", steps[k][1]));
        }
        AlertEvaluator.Evaluation e = ev.evaluate(at(k + 1), values);
        String row = "evaluation " + (k + 1) + (checkoutFirst ? ", checkout first" : "");
        // Before, search's values were left out while checkout's alert was kept, which then
        // resolved with the condition holding, and paged again after (in one order only, once
        // search could take it on).
        assertThat(e.resolved()).as(row).isEmpty();
        assertThat(e.firing()).as(row).hasSize(1);
        Alert a = e.firing().get(0);
        assertThat(a.firingSince()).as(row).isEqualTo(at(0));
        assertThat(a.labels()).as(row).containsEntry("service", "any");
        assertThat(a.keepFiringSince()).as(row).isEqualTo(k == 0 ? at(1) : null);
      }
      assertThat(ev.active().get(0).value()).isEqualTo(0.8);
    }
  }
}
