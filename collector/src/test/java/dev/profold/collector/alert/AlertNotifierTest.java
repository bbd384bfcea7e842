package dev.profold.collector.alert;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The Alertmanager client and its sender thread against a fake Alertmanager. */
class AlertNotifierTest {
  private static final Instant T0 = Instant.parse("2026-03-01T12:00:00Z");
  private static final Duration WAIT = Duration.ofSeconds(20);
  private static final URI GENERATOR = URI.create("http://collector:7764/api/v1/alerts");

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final AlertMetrics metrics = new AlertMetrics(registry);
  private final List<Duration> slept = new CopyOnWriteArrayList<>();
  private FakeAlertmanager am;
  private AlertNotifier notifier;

  @AfterEach
  void close() {
    if (notifier != null) {
      notifier.close();
    }
    if (am != null) {
      am.close();
    }
  }

  private AlertNotifier start(int retries, AlertNotifier.Sleeper sleeper, int capacity) {
    notifier =
        new AlertNotifier(
            new AlertmanagerSpec(am.url(), Duration.ofSeconds(5), retries),
            GENERATOR,
            metrics,
            Duration.ofSeconds(1),
            sleeper,
            capacity);
    notifier.start();
    return notifier;
  }

  private AlertNotifier start(int retries) {
    return start(retries, slept::add, 100);
  }

  private static Alert firing(String service) {
    return new Alert(
        "LockContention",
        Map.of("service", service, "severity", "page"),
        Map.of("summary", service + " spends 30% in SYNC"),
        AlertState.FIRING,
        0.3,
        T0,
        T0.plusSeconds(20),
        null,
        null);
  }

  private static Alert resolved(String service, Instant at) {
    Alert f = firing(service);
    return new Alert(
        f.rule(),
        f.labels(),
        f.annotations(),
        AlertState.RESOLVED,
        0.3,
        T0,
        T0.plusSeconds(20),
        at,
        null);
  }

  private double count(String name, String result) {
    var c = registry.find(name);
    if (result != null) {
      c = c.tag("result", result);
    }
    return c.counter().count();
  }

  @Test
  void postsFiringAlertsThenTheResolveNotice() throws Exception {
    am = new FakeAlertmanager();
    start(3);
    notifier.send(List.of(firing("checkout")), List.of(), T0.plusSeconds(60));
    assertThat(notifier.awaitIdle(WAIT)).isTrue();
    notifier.send(List.of(), List.of(resolved("checkout", T0.plusSeconds(50))), null);
    assertThat(notifier.awaitIdle(WAIT)).isTrue();

    assertThat(am.paths()).containsExactly("POST /api/v2/alerts", "POST /api/v2/alerts");
    JsonNode first = am.requests().get(0);
    assertThat(first.isArray()).isTrue();
    assertThat(first).hasSize(1);
    JsonNode a = first.get(0);
    assertThat(a.get("labels").get("alertname").asText()).isEqualTo("LockContention");
    assertThat(a.get("labels").get("service").asText()).isEqualTo("checkout");
    assertThat(a.get("labels").get("severity").asText()).isEqualTo("page");
    assertThat(a.get("annotations").get("summary").asText())
        .isEqualTo("checkout spends 30% in SYNC");
    assertThat(a.get("startsAt").asText()).isEqualTo("2026-03-01T12:00:00Z");
    assertThat(a.get("endsAt").asText()).isEqualTo("2026-03-01T12:01:00Z");
    assertThat(a.get("generatorURL").asText()).isEqualTo(GENERATOR.toString());
    JsonNode r = am.requests().get(1).get(0);
    assertThat(r.get("labels").get("alertname").asText()).isEqualTo("LockContention");
    assertThat(r.get("endsAt").asText()).isEqualTo("2026-03-01T12:00:50Z");

    assertThat(count("profold.alert.notifications", "sent")).isEqualTo(2);
    assertThat(count("profold.alert.notification.errors", null)).isZero();
    assertThat(slept).isEmpty();
  }

  @Test
  void retriesServerErrorsWithExponentialBackoff() throws Exception {
    am = new FakeAlertmanager().answer(500, 503);
    start(3);
    notifier.send(List.of(firing("checkout"), firing("search")), List.of(), T0.plusSeconds(60));
    assertThat(notifier.awaitIdle(WAIT)).isTrue();

    assertThat(am.requests()).hasSize(3).allSatisfy(body -> assertThat(body).hasSize(2));
    assertThat(slept).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(2));
    assertThat(count("profold.alert.notifications", "sent")).isEqualTo(2);
    assertThat(count("profold.alert.notifications", "failed")).isZero();
    assertThat(count("profold.alert.notification.errors", null)).isEqualTo(2);
  }

  @Test
  void givesUpAfterTheRetriesAndRecoversAtTheNextBatch() throws Exception {
    am = new FakeAlertmanager().answer(500, 500, 500, 500);
    start(3);
    notifier.send(List.of(firing("checkout")), List.of(), T0.plusSeconds(60));
    assertThat(notifier.awaitIdle(WAIT)).isTrue();
    assertThat(am.requests()).hasSize(4);
    assertThat(slept)
        .containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(4));
    assertThat(count("profold.alert.notifications", "failed")).isEqualTo(1);
    assertThat(count("profold.alert.notification.errors", null)).isEqualTo(4);

    notifier.send(List.of(firing("checkout")), List.of(), T0.plusSeconds(70));
    assertThat(notifier.awaitIdle(WAIT)).isTrue();
    assertThat(am.requests()).hasSize(5);
    assertThat(count("profold.alert.notifications", "sent")).isEqualTo(1);
  }

  @Test
  void doesNotRetryAlertsAlertmanagerRefuses() throws Exception {
    am = new FakeAlertmanager().answer(400);
    start(3);
    notifier.send(List.of(firing("checkout")), List.of(), T0.plusSeconds(60));
    assertThat(notifier.awaitIdle(WAIT)).isTrue();
    assertThat(am.requests()).hasSize(1);
    assertThat(slept).isEmpty();
    assertThat(count("profold.alert.notifications", "failed")).isEqualTo(1);
  }

  @Test
  void anAlertResolvedBeforeItStartedIsSentEndingAtItsStart() throws Exception {
    // A clock stepped back: endsAt before startsAt, which Alertmanager refuses (400, not retried),
    // and the resolve was lost.
    am = new FakeAlertmanager();
    start(0);
    notifier.send(List.of(), List.of(resolved("checkout", T0.minusSeconds(30))), null);
    assertThat(notifier.awaitIdle(WAIT)).isTrue();
    JsonNode r = am.requests().get(0).get(0);
    assertThat(r.get("endsAt").asText()).isEqualTo(r.get("startsAt").asText());
  }

  @Test
  void aSenderThatFailsUnexpectedlyDropsThatBatchAndGoesOn() throws Exception {
    // Anything but a documented failure ended the sender thread: from then on every alert was
    // counted dropped, and nothing was said.
    am = new FakeAlertmanager().answer(503);
    start(
        1,
        d -> {
          throw new IllegalStateException("planted");
        },
        100);
    notifier.send(List.of(firing("checkout")), List.of(), T0.plusSeconds(60));
    assertThat(notifier.awaitIdle(WAIT)).isTrue();
    assertThat(count("profold.alert.notifications", "failed")).isEqualTo(1);
    am.answer(200);
    notifier.send(List.of(firing("payments")), List.of(), T0.plusSeconds(60));
    assertThat(notifier.awaitIdle(WAIT)).isTrue();
    assertThat(count("profold.alert.notifications", "sent")).isEqualTo(1);
  }

  @Test
  void twoAlertsWhoseLabelsReadAlikeAsTextAreTwoNotices() {
    // Both read {a=1, b=2} as the map's text, the key they had.
    Alert one =
        new Alert("R", Map.of("a", "1, b=2"), Map.of(), AlertState.FIRING, 1, T0, T0, null, null);
    Alert two =
        new Alert(
            "R", Map.of("a", "1", "b", "2"), Map.of(), AlertState.FIRING, 1, T0, T0, null, null);
    assertThat(one.labels().toString()).isEqualTo(two.labels().toString());
    assertThat(one.identity()).isNotEqualTo(two.identity());
  }

  @Test
  void countsConnectionFailures() throws Exception {
    am = new FakeAlertmanager();
    URI down = am.url();
    am.close(); // nothing listens there any more
    notifier =
        new AlertNotifier(
            new AlertmanagerSpec(down, Duration.ofSeconds(2), 1),
            GENERATOR,
            metrics,
            Duration.ofSeconds(1),
            slept::add,
            100);
    notifier.start();
    notifier.send(List.of(firing("checkout")), List.of(), T0.plusSeconds(60));
    assertThat(notifier.awaitIdle(WAIT)).isTrue();
    assertThat(count("profold.alert.notification.errors", null)).isEqualTo(2);
    assertThat(count("profold.alert.notifications", "failed")).isEqualTo(1);
    am = null;
  }

  @Test
  void aNewerNoticeReplacesTheOneWaitingForARetry() throws Exception {
    am = new FakeAlertmanager().answer(503);
    CountDownLatch inBackoff = new CountDownLatch(1);
    CountDownLatch proceed = new CountDownLatch(1);
    start(
        3,
        d -> {
          inBackoff.countDown();
          assertThat(proceed.await(20, TimeUnit.SECONDS)).isTrue();
        },
        100);
    notifier.send(List.of(firing("checkout")), List.of(), T0.plusSeconds(60));
    assertThat(inBackoff.await(20, TimeUnit.SECONDS)).isTrue();
    // While the first attempt waits for its retry, the alert resolves and another one fires.
    notifier.send(
        List.of(firing("search")),
        List.of(resolved("checkout", T0.plusSeconds(55))),
        T0.plusSeconds(70));
    proceed.countDown();
    assertThat(notifier.awaitIdle(WAIT)).isTrue();

    assertThat(am.requests()).hasSize(2);
    JsonNode retried = am.requests().get(1);
    // Batches keep the order alerts were last updated in: search, then checkout's resolve notice.
    assertThat(retried)
        .extracting(n -> n.get("labels").get("service").asText(), n -> n.get("endsAt").asText())
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("search", "2026-03-01T12:01:10Z"),
            org.assertj.core.groups.Tuple.tuple("checkout", "2026-03-01T12:00:55Z"));
  }

  @Test
  void aFullQueueDropsNewAlertsAndCountsThem() throws Exception {
    am = new FakeAlertmanager().answer(503);
    CountDownLatch inBackoff = new CountDownLatch(1);
    CountDownLatch proceed = new CountDownLatch(1);
    start(
        1,
        d -> {
          inBackoff.countDown();
          assertThat(proceed.await(20, TimeUnit.SECONDS)).isTrue();
        },
        2);
    notifier.send(List.of(firing("a")), List.of(), T0.plusSeconds(60));
    assertThat(inBackoff.await(20, TimeUnit.SECONDS)).isTrue();
    notifier.send(List.of(firing("b"), firing("c"), firing("d")), List.of(), T0.plusSeconds(60));
    // An alert already queued is updated in place, not dropped.
    notifier.send(List.of(firing("b")), List.of(), T0.plusSeconds(70));
    proceed.countDown();
    assertThat(notifier.awaitIdle(WAIT)).isTrue();
    assertThat(count("profold.alert.notifications", "dropped")).isEqualTo(1);
    assertThat(am.requests().get(1))
        .extracting(n -> n.get("labels").get("service").asText())
        .containsExactly("a", "c", "b");
  }

  @Test
  void backoffDoublesUpToThirtySeconds() {
    am = null;
    AlertNotifier n =
        new AlertNotifier(
            new AlertmanagerSpec(URI.create("http://127.0.0.1:1"), Duration.ofSeconds(1), 10),
            null,
            metrics,
            Duration.ofMillis(500),
            slept::add,
            10);
    assertThat(List.of(n.backoff(0), n.backoff(1), n.backoff(5), n.backoff(40)))
        .containsExactly(
            Duration.ofMillis(500),
            Duration.ofSeconds(1),
            Duration.ofSeconds(16),
            Duration.ofSeconds(30));
  }
}
