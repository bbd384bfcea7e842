package dev.profold.collector.cli;

import dev.profold.collector.archive.ArchiveException;
import dev.profold.collector.config.CollectorConfig;
import dev.profold.collector.config.ConfigException;
import dev.profold.collector.config.ConfigLoader;
import dev.profold.collector.config.ConfigReloader;
import dev.profold.collector.demo.DemoWorkload;
import dev.profold.collector.server.BindFailure;
import dev.profold.collector.server.CollectorServer;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code profold collector}: runs the daemon until SIGTERM / SIGINT. */
@Command(
    name = "collector",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    description = {
      "Runs the collector daemon: gRPC ingest of profile deltas, Prometheus /metrics.",
      "Settings: embedded defaults < --config file < command-line options."
    })
final class CollectorCommand implements Callable<Integer> {
  private static final Logger log = LoggerFactory.getLogger(CollectorCommand.class);

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--config", paramLabel = "FILE", description = "YAML config file.")
  Path config;

  @Option(
      names = "--listen",
      paramLabel = "ADDRESS",
      description = "Address to bind (default 127.0.0.1).")
  String listen;

  @Option(names = "--grpc-port", paramLabel = "PORT", description = "gRPC port (default 7763).")
  Integer grpcPort;

  @Option(names = "--http-port", paramLabel = "PORT", description = "HTTP port (default 7764).")
  Integer httpPort;

  @Option(
      names = "--interval",
      paramLabel = "DURATION",
      description = "Aggregation interval, e.g. 10s (default 10s).")
  String interval;

  @Option(
      names = "--demo",
      description = "Also run a synthetic multi-service workload pushing to this collector.")
  boolean demo;

  /** Makes the server (a test gives one that fails). */
  BiFunction<CollectorConfig, InstantSource, CollectorServer> servers = CollectorServer::new;

  /**
   * Says in one line that the start failed on a bug, and where its details are: the stack trace
   * goes to a file, for the bug report (the user sees no trace), or to the log when no file can be
   * written.
   *
   * @return the exit status, 1
   */
  private static int bug(PrintWriter err, RuntimeException e) {
    String details;
    try {
      Path file = Files.createTempFile("profold-start-failure-", ".txt");
      StringWriter trace = new StringWriter();
      e.printStackTrace(new PrintWriter(trace));
      Files.writeString(file, trace.toString());
      details = "its details are in " + file;
    } catch (IOException | RuntimeException notWritten) {
      log.error("start failed", e);
      details = "its details are in the log above";
    }
    err.println("profold: cannot start: " + e + " (a bug: please report it; " + details + ")");
    err.flush();
    return 1;
  }

  /** Stops what a failed start left running; the hook is not needed any more. */
  private static void stopAfterFailedStart(CollectorServer server, Thread hook)
      throws InterruptedException {
    server.stop();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException exiting) {
      // the JVM is shutting down already: the hook runs, and stop() is idempotent
    }
  }

  /**
   * Sends what gRPC and the JDK log through java.util.logging on to SLF4J (logback): one format on
   * stderr, and the levels of logback.xml (gRPC's INFO records, such as a failed connection with
   * its stack trace, are below its WARN) instead of JUL's own two-line records.
   */
  private static void routeJavaLoggingToLogback() {
    if (!SLF4JBridgeHandler.isInstalled()) {
      SLF4JBridgeHandler.removeHandlersForRootLogger();
      SLF4JBridgeHandler.install();
    }
  }

  /**
   * What a SIGHUP does: reload the config file once the collector runs; before, nothing (the JVM's
   * own SIGHUP handler would end the process, so ours is installed first thing).
   */
  private volatile Runnable onHangup =
      () ->
          log.info(
              "SIGHUP received while the collector starts: the configuration read at start"
                  + " applies; send it again once the collector listens to reload");

  @Override
  public Integer call() throws IOException, InterruptedException {
    boolean hup = HangupSignal.install(() -> onHangup.run());
    routeJavaLoggingToLogback();
    PrintWriter err = spec.commandLine().getErr();
    CollectorConfig c;
    try {
      c = resolve();
    } catch (ConfigException e) {
      err.println("profold: " + e.getMessage());
      err.flush();
      return 2;
    }
    CollectorServer server;
    try {
      server = servers.apply(c, InstantSource.system());
    } catch (RuntimeException e) { // a bug
      return bug(err, e);
    }
    // The hook is there before the server starts: a SIGTERM at any time stops it cleanly (stop()
    // waits for a start under way, and a start after a stop refuses).
    AtomicReference<DemoWorkload> demoToStop = new AtomicReference<>();
    CountDownLatch stopped = new CountDownLatch(1);
    Thread hook =
        new Thread(
            () -> {
              try {
                DemoWorkload d = demoToStop.get();
                if (d != null) {
                  d.close();
                }
                server.stop();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              } finally {
                stopped.countDown();
              }
            },
            "profold-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    try {
      server.start();
    } catch (ArchiveException e) {
      err.println("profold: " + e.getMessage());
      err.flush();
      stopAfterFailedStart(server, hook);
      return 2;
    } catch (BindFailure e) {
      err.println("profold: " + e.getMessage());
      err.flush();
      stopAfterFailedStart(server, hook);
      return 1;
    } catch (IOException e) {
      err.println("profold: cannot start: " + e.getMessage());
      err.flush();
      stopAfterFailedStart(server, hook);
      return 1;
    } catch (RuntimeException e) { // a bug
      int status = bug(err, e);
      stopAfterFailedStart(server, hook);
      return status;
    }
    PrintWriter out = spec.commandLine().getOut();
    // An IPv6 address in brackets: the line is meant to be matched, and its URL opened.
    out.printf(
        "profold collector listening: grpc=%s http=%s%n",
        CollectorServer.hostPort(c.listen(), server.grpcPort()), server.metricsUrl());
    if (demo) {
      DemoWorkload workload = new DemoWorkload(c.listen(), server.grpcPort(), c.interval());
      demoToStop.set(workload);
      workload.start();
      out.printf(
          "demo workload running: series appear at %s within %s, the"
              + " last-interval gauges once an interval has closed (within %s)%n",
          server.metricsUrl(),
          ConfigLoader.written(c.interval()),
          ConfigLoader.written(c.interval().multipliedBy(3)));
    }
    if (config != null) {
      watchConfig(server, c, out, hup);
    } else {
      // Without a file there is nothing to reload; a SIGHUP must not end the daemon.
      onHangup =
          () ->
              log.warn(
                  "SIGHUP received, but the collector runs without --config: nothing to reload");
    }
    out.flush();
    stopped.await();
    return 0;
  }

  /**
   * Reloads the config file on SIGHUP and when its content changes (checked every 2 s, on a daemon
   * thread), applying its schemes and alert rules; see {@link ConfigReloader}. {@code hup}: whether
   * this process can handle SIGHUP at all (not under {@code nohup}).
   */
  private void watchConfig(
      CollectorServer server, CollectorConfig running, PrintWriter out, boolean hup) {
    ConfigReloader reloader =
        new ConfigReloader(
            config,
            running,
            this::withCommandLine,
            server::reconfigure,
            server.metrics(),
            loadedContent);
    ScheduledExecutorService watcher =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "profold-config-watch");
              t.setDaemon(true);
              return t;
            });
    Runnable poll =
        () -> {
          try {
            reloader.reloadIfChanged();
          } catch (RuntimeException | StackOverflowError e) {
            // Thrown out of the scheduled task, either would end the watch for good.
            log.error("config watch failed; it goes on", e);
          }
        };
    Future<?> unused = watcher.scheduleWithFixedDelay(poll, 2, 2, TimeUnit.SECONDS);
    onHangup =
        () ->
            watcher.execute(
                () -> {
                  try {
                    reloader.reload();
                  } catch (RuntimeException | StackOverflowError e) {
                    // execute() would keep it where nobody looks: say it.
                    log.error("config reload on SIGHUP failed; the running configuration stays", e);
                  }
                });
    out.printf(
        "config %s: reloaded on %sfile change (schemes and alert rules apply live)%n",
        config, hup ? "SIGHUP or " : "");
  }

  private CollectorConfig resolve() throws ConfigException {
    if (config != null) {
      try {
        loadedContent = Files.readAllBytes(config); // the reloader's baseline
      } catch (java.io.IOException | RuntimeException e) {
        loadedContent = null; // the load below says what is wrong with the file
      }
    }
    CollectorConfig c = config == null ? CollectorConfig.defaults() : ConfigLoader.load(config);
    CollectorConfig withFlags = withCommandLine(c);
    ConfigLoader.checkRuleIntervals(
        withFlags, config == null ? "the command line" : config.getFileName().toString());
    if (config != null) {
      sayOverridden(c, withFlags);
    }
    return withFlags;
  }

  /**
   * Logs each setting of the file that a command-line option replaces, once at start (they win on
   * every reload too): a port changed in the file with no effect would puzzle whoever changed it.
   */
  private void sayOverridden(CollectorConfig file, CollectorConfig used) {
    List<String> said = new ArrayList<>();
    if (!file.listen().equals(used.listen())) {
      said.add("--listen " + used.listen() + " over listen " + file.listen());
    }
    if (file.grpcPort() != used.grpcPort()) {
      said.add("--grpc-port " + used.grpcPort() + " over grpc_port " + file.grpcPort());
    }
    if (file.httpPort() != used.httpPort()) {
      said.add("--http-port " + used.httpPort() + " over http_port " + file.httpPort());
    }
    if (!file.interval().equals(used.interval())) {
      said.add(
          "--interval "
              + ConfigLoader.written(used.interval())
              + " over interval "
              + ConfigLoader.written(file.interval()));
    }
    if (!said.isEmpty()) {
      log.info("command-line options win over {}: {}", config, String.join(", ", said));
    }
  }

  /** The config file's content as read just before it was loaded at start, or null. */
  private byte[] loadedContent;

  /** {@code c} with the command-line options applied (they win over the file). */
  private CollectorConfig withCommandLine(CollectorConfig c) throws ConfigException {
    Duration d = null;
    if (interval != null) {
      d = ConfigLoader.parseDuration(interval);
      if (d == null
          || d.compareTo(Duration.ofMillis(100)) < 0
          || d.compareTo(ConfigLoader.MAX_DURATION) > 0) {
        throw new ConfigException(
            "--interval: '"
                + interval
                + "' is not a duration of 100ms.."
                + ConfigLoader.MAX_DURATION.toHours()
                + "h (e.g. 10s, 1m)");
      }
    }
    return c.withOverrides(
        listen,
        grpcPort == null ? null : checkPort("--grpc-port", grpcPort),
        httpPort == null ? null : checkPort("--http-port", httpPort),
        d);
  }

  private static int checkPort(String option, int port) throws ConfigException {
    if (port < 0 || port > 65535) {
      throw new ConfigException(option + ": " + port + " is not a port (0..65535; 0 = any free)");
    }
    return port;
  }
}
