package dev.profold.client;

import dev.profold.client.internal.runtime.ProfoldRuntime;
import dev.profold.client.internal.runtime.StartFailure;
import java.lang.System.Logger.Level;
import java.time.Duration;

/**
 * The Profold API: time regions of code, attach attributes, record measurements; Profold sends
 * per-interval aggregates to a collector.
 *
 * <pre>{@code
 * Profold.start(ProfoldConfig.builder().service("checkout").build());   // or Profold.start()
 * try (Region r = Profold.region("db.query", Kind.IO);
 *      Scope s = Profold.with("tenant", tenantId)) {
 *   ...
 * }
 * }</pre>
 *
 * <p>Until {@link #start} succeeds every method is a no-op costing one volatile read. Nothing here
 * throws into the application or blocks it: an unreachable collector is retried in the background,
 * misuse is counted and logged once. Thread-safe.
 */
public final class Profold {
  /**
   * The API's logger, looked up at its first message: a field of {@code Profold} itself would set
   * up the process's logging (java.util.logging's manager) at the first call of any method, even in
   * a process that never starts Profold, and a manager set later would be ignored.
   */
  private static final class Log {
    static final System.Logger LOG = System.getLogger("dev.profold.client");

    private Log() {}
  }

  private static final Noop NOOP = new Noop();

  /** How long the shutdown hook waits, and {@link #flush} and {@link #shutdown} given null. */
  private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);

  private static volatile ProfoldRuntime runtime;

  /**
   * The shutdown hook while started, or null. Removed by an explicit {@link #shutdown}: a hook left
   * behind would keep this class, its class loader and everything it loaded (a web application's,
   * redeployed) until the JVM exits.
   */
  private static Thread hook;

  private Profold() {}

  /**
   * Starts Profold with {@code config}. A second start while running, or a disabled config, does
   * nothing and returns false. Registers a shutdown hook that sends the last interval.
   */
  public static synchronized boolean start(ProfoldConfig config) {
    if (config == null) {
      Log.LOG.log(Level.WARNING, "Profold.start(null): no configuration given; Profold stays off");
      return false;
    }
    if (runtime != null) {
      Log.LOG.log(Level.WARNING, "Profold is already started; start() ignored");
      return false;
    }
    if (!config.enabled()) {
      Log.LOG.log(Level.INFO, "Profold is disabled (" + config.disabledBy() + ")");
      return false;
    }
    ProfoldRuntime started;
    try {
      started = ProfoldRuntime.start(config);
    } catch (RuntimeException | LinkageError e) { // LinkageError: a dependency missing, say
      StartFailure.log(Log.LOG, "Profold", e);
      return false;
    }
    try {
      ensureShutdownHook();
    } catch (IllegalStateException | SecurityException e) {
      Log.LOG.log(
          Level.INFO,
          e instanceof IllegalStateException
              ? "Profold not started: the JVM is shutting down"
              : "Profold not started: a shutdown hook is not allowed (" + e + ")");
      started.discard();
      return false;
    }
    runtime = started;
    return true;
  }

  /**
   * Registers the shutdown hook of this start (with no context class loader, so that it pins none
   * but its own class's).
   *
   * @throws IllegalStateException when the JVM is shutting down
   * @throws SecurityException when a security manager refuses shutdown hooks
   */
  private static void ensureShutdownHook() {
    if (hook != null) {
      return;
    }
    Thread t = new Thread(() -> shutdown(DEFAULT_TIMEOUT), "profold-shutdown");
    t.setContextClassLoader(null);
    Runtime.getRuntime().addShutdownHook(t);
    hook = t;
  }

  /** Removes the shutdown hook, unless it is what runs now (or the JVM is exiting anyway). */
  private static void removeShutdownHook() {
    Thread t = hook;
    hook = null;
    if (t == null || t == Thread.currentThread()) {
      return;
    }
    try {
      Runtime.getRuntime().removeShutdownHook(t);
    } catch (IllegalStateException | SecurityException e) {
      // shutting down: the hook runs, finds nothing started, and returns
    }
  }

  /** The shutdown hook registered now, or null; for tests. */
  static synchronized Thread shutdownHook() {
    return hook;
  }

  /**
   * Starts Profold configured from the environment and system properties (see {@link
   * ProfoldConfig}). A bad setting is logged with what is wrong, and Profold stays off.
   */
  public static boolean start() {
    ProfoldConfig config;
    try {
      config = ProfoldConfig.fromEnvironment();
    } catch (IllegalArgumentException e) {
      Log.LOG.log(Level.WARNING, "Profold not started: " + e.getMessage());
      return false;
    } catch (RuntimeException e) { // a security manager refusing the environment, say
      Log.LOG.log(
          Level.WARNING,
          "Profold not started: cannot read its settings from the environment and system"
              + " properties ("
              + e
              + ")");
      return false;
    }
    return start(config);
  }

  /** True while started. */
  public static boolean isStarted() {
    return runtime != null;
  }

  static ProfoldRuntime runtime() {
    return runtime;
  }

  /** Opens a region of {@code kind} named {@code name} on the calling thread. */
  public static Region region(String name, Kind kind) {
    ProfoldRuntime r = runtime;
    return r == null ? NOOP : r.recorder().region(name, kind);
  }

  /**
   * Opens a region of {@code kind} named {@code name} that any thread may end, once: for work an
   * event loop starts and another thread or a callback completes. It records into the calling
   * thread's current context (its region path, with {@code name} appended, and its scoped
   * attributes) but stays off the thread's stack, so what the thread opens next does not nest under
   * it. Each call allocates a small handle; see {@link AsyncRegion}.
   *
   * <pre>{@code
   * AsyncRegion r = Profold.asyncRegion("backend.call", Kind.WAIT);
   * client.call(request).whenComplete((reply, error) -> r.end());
   * }</pre>
   */
  public static AsyncRegion asyncRegion(String name, Kind kind) {
    ProfoldRuntime r = runtime;
    return r == null ? NOOP : r.recorder().asyncRegion(name, kind);
  }

  /** Scopes a string attribute on the calling thread until the scope closes. */
  public static Scope with(String key, String value) {
    ProfoldRuntime r = runtime;
    return r == null ? NOOP : r.recorder().with(key, value);
  }

  /** Scopes an integer attribute. */
  public static Scope with(String key, long value) {
    ProfoldRuntime r = runtime;
    return r == null ? NOOP : r.recorder().with(key, value);
  }

  /** Scopes a floating-point attribute. */
  public static Scope with(String key, double value) {
    ProfoldRuntime r = runtime;
    return r == null ? NOOP : r.recorder().with(key, value);
  }

  /** Scopes a boolean attribute. */
  public static Scope with(String key, boolean value) {
    ProfoldRuntime r = runtime;
    return r == null ? NOOP : r.recorder().with(key, value);
  }

  /** Records a unitless value of measurement {@code name} in the current context. */
  public static void record(String name, double value) {
    ProfoldRuntime r = runtime;
    if (r != null) {
      r.recorder().record(r.recorder().metric(name, ""), value);
    }
  }

  /**
   * A measurement handle, resolved once (faster than {@link #record(String, double)} and with a
   * unit: a Prometheus base unit such as {@code seconds} or {@code bytes}, or empty).
   */
  public static Measure measure(String name, String unit) {
    return new Measure(name, unit); // a null unit is counted as misuse when first recorded
  }

  /**
   * Sends what was recorded so far now and waits up to {@code timeout} for the collector to
   * acknowledge everything; for batch jobs that end between intervals.
   *
   * @param timeout the limit of the wait; null means 5 s
   * @return true when everything was acknowledged in time and nothing was dropped or refused by the
   *     collector while it waited; false also when not started, or shut down meanwhile
   */
  public static boolean flush(Duration timeout) {
    ProfoldRuntime r = runtime;
    if (r == null) {
      return false;
    }
    try {
      return r.flush(timeout == null ? DEFAULT_TIMEOUT : timeout);
    } catch (RuntimeException e) {
      Log.LOG.log(Level.WARNING, "Profold: flush failed ({0})", e.toString());
      return false;
    }
  }

  /**
   * Runs the shutdown tasks, sends the last interval and waits for its acknowledgement, all within
   * {@code timeout}, then stops Profold and releases its threads.
   *
   * @param timeout the limit of the shutdown's wait for the last data (stopping the data sources
   *     and closing the connection may each take up to a second more); null means 5 s
   */
  public static synchronized void shutdown(Duration timeout) {
    ProfoldRuntime r = runtime;
    if (r != null) {
      runtime = null;
      removeShutdownHook();
      try {
        r.shutdown(timeout == null ? DEFAULT_TIMEOUT : timeout);
      } catch (RuntimeException e) {
        Log.LOG.log(Level.WARNING, "Profold: shutdown failed ({0})", e.toString());
      }
    }
  }

  /** The handle returned while Profold is not started. */
  private static final class Noop implements Region, AsyncRegion, Scope {
    @Override
    public void close() {}

    @Override
    public void end() {}

    @Override
    public Scope enter() {
      return this;
    }
  }
}
