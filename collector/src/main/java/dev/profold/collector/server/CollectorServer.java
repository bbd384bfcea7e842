package dev.profold.collector.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import dev.profold.collector.alert.AlertExposition;
import dev.profold.collector.alert.AlertLoop;
import dev.profold.collector.alert.AlertMetrics;
import dev.profold.collector.alert.AlertNotifier;
import dev.profold.collector.alert.AlertRule;
import dev.profold.collector.alert.AlertsHttpHandler;
import dev.profold.collector.analysis.AnalysisExposition;
import dev.profold.collector.analysis.DerivedValueSources;
import dev.profold.collector.analysis.DerivedValues;
import dev.profold.collector.analysis.RegionAnalysisValues;
import dev.profold.collector.analysis.ThreadActivityValues;
import dev.profold.collector.analysis.ThreadRegionImbalanceValues;
import dev.profold.collector.archive.ArchiveException;
import dev.profold.collector.archive.IntervalArchive;
import dev.profold.collector.config.CollectorConfig;
import dev.profold.collector.config.ConfigLoader;
import dev.profold.collector.config.ConfigReloader;
import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.fold.FoldConfig;
import dev.profold.collector.fold.FoldEngine;
import dev.profold.collector.fold.FoldWorker;
import dev.profold.collector.ingest.IngestService;
import dev.profold.collector.ingest.LenientDeltas;
import dev.profold.collector.ingest.OversizedMessageLogFilter;
import dev.profold.collector.ingest.OversizedMessages;
import dev.profold.collector.query.online.OnlineQuery;
import dev.profold.collector.query.online.QueryHttpHandler;
import dev.profold.collector.query.online.QueryService;
import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.telemetry.LeftOutSeriesLog;
import dev.profold.proto.v1.IngestGrpc;
import dev.profold.proto.v1.QueryGrpc;
import dev.profold.sinks.prometheus.PrometheusExposition;
import dev.profold.sinks.snapshot.ScrapeSnapshots;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.protobuf.services.HealthStatusManager;
import io.grpc.protobuf.services.ProtoReflectionServiceV1;
import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.exporter.httpserver.MetricsHandler;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.time.InstantSource;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The collector daemon: gRPC ingest and queries (with health and reflection services) and HTTP
 * (/metrics, /healthz, /readyz, /api/v1/query, /api/v1/alerts) around one {@link FoldWorker}, and
 * the alert rules evaluated at every interval close over the derived values ({@link AlertLoop}).
 *
 * <p>Lifecycle: {@link #start()} binds both ports; {@link #stop()} stops accepting deltas (clients
 * get UNAVAILABLE with a retry delay), applies everything received, closes the current interval,
 * ends open streams and stops both servers. Thread-safe.
 */
public final class CollectorServer {
  private static final Logger log = LoggerFactory.getLogger(CollectorServer.class);

  /** How long a config reload waits for the fold thread to take it. */
  static final Duration RELOAD_TIMEOUT = Duration.ofSeconds(10);

  private final CollectorConfig config;
  private final PrometheusMeterRegistry meters;
  private final FoldWorker worker;
  private final FoldEngine engine;
  private final CollectorMetrics metrics;
  private IntervalArchive archive; // null when off
  private final IngestService ingest;
  private final OnlineQuery queries;
  private final InstantSource clock;
  private final AlertLoop alerts;
  private final AlertMetrics alertMetrics;
  private final HealthStatusManager health = new HealthStatusManager();
  private Server grpc;
  private HttpServer http;
  private ExecutorService httpExecutor;
  private ThreadPoolExecutor callExecutor;
  private ThreadPoolExecutor controlExecutor;
  private final ScrapeSnapshots scrapes;
  private final ThreadPoolExecutor queryExecutor;
  private volatile boolean ready;
  private boolean stopped;

  /** A collector without derived values (alert rules then see none). */
  public CollectorServer(CollectorConfig config, InstantSource clock) {
    this(config, clock, DerivedValueSources.none());
  }

  /**
   * A collector whose alert rules evaluate {@code derived}, the values producers publish at each
   * interval close (several producers: {@link DerivedValueSources#concat}).
   */
  public CollectorServer(CollectorConfig config, InstantSource clock, DerivedValues derived) {
    this.config = config;
    PrometheusRegistry registry = new PrometheusRegistry();
    this.meters = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT, registry, Clock.SYSTEM);
    new JvmMemoryMetrics().bindTo(meters);
    CollectorMetrics metrics = new CollectorMetrics(meters);
    GlobalDictionary dictionary =
        new GlobalDictionary(config.dictionaryEntries(), config.streamIds());
    metrics.dictionary(dictionary);
    FoldEngine engine =
        new FoldEngine(
            new FoldConfig(
                config.interval().toNanos(),
                config.sourceTtlIntervals(),
                config.cardinalityLimit(),
                config.histogramMaxScale(),
                config.schemeDefinitions(),
                config.maxSources()),
            dictionary,
            clock,
            metrics);
    this.engine = engine;
    this.metrics = metrics;
    this.worker =
        new FoldWorker(
            engine,
            metrics,
            config.maxPendingBytes(),
            tickFor(config.interval(), config.schemeDefinitions()),
            Duration.ofSeconds(5));
    this.ingest = new IngestService(dictionary, worker, metrics, config.retryDelay());
    worker.onFailure(this::foldFailed);
    metrics.foldUp(() -> worker.failure() == null);
    this.queries = new OnlineQuery(worker, worker::failure, worker::snapshotAgeNanos);
    this.clock = clock;
    // Online queries over gRPC: at most two at a time, a few more waiting, the rest refused.
    this.queryExecutor =
        new ThreadPoolExecutor(
            2,
            2,
            30,
            TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(16),
            r -> {
              Thread t = new Thread(r, "profold-query");
              t.setDaemon(true);
              return t;
            });
    queryExecutor.allowCoreThreadTimeOut(true);
    // One snapshot per scrape for every collector of the exposition (see ScrapeSnapshots).
    this.scrapes = new ScrapeSnapshots(worker);
    registry.register(new PrometheusExposition(scrapes, new LeftOutSeriesLog(metrics)));
    this.alertMetrics = new AlertMetrics(meters);
    // What alert rules see: the given source and the collector's own producers.
    RegionAnalysisValues regionAnalysis = new RegionAnalysisValues(scrapes, config.analysis());
    registry.register(AnalysisExposition.regions(regionAnalysis));
    ThreadRegionImbalanceValues threadImbalance =
        new ThreadRegionImbalanceValues(scrapes, config.analysis());
    registry.register(AnalysisExposition.threads(threadImbalance));
    DerivedValues derivedValues =
        DerivedValueSources.concat(
            List.of(derived, new ThreadActivityValues(worker), regionAnalysis, threadImbalance));
    this.alerts =
        new AlertLoop(
            config.alerts().rules(),
            config.interval(),
            clock,
            derivedValues,
            this::closeDueIntervals,
            alertMetrics);
    registry.register(new AlertExposition(alerts::alerts, () -> alerts.rules().size()));
  }

  /**
   * How often the fold thread looks for windows to close: a tenth of the shortest interval, the
   * collector's or a scheme's, at most a second.
   */
  static Duration tickFor(Duration interval, List<SchemeDefinition> schemes) {
    Duration shortest = interval;
    for (SchemeDefinition s : schemes) {
      shortest = s.interval().compareTo(shortest) < 0 ? s.interval() : shortest;
    }
    Duration tick = shortest.dividedBy(10);
    return tick.compareTo(Duration.ofSeconds(1)) > 0 ? Duration.ofSeconds(1) : tick;
  }

  /** The fold thread's tick now. */
  Duration foldTick() {
    return worker.tickPeriod();
  }

  /**
   * Makes the fold thread close the windows that are due and waits for it (at most 5 s), so that an
   * alert evaluation right after an interval boundary sees that interval's derived values.
   *
   * @return false when they could not be closed: the fold thread stopped (shutdown, or a failure
   *     /healthz reports), closing them failed (logged by the fold thread, as its ticks' failures
   *     are) or it did not get to it in 5 s (the alert loop then skips the evaluation)
   */
  private boolean closeDueIntervals() {
    CompletableFuture<Boolean> done = new CompletableFuture<>();
    if (!worker.execute(() -> done.complete(worker.closeDueWindows()))) {
      return false;
    }
    try {
      return done.get(5, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      log.warn("fold thread did not close the interval within 5s; alert rules wait for it");
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (ExecutionException e) { // not thrown: the task completes the future normally
      return false;
    }
  }

  /**
   * Binds the ports and starts serving.
   *
   * @throws BindFailure when a port cannot be bound (its message says which, and what to change)
   * @throws IOException when the archive directory cannot be used ({@link ArchiveException})
   */
  public synchronized void start() throws IOException {
    if (stopped) { // a shutdown hook ran first: the process is exiting
      throw new IOException("the collector was stopped before it started");
    }
    if (config.archive().enabled()) {
      try {
        archive =
            new IntervalArchive(
                config.archive().directory(), Set.copyOf(config.archive().schemes()), meters);
      } catch (IntervalArchive.InUse e) {
        throw new ArchiveException(
            "cannot use the archive directory: "
                + e.getMessage()
                + "; stop that collector, or give each collector its own archive.directory",
            e);
      } catch (IOException e) {
        throw new ArchiveException(
            "cannot use archive directory "
                + config.archive().directory()
                + " ("
                + ioReason(e)
                + "); set archive.directory to a writable directory",
            e);
      }
      engine.onIntervalClosed(archive);
    }
    // The HTTP port first: a port in use there must not stop the collector after gRPC has
    // taken and acknowledged deltas.
    limitSlowHttpClients();
    try {
      http = HttpServer.create(new InetSocketAddress(config.listen(), config.httpPort()), 64);
    } catch (IOException e) {
      throw BindFailure.http(config.listen(), config.httpPort(), e);
    }
    worker.start();
    OversizedMessageLogFilter.install(); // OversizedMessages logs a line instead of a stack trace
    TransportLogFilter.install(); // an HTTP/1 request on the gRPC port: a line, not a stack trace
    callExecutor = GrpcTransport.callExecutor();
    controlExecutor = GrpcTransport.controlExecutor();
    ThreadPoolExecutor calls = callExecutor;
    metrics.callEventsQueued(() -> calls.getQueue().size());
    Server built =
        GrpcTransport.configure(
                NettyServerBuilder.forAddress(
                    new InetSocketAddress(config.listen(), config.grpcPort())))
            .executor(controlExecutor)
            .callExecutor(GrpcTransport.ingestOn(callExecutor))
            .maxInboundMessageSize(config.maxMessageBytes())
            .addStreamTracerFactory(new OversizedMessages(metrics, config.maxMessageBytes()))
            .addService(LenientDeltas.wrap(ingest.bindService()))
            .addService(new QueryService(queries, queryExecutor))
            .addService(health.getHealthService())
            .addService(ProtoReflectionServiceV1.newInstance())
            .build();
    try {
      grpc = built.start();
    } catch (IOException e) {
      built.shutdownNow();
      throw BindFailure.grpc(config.listen(), config.grpcPort(), e);
    }
    serving(io.grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING);
    if (worker.failure() != null) { // it failed while the server started
      foldFailed();
    }
    // A thread per request being read, handled or written: enough that scrapes, queries (at most
    // two at a time, QueryHttpHandler) and stalled clients leave threads for /healthz.
    ThreadPoolExecutor served =
        new ThreadPoolExecutor(
            HTTP_THREADS,
            HTTP_THREADS,
            1,
            TimeUnit.MINUTES,
            new java.util.concurrent.LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, "profold-http");
              t.setDaemon(true);
              return t;
            });
    served.allowCoreThreadTimeOut(true);
    httpExecutor = served;
    http.setExecutor(httpExecutor);
    for (Route r :
        List.of(
            Route.get(
                "/metrics",
                scrapeWithOneSnapshot(new MetricsHandler(meters.getPrometheusRegistry()))),
            Route.get("/healthz", this::healthz),
            Route.get(
                "/readyz",
                ex -> Route.text(ex, ready ? 200 : 503, ready ? "ready\n" : "not ready\n")),
            Route.get(AlertsHttpHandler.PATH, new AlertsHttpHandler(alerts::alerts)),
            Route.get("/", this::index))) {
      http.createContext(r.path(), sliced(r));
    }
    // Its own path and methods, with errors as JSON.
    http.createContext(QueryHttpHandler.PATH, sliced(new QueryHttpHandler(queries, clock)));
    http.start();
    alerts.start(
        config.alerts().alertmanager() == null
            ? null
            : new AlertNotifier(
                config.alerts().alertmanager(),
                URI.create(externalUrl() + AlertsHttpHandler.PATH),
                alertMetrics));
    ready = worker.failure() == null; // else it failed while the server started
    log.info(
        "profold collector ready: grpc={} http={} interval={}",
        hostPort(config.listen(), grpcPort()),
        metricsUrl(),
        ConfigLoader.written(config.interval()));
  }

  /**
   * Threads serving HTTP requests. The JDK's server reads a request's line and headers on one of
   * them, so a client that stalls there holds one for up to {@link #MAX_REQUEST_SECONDS}: with 8, a
   * few half-open connections (a load balancer's checks, a scanner) left none for a supervisor's
   * health probe. A thread idle for a minute ends, so a quiet collector holds few.
   */
  static final int HTTP_THREADS = 32;

  /** Seconds a client may take to send a request's line and headers, by default. */
  static final String MAX_REQUEST_SECONDS = "10";

  /** Seconds a client may take to read a response, by default. */
  static final String MAX_RESPONSE_SECONDS = "60";

  /**
   * Closes the connection of an HTTP client that sends its request too slowly or reads its response
   * too slowly, so that it cannot hold a serving thread for good: the JDK server reads a request on
   * a thread of the executor and, by default, waits forever. Its own properties, in seconds, unless
   * set on the command line ({@code -Dsun.net.httpserver.maxReqTime=...}); read once per JVM, when
   * its first server starts.
   */
  private static void limitSlowHttpClients() {
    if (System.getProperty("sun.net.httpserver.maxReqTime") == null) {
      System.setProperty("sun.net.httpserver.maxReqTime", MAX_REQUEST_SECONDS);
    }
    if (System.getProperty("sun.net.httpserver.maxRspTime") == null) {
      System.setProperty("sun.net.httpserver.maxRspTime", MAX_RESPONSE_SECONDS);
    }
  }

  /** {@code handler} with its response written in slices ({@link SlicedResponse}). */
  private static HttpHandler sliced(HttpHandler handler) {
    return ex -> handler.handle(new SlicedResponse(ex));
  }

  /** {@code scrape} with every exposition collector reading one snapshot ({@link #scrapes}). */
  private HttpHandler scrapeWithOneSnapshot(HttpHandler scrape) {
    return ex -> {
      ScrapeSnapshots.Scope scope = scrapes.scrape();
      try {
        scrape.handle(ex);
      } finally {
        scope.close();
      }
    };
  }

  private String externalUrl() {
    URI configured = config.alerts().externalUrl();
    if (configured != null) {
      String u = configured.toString();
      return u.endsWith("/") ? u.substring(0, u.length() - 1) : u;
    }
    return ownUrl(config.listen(), httpPort());
  }

  /**
   * {@code http://listen:port}: an IPv6 address in brackets, its zone's {@code %} written {@code
   * %25} as URIs require ({@code fe80::1%eth0} made {@code URI.create} fail the start).
   */
  static String ownUrl(String listen, int port) {
    String host = listen.contains(":") ? "[" + listen.replace("%", "%25") + "]" : listen;
    return "http://" + host + ":" + port;
  }

  /**
   * {@code listen:port} as gRPC targets write it: an IPv6 address in brackets ({@code [::1]:7763}).
   */
  public static String hostPort(String listen, int port) {
    return (listen.contains(":") ? "[" + listen + "]" : listen) + ":" + port;
  }

  /** The URL of this server's metrics, {@code http://listen:port/metrics}; once started. */
  public String metricsUrl() {
    return ownUrl(config.listen(), httpPort()) + "/metrics";
  }

  private void index(HttpExchange ex) throws IOException {
    Route.text(
        ex,
        200,
        "Profold collector\n\n"
            + "  /metrics  Prometheus exposition (aggregates and collector telemetry)\n"
            + "  /healthz  liveness\n"
            + "  /readyz   readiness\n"
            + "  /api/v1/query?q=QUERY&scheme=&from=&to=&format=  CalQL query (docs/calql.md)\n"
            + "  /api/v1/alerts  pending and firing alerts (docs/alerts.md)\n\n"
            + "gRPC ingest (profold.v1.Ingest) and queries (profold.v1.Query) on "
            + config.listen()
            + ":"
            + grpcPort()
            + "\n");
  }

  /**
   * What went wrong in {@code e}, without repeating the path: a file system error's message is
   * often the path alone ({@code /proc/x}), its reason ("Permission denied") or kind says why.
   */
  static String ioReason(IOException e) {
    if (e instanceof java.nio.file.FileSystemException f) {
      if (f.getReason() != null) {
        return f.getReason() + (f.getFile() != null ? ": " + f.getFile() : "");
      }
      String kind =
          e instanceof java.nio.file.AccessDeniedException
              ? "permission denied"
              : e instanceof java.nio.file.NoSuchFileException
                  ? "no such file or directory"
                  : e instanceof java.nio.file.FileAlreadyExistsException
                      ? "a file is in the way"
                      : e.getClass().getSimpleName();
      return kind + (f.getFile() != null ? ": " + f.getFile() : "");
    }
    return String.valueOf(e.getMessage());
  }

  /** The bound gRPC port. */
  public int grpcPort() {
    return grpc.getPort();
  }

  /** The bound HTTP port. */
  public int httpPort() {
    return http.getAddress().getPort();
  }

  /** The collector's own Micrometer registry (also the Prometheus scrape registry). */
  public PrometheusMeterRegistry meters() {
    return meters;
  }

  /** The collector's own telemetry. */
  public CollectorMetrics metrics() {
    return metrics;
  }

  /**
   * Replaces the schemes and the alert rules (config reload), both or neither: on the fold thread,
   * after what was received before, the new scheme list is built, the rules are replaced, and only
   * then is the scheme list swapped, so no delta lands between the two and a failure leaves both as
   * they were. Schemes and rules whose definition did not change keep their state; the firing
   * alerts of removed or changed rules resolve.
   *
   * @return the names of the schemes and of the rules that kept their state
   * @throws TimeoutException when the fold thread did not take the change within {@link
   *     #RELOAD_TIMEOUT}; it never will, and nothing changed
   * @throws IllegalArgumentException when the rules cannot be applied (two rules of one name);
   *     nothing changed
   */
  public ConfigReloader.Kept reconfigure(List<SchemeDefinition> schemes, List<AlertRule> rules)
      throws InterruptedException, TimeoutException {
    return reconfigure(schemes, rules, RELOAD_TIMEOUT);
  }

  /** {@link #reconfigure(List, List)} waiting at most {@code timeout} for the fold thread. */
  ConfigReloader.Kept reconfigure(
      List<SchemeDefinition> schemes, List<AlertRule> rules, Duration timeout)
      throws InterruptedException, TimeoutException {
    try {
      return worker.call(
          () -> {
            FoldEngine.Reconfiguration next = engine.prepare(schemes);
            List<String> rulesKept = alerts.replaceRules(rules).kept(); // throws: nothing changed
            engine.commit(next);
            worker.tickEvery(tickFor(config.interval(), schemes));
            return new ConfigReloader.Kept(next.kept(), rulesKept);
          },
          timeout);
    } catch (TimeoutException e) {
      TimeoutException t =
          new TimeoutException(
              "the fold thread did not take the new schemes and rules within "
                  + timeout.toSeconds()
                  + "s; nothing was changed");
      t.initCause(e);
      throw t;
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException r) {
        throw r;
      }
      throw new IllegalStateException(e.getCause());
    }
  }

  /** The fold worker (tests make its thread fail). */
  FoldWorker worker() {
    return worker;
  }

  /** The alert rules' loop (evaluations happen on its own thread). */
  public AlertLoop alerts() {
    return alerts;
  }

  /** 200 "ok" while the fold thread runs; 503 with why once it failed, so a supervisor restarts. */
  private void healthz(HttpExchange ex) throws IOException {
    String failure = worker.failure();
    if (failure == null) {
      Route.text(ex, 200, "ok\n");
    } else {
      Route.text(ex, 503, "fold thread failed (" + failure + "): restart the collector\n");
    }
  }

  /**
   * The fold thread died (FoldWorker's listener, on that thread): not ready, not serving, and every
   * Push stream ended with UNAVAILABLE so that clients keep their deltas for a restarted collector.
   */
  private void foldFailed() {
    ready = false;
    serving(io.grpc.health.v1.HealthCheckResponse.ServingStatus.NOT_SERVING);
    ingest.closeStreams();
  }

  /** The gRPC health of the server as a whole and of each of its services. */
  private void serving(io.grpc.health.v1.HealthCheckResponse.ServingStatus status) {
    for (String service : List.of("", IngestGrpc.SERVICE_NAME, QueryGrpc.SERVICE_NAME)) {
      health.setStatus(service, status);
    }
  }

  /** Clean shutdown; see the class comment. Safe to call more than once. */
  public synchronized void stop() throws InterruptedException {
    if (stopped) {
      return;
    }
    stopped = true;
    boolean wasRunning = ready; // else a start failed, and said why: nothing to announce
    ready = false;
    if (wasRunning) {
      log.info("shutting down: applying received deltas and closing the current interval");
    }
    health.enterTerminalState();
    alerts.close();
    // One budget for the drain and the archive's last writes (docs/configuration.md): a
    // supervisor's grace period (docker stop: 10 s) must cover the whole stop.
    long deadline = System.nanoTime() + config.shutdownTimeout().toNanos();
    worker.shutdown(config.shutdownTimeout());
    if (archive != null) {
      archive.close(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
    }
    ingest.closeStreams();
    if (grpc != null) { // null when the ports could not be bound
      grpc.shutdown();
      // Within what is left of the budget (at most 2 s): the streams were ended above, so this
      // only waits for calls still finishing their last messages.
      long left = Math.min(deadline - System.nanoTime(), TimeUnit.SECONDS.toNanos(2));
      if (left <= 0 || !grpc.awaitTermination(left, TimeUnit.NANOSECONDS)) {
        grpc.shutdownNow();
      }
    }
    if (callExecutor != null) { // after the server: gRPC runs its calls' last events on them
      callExecutor.shutdownNow();
      controlExecutor.shutdownNow();
    }
    if (http != null) {
      http.stop(0);
    }
    if (httpExecutor != null) {
      httpExecutor.shutdownNow();
    }
    queryExecutor.shutdownNow();
    meters.close();
    if (wasRunning) {
      log.info("stopped");
    }
  }

  /** Blocks until the gRPC server terminates. */
  public void awaitTermination() throws InterruptedException {
    grpc.awaitTermination();
  }
}
