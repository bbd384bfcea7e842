package dev.profold.client.internal.agent;

import dev.profold.client.Profold;
import dev.profold.client.internal.jfr.JfrProfiler;
import dev.profold.client.internal.jfr.ThreadStarts;
import dev.profold.client.internal.record.ThreadGroups;
import dev.profold.client.internal.runtime.ProfoldRuntime;
import dev.profold.client.internal.runtime.StartFailure;
import java.lang.System.Logger.Level;
import java.lang.instrument.Instrumentation;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The {@code -javaagent} entry point: starts Profold (as {@link Profold#start} would, so manual
 * regions of the application feed the same tables) and streams JDK Flight Recorder events into it
 * ({@link JfrProfiler}).
 *
 * <p>{@code premain} returns at once: the start runs on a daemon thread ({@code
 * profold-agent-start}) and never throws into the JVM. Whatever keeps the agent from working (bad
 * options, JFR unavailable, an unexpected error) is logged once through {@code System.Logger} and
 * the application runs on; an unreachable collector is retried in the background by the exporter,
 * which logs why once. Thread-safe.
 */
public final class ProfoldAgent {
  /**
   * The logger, obtained at first use rather than when {@code premain} loads this class: getting it
   * sets up java.util.logging, which must wait until the application's {@code main} had a chance to
   * choose its LogManager ({@code java.util.logging.manager}).
   */
  private static final class Log {
    static final System.Logger LOG = System.getLogger("dev.profold.client");

    private Log() {}
  }

  /** A JFR profiler the agent started, and the runtime it feeds. */
  private record Running(ProfoldRuntime runtime, JfrProfiler profiler) {}

  /**
   * What the agent started last; set under the class lock, cleared by its runtime's shutdown tasks
   * (lock-free: they may run on another thread while {@link #stop} holds the class lock). Running
   * only while its runtime is the current one: once a shutdown has begun, its tasks close the
   * profiler, possibly after the shutdown returned.
   */
  private static final AtomicReference<Running> RUNNING = new AtomicReference<>();

  private ProfoldAgent() {}

  /** Called by the JVM for {@code -javaagent:profold-agent.jar[=options]}. */
  public static void premain(String agentArgs, Instrumentation inst) {
    // The JVM runs premain on its initial thread: known by its id from now on, renamed or not.
    ThreadGroups.initialThreadIs(Thread.currentThread().getId());
    launch(agentArgs, inst);
  }

  /** Called when the agent is loaded into a running JVM (attach API). */
  public static void agentmain(String agentArgs, Instrumentation inst) {
    launch(agentArgs, inst);
  }

  private static void launch(String agentArgs, Instrumentation inst) {
    try {
      Thread t =
          new Thread(
              () -> {
                start(agentArgs, inst);
                ProfoldRuntime r = ProfoldRuntime.current();
                if (r != null) {
                  r.ownThreadEnding(); // the start's own CPU time: overhead in the first delta
                }
              },
              "profold-agent-start");
      t.setDaemon(true);
      t.start();
    } catch (Throwable e) { // never into the JVM's agent loading
      StartFailure.log(Log.LOG, "Profold agent", e);
    }
  }

  /**
   * Starts Profold and JFR streaming with {@code options} (the {@code -javaagent} options string;
   * may be null) over the environment and system properties; for starting the agent from code.
   * Never throws: what went wrong is logged.
   *
   * @return the running JFR profiler, or null when JFR streaming did not start
   */
  public static JfrProfiler start(String options) {
    return start(options, null);
  }

  /**
   * As {@link #start(String)}; with {@code inst} (null: none) thread starts are also timed ({@link
   * ThreadStartTiming}).
   */
  static synchronized JfrProfiler start(String options, Instrumentation inst) {
    Running running = RUNNING.get();
    if (running != null && ProfoldRuntime.current() == running.runtime()) {
      Log.LOG.log(Level.WARNING, "Profold agent is already started; start ignored");
      return running.profiler();
    }
    try {
      AgentOptions opts;
      try {
        opts = AgentOptions.parse(options);
      } catch (IllegalArgumentException e) {
        Log.LOG.log(Level.WARNING, "Profold agent not started: " + e.getMessage());
        return null;
      }
      if (!opts.config().enabled()) {
        Log.LOG.log(Level.INFO, "Profold agent is disabled by configuration");
        return null;
      }
      Profold.start(opts.config()); // false when already started from code: feed that one
      ProfoldRuntime runtime = ProfoldRuntime.current();
      if (runtime == null) {
        return null; // Profold.start logged why
      }
      if (!opts.jfrEnabled()) {
        Log.LOG.log(Level.INFO, "Profold agent: JFR streaming is off (jfr=false)");
        return null;
      }
      JfrProfiler p;
      boolean timed;
      try {
        ThreadStarts starts = new ThreadStarts();
        p = JfrProfiler.start(runtime.recorder(), runtime.activity(), opts.jfr(), starts);
        timed =
            inst != null // the JFR events give the starts' call paths
                && opts.jfr().threads()
                && timeStarts(opts)
                && ThreadStartTiming.install(inst, runtime.activity(), starts);
      } catch (RuntimeException | LinkageError e) {
        Log.LOG.log(
            Level.WARNING,
            "Profold agent: JDK Flight Recorder is unavailable ("
                + e
                + "); no automatic profiling, manual regions still work");
        return null;
      }
      Running started = new Running(runtime, p);
      Runnable release =
          () -> {
            if (timed) { // first, so that starts no longer take the stopped runtime's lock
              ThreadStartTiming.stop(runtime.activity());
            }
            RUNNING.compareAndSet(started, null);
            p.close();
          };
      RUNNING.set(started);
      if (!runtime.beforeShutdown(release)) { // its shutdown tasks ran meanwhile, on another thread
        release.run();
        Log.LOG.log(
            Level.INFO, "Profold agent: Profold was shut down while the agent started; JFR is off");
        return null;
      }
      Log.LOG.log(
          Level.INFO,
          "Profold agent: JFR streaming (samples every {0} ms, {1} frames)",
          opts.jfr().samplePeriod().toMillis(),
          opts.jfr().maxDepth());
      return p;
    } catch (RuntimeException | LinkageError e) {
      StartFailure.log(Log.LOG, "Profold agent", e);
      return null;
    }
  }

  /** Whether the options let thread starts be timed; says once, at INFO, when they do not. */
  private static boolean timeStarts(AgentOptions opts) {
    if (!opts.timeThreadStarts()) {
      Log.LOG.log(
          Level.INFO,
          "Profold agent: thread starts are counted but not timed (threads.timing=false); their"
              + " time off CPU stays idle");
    }
    return opts.timeThreadStarts();
  }

  /** Stops JFR streaming and Profold (for tests and embedders). */
  public static synchronized void stop() {
    RUNNING.set(null);
    Profold.shutdown(java.time.Duration.ofSeconds(5));
  }
}
