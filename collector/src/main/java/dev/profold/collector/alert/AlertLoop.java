package dev.profold.collector.alert;

import dev.profold.collector.analysis.DerivedValue;
import dev.profold.collector.analysis.DerivedValues;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Evaluates the alert rules once per interval close and hands the results to the metrics and to
 * Alertmanager.
 *
 * <p><b>When.</b> The collector's windows are aligned to the unix epoch and one closes each time
 * the clock passes a multiple of {@code interval}. {@link #tick()} compares the injected clock's
 * interval number with the one of the last evaluation; when it moved, it first runs {@code
 * closeInterval} (the server makes the fold thread close due windows, so producers of derived
 * values have published that interval's values), then reads the {@link DerivedValues} and evaluates
 * at the boundary instant. A thread ({@code profold-alerts}) calls {@link #tick()} every {@code
 * min(1 s, interval / 10)}; tests call it directly with a moved clock. Boundaries skipped while the
 * thread was held up (a long pause, a clock step) count as one evaluation: the values only describe
 * the last closed interval. This loop runs beside the fold rather than inside it so that evaluation
 * and the Alertmanager hand-off never add to the fold thread's work, and so that alerts also
 * resolve when no data arrives at all.
 *
 * <p>Thread-safe: ticks are serialised, and so are evaluations and rule replacements.
 */
public final class AlertLoop implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(AlertLoop.class);

  /** Firing alerts sent to Alertmanager end this many intervals ahead unless sent again. */
  static final int VALID_INTERVALS = 4;

  private final long intervalNanos;
  private final Duration interval;
  private final InstantSource clock;
  private final DerivedValues source;
  private final BooleanSupplier closeInterval;
  private final AlertMetrics metrics;
  private final AlertEvaluator evaluator;
  private ScheduledExecutorService thread;
  private AlertNotifier notifier; // null: metrics only
  private final Object tickLock = new Object();
  private long lastInterval; // guarded by tickLock
  private long lastSent; // guarded by tickLock: the boundary of the last send to Alertmanager
  private boolean sourceFailing; // guarded by tickLock
  private boolean closeFailing; // guarded by tickLock
  private volatile List<Alert> current = List.of();

  /**
   * A loop over {@code rules}, not yet ticking.
   *
   * @param closeInterval run before each evaluation, outside the loop's lock; it returns once the
   *     interval that just ended is closed (bounded), true, or false when it could not be (the fold
   *     thread stopped, or did not get to it in time): then the values are not the interval's, and
   *     the evaluation is skipped, the alerts keeping their state
   */
  public AlertLoop(
      List<AlertRule> rules,
      Duration interval,
      InstantSource clock,
      DerivedValues source,
      BooleanSupplier closeInterval,
      AlertMetrics metrics) {
    this.interval = interval;
    this.intervalNanos = interval.toNanos();
    this.clock = clock;
    this.source = source;
    this.closeInterval = closeInterval;
    this.metrics = metrics;
    this.evaluator = new AlertEvaluator(rules);
    this.lastInterval = intervalOf(clock.instant());
    this.lastSent = lastInterval;
  }

  /** Starts ticking on a daemon thread; alerts go to {@code notifier} (null: metrics only). */
  public synchronized void start(AlertNotifier notifier) {
    notifyTo(notifier);
    thread =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "profold-alerts");
              t.setDaemon(true);
              return t;
            });
    long tickMillis = Math.max(1, Math.min(1000, interval.toMillis() / 10));
    Future<?> unused =
        thread.scheduleWithFixedDelay(
            this::tickSafely, tickMillis, tickMillis, TimeUnit.MILLISECONDS);
  }

  /** Sends alerts to {@code notifier} (started here) without ticking: for tests that tick. */
  synchronized void notifyTo(AlertNotifier notifier) {
    this.notifier = notifier;
    if (notifier != null) {
      notifier.start();
    }
  }

  private void tickSafely() {
    try {
      tick();
    } catch (RuntimeException | StackOverflowError e) {
      // An exception, or a stack overflow (a label pattern's regular expression run against a
      // very long path can overflow): thrown out of a scheduled task, either would end the
      // schedule for good, without a word.
      log.error("alert evaluation failed; it runs again at the next interval", e);
    }
  }

  /**
   * Evaluates the rules if an interval closed since the last evaluation (see the class comment).
   *
   * @return true when it evaluated
   */
  public boolean tick() {
    // Ticks are serialised as a whole, so a tick that finds the interval evaluated returns only
    // after that evaluation is complete.
    synchronized (tickLock) {
      long n = intervalOf(clock.instant());
      if (n <= lastInterval) {
        // The same interval, or an earlier one after the clock stepped back: that interval was
        // evaluated (and 'for' counted) already; the next evaluation is at the next boundary.
        return false;
      }
      if (!closeInterval.getAsBoolean()) {
        // The values would be those of an earlier interval: evaluated again, 'for' would count
        // them once more (pending alerts firing on stale data) and nothing could resolve.
        if (!closeFailing) {
          log.warn(
              "the interval could not be closed; alert rules are not evaluated until it can (the"
                  + " alerts keep their state)");
          closeFailing = true;
        }
        skipped(n, "interval_not_closed");
        return false; // lastInterval stays: the next tick tries this interval again
      }
      lastInterval = n;
      closeFailing = false;
      List<DerivedValue> values;
      try {
        values = source.current();
        sourceFailing = false;
      } catch (RuntimeException e) {
        // Evaluating on nothing would resolve every alert; keep the state and try next interval.
        if (!sourceFailing) {
          log.error("derived values unavailable; alert rules are not evaluated until they are", e);
          sourceFailing = true;
        }
        skipped(n, "values_unavailable");
        return false;
      }
      lastSent = n;
      evaluate(boundary(n), values);
      return true;
    }
  }

  private Instant boundary(long n) {
    return Instant.EPOCH.plusNanos(Math.multiplyExact(n, intervalNanos));
  }

  /**
   * The evaluation at boundary {@code n} is skipped: counted once per boundary, and the firing
   * alerts are sent again as they stand (with a new {@code endsAt}), so that Alertmanager does not
   * resolve them on its own while the collector has them firing. Called with tickLock held.
   */
  private void skipped(long n, String reason) {
    if (n <= lastSent) {
      return; // the boundary is counted and its alerts sent already
    }
    lastSent = n;
    metrics.skipped(reason);
    resendFiring(boundary(n));
  }

  /**
   * Sends the firing alerts again as they stand, under the lock of evaluations and rule
   * replacements: read apart from it, an alert whose rule a reload removed (and resolved) could be
   * sent as firing after its resolve notice, and stay firing at Alertmanager.
   */
  private synchronized void resendFiring(Instant at) {
    List<Alert> firing = current.stream().filter(a -> a.state() == AlertState.FIRING).toList();
    if (notifier != null && !firing.isEmpty()) {
      notifier.send(firing, List.of(), at.plus(validFor(interval)));
    }
  }

  private synchronized void evaluate(Instant at, List<DerivedValue> values) {
    AlertEvaluator.Evaluation e = evaluator.evaluate(at, values);
    current = e.active();
    metrics.evaluated();
    if (notifier != null) {
      notifier.send(e.firing(), e.resolved(), at.plus(validFor(interval)));
    }
  }

  /**
   * How long a firing alert sent now stays firing at Alertmanager unless sent again: {@link
   * #VALID_INTERVALS} intervals, of at least {@link #MIN_RESEND} each (as Prometheus does with its
   * resend delay), so that short intervals, a slow evaluation or a retried request do not let it
   * lapse between two sends.
   */
  static Duration validFor(Duration interval) {
    Duration each = interval.compareTo(MIN_RESEND) < 0 ? MIN_RESEND : interval;
    return each.multipliedBy(VALID_INTERVALS);
  }

  /** The shortest interval {@link #validFor} counts with. */
  static final Duration MIN_RESEND = Duration.ofMinutes(1);

  private long intervalOf(Instant t) {
    long nanos = Math.addExact(Math.multiplyExact(t.getEpochSecond(), 1_000_000_000L), t.getNano());
    return Math.floorDiv(nanos, intervalNanos);
  }

  /**
   * Replaces the rules (config reload): unchanged rules keep their alerts' state; the firing alerts
   * of removed or changed rules resolve now (and Alertmanager is told). The server calls it on the
   * fold thread, between building and swapping in a reload's schemes, so it must not wait for that
   * thread (it does not).
   *
   * @throws IllegalArgumentException when two rules share a name; nothing changed then
   */
  public synchronized AlertEvaluator.RulesChange replaceRules(List<AlertRule> rules) {
    AlertEvaluator.RulesChange c = evaluator.replaceRules(rules, clock.instant());
    current = evaluator.active();
    if (notifier != null && !c.resolved().isEmpty()) {
      notifier.send(List.of(), c.resolved(), null);
    }
    return c;
  }

  /** Pending and firing alerts as of the last evaluation. Any thread. */
  public List<Alert> alerts() {
    return current;
  }

  /** The rules, in config order. */
  public synchronized List<AlertRule> rules() {
    return evaluator.rules();
  }

  /** Stops ticking and the notifier. */
  @Override
  public synchronized void close() {
    if (thread != null) {
      thread.shutdownNow();
    }
    if (notifier != null) {
      notifier.close();
    }
  }
}
