package dev.profold.collector.alert;

import dev.profold.collector.alert.AlertmanagerClient.Notification;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers alerts to Alertmanager from its own daemon thread ({@code profold-alertmanager}), so the
 * evaluation never waits for the network.
 *
 * <p>{@link #send} merges an evaluation's notifications into a pending set keyed by alert (rule +
 * labels), the newest notification of an alert replacing an older one: a backlog can never hold
 * more than one entry per alert, so it is bounded by {@code capacity} alerts (beyond that new
 * alerts are dropped and counted) and a resolve notice is never overtaken by a stale firing one.
 * The thread takes the whole set and posts it as one batch; a failed batch is retried {@code
 * retries} times with exponential backoff (1, 2, 4, ... times the first delay, at most 30 s),
 * merging in what arrived meanwhile, then given up (counted; firing alerts are sent again at the
 * next evaluation anyway, and Alertmanager resolves alerts whose {@code endsAt} passes). Failures
 * are logged once per outage and counted per attempt.
 *
 * <p>Thread-safe.
 */
public final class AlertNotifier implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(AlertNotifier.class);
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);
  static final int DEFAULT_CAPACITY = 10_000;

  /** How the sender waits between attempts (tests pass one that records and returns). */
  @FunctionalInterface
  interface Sleeper {
    void sleep(Duration d) throws InterruptedException;
  }

  private final AlertmanagerSpec spec;
  private final AlertmanagerClient client;
  private final AlertMetrics metrics;
  private final Duration firstBackoff;
  private final Sleeper sleeper;
  private final int capacity;
  private final Thread thread;
  private final Map<String, Notification> pending = new LinkedHashMap<>();
  private boolean busy; // guarded by this: a batch is being delivered
  private boolean closed; // guarded by this
  private boolean failing; // sender thread only: in an outage
  private boolean broken; // sender thread only: batches fail unexpectedly

  /** A notifier for {@code spec}; alerts link back to {@code generatorUrl} (may be null). */
  public AlertNotifier(AlertmanagerSpec spec, URI generatorUrl, AlertMetrics metrics) {
    this(
        spec,
        generatorUrl,
        metrics,
        Duration.ofSeconds(1),
        d -> Thread.sleep(d.toMillis()),
        DEFAULT_CAPACITY);
  }

  AlertNotifier(
      AlertmanagerSpec spec,
      URI generatorUrl,
      AlertMetrics metrics,
      Duration firstBackoff,
      Sleeper sleeper,
      int capacity) {
    this.spec = spec;
    this.client = new AlertmanagerClient(spec, generatorUrl);
    this.metrics = metrics;
    this.firstBackoff = firstBackoff;
    this.sleeper = sleeper;
    this.capacity = capacity;
    this.thread = new Thread(this::run, "profold-alertmanager");
    this.thread.setDaemon(true);
  }

  public void start() {
    thread.start();
  }

  /**
   * Queues the firing alerts (ending at {@code firingEndsAt} unless sent again) and the resolved
   * ones (ending when they resolved). Never blocks on the network.
   */
  public void send(List<Alert> firing, List<Alert> resolved, Instant firingEndsAt) {
    int dropped = 0;
    synchronized (this) {
      if (closed) {
        return;
      }
      for (Alert a : firing) {
        dropped += offer(new Notification(a, firingEndsAt)) ? 0 : 1;
      }
      for (Alert a : resolved) {
        dropped += offer(new Notification(a, a.resolvedAt())) ? 0 : 1;
      }
      notifyAll();
    }
    if (dropped > 0) {
      metrics.dropped(dropped);
    }
  }

  private boolean offer(Notification n) {
    String key = n.alert().identity();
    if (!pending.containsKey(key) && pending.size() >= capacity) {
      return false;
    }
    pending.remove(key); // re-inserted last: batches keep the order alerts were last updated in
    pending.put(key, n);
    return true;
  }

  private synchronized Map<String, Notification> takeAll(boolean wait) throws InterruptedException {
    while (wait && pending.isEmpty() && !closed) {
      wait();
    }
    Map<String, Notification> out = new LinkedHashMap<>(pending);
    pending.clear();
    if (wait) {
      busy = !out.isEmpty();
    }
    notifyAll();
    return out;
  }

  private void run() {
    try {
      while (true) {
        Map<String, Notification> batch = takeAll(true);
        if (batch.isEmpty()) {
          return; // closed
        }
        try {
          deliver(batch);
        } catch (RuntimeException e) {
          // A bug, or an HTTP client failing otherwise than documented: this batch is lost, the
          // sender goes on (ended by it, every later alert was dropped without a word).
          metrics.failed(batch.size());
          if (!broken) { // once until a batch goes through again, not every 10 seconds
            broken = true;
            log.error(
                "could not send {} alerts to Alertmanager; they are dropped, and so are further"
                    + " batches that fail this way (counted in"
                    + " profold_alert_notifications_total{result=\"failed\"})",
                batch.size(),
                e);
          }
        }
        synchronized (this) {
          busy = false;
          notifyAll();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void deliver(Map<String, Notification> batch) throws InterruptedException {
    for (int attempt = 0; ; attempt++) {
      try {
        client.post(batch.values());
        metrics.sent(batch.size());
        broken = false;
        if (failing) {
          failing = false;
          log.info("Alertmanager {} accepts alerts again", spec.url());
        }
        return;
      } catch (AlertmanagerClient.Failure f) {
        metrics.requestFailed();
        if (!failing) {
          failing = true;
          log.warn(
              "cannot deliver alerts to Alertmanager ({}); retrying {} times per batch, further"
                  + " failures are counted in profold_alert_notification_errors_total",
              f.getMessage(),
              spec.retries());
        }
        if (!f.retryable || attempt >= spec.retries()) {
          metrics.failed(batch.size());
          return;
        }
      }
      sleeper.sleep(backoff(attempt));
      // What arrived meanwhile is newer: it replaces the batch's notice of the same alert.
      Map<String, Notification> newer = takeAll(false);
      for (Map.Entry<String, Notification> e : newer.entrySet()) {
        batch.remove(e.getKey());
        batch.put(e.getKey(), e.getValue());
      }
    }
  }

  /** The delay before retry number {@code attempt + 1}: first × 2^attempt, at most 30 s. */
  Duration backoff(int attempt) {
    Duration d = firstBackoff.multipliedBy(1L << Math.min(attempt, 20));
    return d.compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : d;
  }

  /**
   * Waits until everything queued so far was delivered or given up, at most {@code timeout}.
   *
   * @return true when idle
   */
  public synchronized boolean awaitIdle(Duration timeout) throws InterruptedException {
    long end = System.nanoTime() + timeout.toNanos();
    while (!pending.isEmpty() || busy) {
      long left = end - System.nanoTime();
      if (left <= 0) {
        return false;
      }
      wait(Math.max(1, left / 1_000_000));
    }
    return true;
  }

  /** Stops the thread; what is still queued is not sent. */
  @Override
  public void close() {
    synchronized (this) {
      closed = true;
      pending.clear();
      notifyAll();
    }
    thread.interrupt();
  }
}
