package dev.profold.collector.alert;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.analysis.DerivedValue;
import dev.profold.collector.testing.MutableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** When the loop evaluates: once per interval boundary of the injected clock, never in between. */
class AlertLoopTest {
  private static final Duration INTERVAL = Duration.ofSeconds(10);
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:03Z"); // 3 s into an interval

  private final MutableClock clock = MutableClock.at(T0);
  private final AtomicReference<List<DerivedValue>> values = new AtomicReference<>(List.of());
  private final AtomicInteger closes = new AtomicInteger();
  private final java.util.concurrent.atomic.AtomicBoolean closing =
      new java.util.concurrent.atomic.AtomicBoolean(true);
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  private AlertLoop loop(AlertRule... rules) {
    return new AlertLoop(
        List.of(rules),
        INTERVAL,
        clock,
        values::get,
        () -> {
          closes.incrementAndGet();
          return closing.get();
        },
        new AlertMetrics(registry));
  }

  private static List<DerivedValue> ratio(double v) {
    return List.of(DerivedValue.of("ratio", Map.of("service", "checkout"), v));
  }

  @Test
  void evaluatesOncePerIntervalBoundaryAtTheBoundary() {
    AlertLoop loop = loop(Rules.rule("High", "ratio > 0.5", 2));
    values.set(ratio(0.9));
    assertThat(loop.tick()).isFalse(); // still in the interval it started in
    clock.advance(Duration.ofSeconds(6)); // 00:00:09
    assertThat(loop.tick()).isFalse();
    assertThat(closes).hasValue(0);

    clock.advance(Duration.ofSeconds(2)); // 00:00:11: the 00:00:10 boundary passed
    assertThat(loop.tick()).isTrue();
    assertThat(loop.tick()).isFalse();
    assertThat(closes).hasValue(1);
    assertThat(loop.alerts())
        .singleElement()
        .satisfies(
            a -> {
              assertThat(a.state()).isEqualTo(AlertState.PENDING);
              assertThat(a.activeAt()).isEqualTo(Instant.parse("2026-01-01T00:00:10Z"));
            });

    clock.advance(INTERVAL);
    assertThat(loop.tick()).isTrue();
    assertThat(loop.alerts())
        .singleElement()
        .satisfies(
            a -> {
              assertThat(a.state()).isEqualTo(AlertState.FIRING);
              assertThat(a.firingSince()).isEqualTo(Instant.parse("2026-01-01T00:00:20Z"));
            });
    assertThat(registry.find("profold.alert.evaluations").counter().count()).isEqualTo(2);
  }

  @Test
  void aClockSteppingBackDoesNotEvaluateAnIntervalAgain() {
    // 'for' counted the same interval twice, and evaluation time went backwards.
    AlertLoop loop = loop(Rules.rule("High", "ratio > 0.5", 3));
    values.set(ratio(0.9));
    clock.advance(Duration.ofSeconds(8)); // 00:00:11
    assertThat(loop.tick()).isTrue();
    clock.advance(Duration.ofMillis(-1300)); // 00:00:09.7: back across the boundary
    assertThat(loop.tick()).isFalse();
    clock.advance(Duration.ofMillis(500)); // 00:00:10.2: that boundary again
    assertThat(loop.tick()).isFalse();
    assertThat(loop.alerts())
        .singleElement()
        .extracting(Alert::state)
        .isEqualTo(AlertState.PENDING);
    clock.advance(INTERVAL); // 00:00:20.2
    assertThat(loop.tick()).isTrue();
    assertThat(loop.alerts())
        .singleElement()
        .extracting(Alert::state)
        .isEqualTo(AlertState.PENDING);
    assertThat(registry.find("profold.alert.evaluations").counter().count()).isEqualTo(2);
  }

  @Test
  void aFiringAlertStaysValidAtAlertmanagerForFourIntervalsOfAtLeastAMinute() {
    // At a 500 ms interval endsAt was 2 s ahead: alerts lapsed between two sends.
    assertThat(AlertLoop.validFor(Duration.ofMillis(500))).isEqualTo(Duration.ofMinutes(4));
    assertThat(AlertLoop.validFor(Duration.ofSeconds(10))).isEqualTo(Duration.ofMinutes(4));
    assertThat(AlertLoop.validFor(Duration.ofMinutes(2))).isEqualTo(Duration.ofMinutes(8));
  }

  @Test
  void anIntervalThatCouldNotBeClosedIsNotEvaluatedOnTheLastValues() {
    // A fold thread that stopped, or was too slow: the last interval's values were evaluated again,
    // and 'for' counted them once more (a pending alert fired on stale data).
    AlertLoop loop = loop(Rules.rule("High", "ratio > 0.5", 2));
    values.set(ratio(0.9));
    clock.advance(INTERVAL);
    assertThat(loop.tick()).isTrue();
    closing.set(false);
    clock.advance(INTERVAL);
    assertThat(loop.tick()).isFalse();
    assertThat(loop.alerts())
        .singleElement()
        .extracting(Alert::state)
        .isEqualTo(AlertState.PENDING);
    closing.set(true);
    // The next tick in the same interval tries again (the interval was lost for good: a slow fold
    // thread skipped it, and a sustained backlog stopped alerting).
    assertThat(loop.tick()).isTrue();
    assertThat(loop.alerts()).singleElement().extracting(Alert::state).isEqualTo(AlertState.FIRING);
    assertThat(loop.tick()).as("evaluated now").isFalse();
  }

  @Test
  void firingAlertsAreSentAgainOnceForABoundaryWhoseEvaluationIsSkipped() throws Exception {
    // A fold thread that could not close intervals for four minutes: the firing alerts were not
    // sent again, their endsAt passed, and Alertmanager resolved them while the collector still
    // had them firing.
    try (FakeAlertmanager am = new FakeAlertmanager()) {
      AlertNotifier notifier = notifier(am);
      AlertLoop loop = loop(Rules.rule("High", "ratio > 0.5", 1));
      loop.notifyTo(notifier);
      try {
        values.set(ratio(0.9));
        clock.advance(INTERVAL); // 00:00:13: evaluated at 00:00:10, firing
        assertThat(loop.tick()).isTrue();
        assertThat(notifier.awaitIdle(Duration.ofSeconds(20))).isTrue();

        closing.set(false);
        clock.advance(INTERVAL); // 00:00:23: the 00:00:20 boundary cannot be closed
        assertThat(loop.tick()).isFalse();
        assertThat(loop.tick()).isFalse(); // tried again: neither sent nor counted again
        assertThat(notifier.awaitIdle(Duration.ofSeconds(20))).isTrue();
        clock.advance(INTERVAL); // 00:00:33
        assertThat(loop.tick()).isFalse();
        assertThat(notifier.awaitIdle(Duration.ofSeconds(20))).isTrue();

        assertThat(am.requests()).hasSize(3);
        assertThat(am.requests().stream().map(r -> r.get(0).get("endsAt").asText()))
            .containsExactly(
                "2026-01-01T00:04:10Z", "2026-01-01T00:04:20Z", "2026-01-01T00:04:30Z");
        assertThat(am.requests().get(2).get(0).get("labels").get("alertname").asText())
            .isEqualTo("High");
        assertThat(skipped("interval_not_closed")).isEqualTo(2);
        assertThat(skipped("values_unavailable")).isZero();
        assertThat(registry.find("profold.alert.evaluations").counter().count()).isEqualTo(1);
        assertThat(loop.alerts())
            .singleElement()
            .extracting(Alert::state)
            .isEqualTo(AlertState.FIRING);
      } finally {
        loop.close();
      }
    }
  }

  @Test
  void anAlertKeptFiringIsSentFiringUntilItsCountRunsOutThenResolved() throws Exception {
    try (FakeAlertmanager am = new FakeAlertmanager()) {
      AlertNotifier notifier = notifier(am);
      AlertLoop loop = loop(Rules.rule("High", "ratio > 0.5", 1, 2, Map.of(), Map.of()));
      loop.notifyTo(notifier);
      try {
        values.set(ratio(0.9));
        clock.advance(INTERVAL); // evaluated at 00:00:10: firing
        assertThat(loop.tick()).isTrue();
        assertThat(notifier.awaitIdle(Duration.ofSeconds(20))).isTrue();
        values.set(ratio(0.1));
        clock.advance(INTERVAL); // 00:00:20: kept, one of two
        assertThat(loop.tick()).isTrue();
        assertThat(notifier.awaitIdle(Duration.ofSeconds(20))).isTrue();
        closing.set(false);
        clock.advance(INTERVAL); // 00:00:30 cannot be closed: sent again as it stands, not counted
        assertThat(loop.tick()).isFalse();
        assertThat(notifier.awaitIdle(Duration.ofSeconds(20))).isTrue();
        closing.set(true);
        clock.advance(INTERVAL); // 00:00:40: kept, two of two
        assertThat(loop.tick()).isTrue();
        assertThat(notifier.awaitIdle(Duration.ofSeconds(20))).isTrue();
        clock.advance(INTERVAL); // 00:00:50: resolved
        assertThat(loop.tick()).isTrue();
        assertThat(notifier.awaitIdle(Duration.ofSeconds(20))).isTrue();

        assertThat(am.requests().stream().map(r -> r.get(0).get("endsAt").asText()))
            .containsExactly(
                "2026-01-01T00:04:10Z",
                "2026-01-01T00:04:20Z",
                "2026-01-01T00:04:30Z",
                "2026-01-01T00:04:40Z",
                "2026-01-01T00:00:50Z");
        assertThat(am.requests())
            .allSatisfy(
                r ->
                    assertThat(r.get(0).get("startsAt").asText())
                        .isEqualTo("2026-01-01T00:00:10Z"));
        assertThat(loop.alerts()).isEmpty();
      } finally {
        loop.close();
      }
    }
  }

  /** A notifier to {@code am}: no retries, and a backoff that does not sleep. */
  private static AlertNotifier notifier(FakeAlertmanager am) {
    return new AlertNotifier(
        new AlertmanagerSpec(am.url(), Duration.ofSeconds(5), 0),
        null,
        new AlertMetrics(new SimpleMeterRegistry()),
        Duration.ofMillis(1),
        d -> {},
        100);
  }

  private double skipped(String reason) {
    return registry
        .find("profold.alert.evaluations.skipped")
        .tag("reason", reason)
        .counter()
        .count();
  }

  @Test
  void skippedBoundariesCountAsOneEvaluation() {
    AlertLoop loop = loop(Rules.rule("High", "ratio > 0.5", 2));
    values.set(ratio(0.9));
    clock.advance(INTERVAL.multipliedBy(5));
    assertThat(loop.tick()).isTrue();
    assertThat(loop.alerts())
        .singleElement()
        .extracting(Alert::state)
        .isEqualTo(AlertState.PENDING);
  }

  @Test
  void aFailingSourceKeepsTheStateInsteadOfResolving() {
    AtomicReference<RuntimeException> failure = new AtomicReference<>();
    AlertLoop loop =
        new AlertLoop(
            List.of(Rules.rule("High", "ratio > 0.5", 1)),
            INTERVAL,
            clock,
            () -> {
              if (failure.get() != null) {
                throw failure.get();
              }
              return ratio(0.9);
            },
            () -> true,
            new AlertMetrics(registry));
    clock.advance(INTERVAL);
    assertThat(loop.tick()).isTrue();
    assertThat(loop.alerts()).singleElement().extracting(Alert::state).isEqualTo(AlertState.FIRING);
    failure.set(new IllegalStateException("producer broke"));
    clock.advance(INTERVAL);
    assertThat(loop.tick()).isFalse();
    assertThat(loop.alerts()).singleElement().extracting(Alert::state).isEqualTo(AlertState.FIRING);
    assertThat(skipped("values_unavailable")).isEqualTo(1);
  }

  @Test
  void replacingRulesKeepsTheStateOfUnchangedOnes() {
    AlertLoop loop =
        loop(Rules.rule("High", "ratio > 0.5", 1), Rules.rule("Low", "ratio < 0.1", 1));
    values.set(ratio(0.9));
    clock.advance(INTERVAL);
    loop.tick();
    AlertEvaluator.RulesChange c = loop.replaceRules(List.of(Rules.rule("High", "ratio > 0.5", 1)));
    assertThat(c.kept()).containsExactly("High");
    assertThat(c.removed()).containsExactly("Low");
    assertThat(loop.alerts()).singleElement().extracting(Alert::rule).isEqualTo("High");
    assertThat(loop.rules()).extracting(AlertRule::name).containsExactly("High");
  }
}
