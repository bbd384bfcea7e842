package dev.profold.client.internal.runtime;

import dev.profold.client.ProfoldConfig;
import dev.profold.client.internal.activity.JvmThreads;
import dev.profold.client.internal.activity.LiveThread;
import dev.profold.client.internal.activity.ThreadActivity;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.export.Durations;
import dev.profold.client.internal.export.ExportReport;
import dev.profold.client.internal.export.Exporter;
import dev.profold.client.internal.export.ExporterConfig;
import dev.profold.client.internal.export.ExporterStats;
import dev.profold.client.internal.export.FirstConnection;
import dev.profold.client.internal.record.Recorder;
import dev.profold.client.internal.threads.AggregatedEntry;
import dev.profold.client.internal.threads.EntryEncoder;
import dev.profold.client.internal.threads.ThreadAggregationPlan;
import dev.profold.client.internal.threads.ThreadAggregators;
import dev.profold.client.internal.threads.ThreadSnapshot;
import dev.profold.proto.v1.ClientOverhead;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.IoObservation;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ThreadGroupActivity;
import io.grpc.ManagedChannel;
import java.lang.System.Logger.Level;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.LongSupplier;

/**
 * One started Profold: the {@link Recorder}, and a daemon thread ("profold-flush") that every
 * interval (aligned to the wall clock) collects the threads' tables, reduces them with the
 * configured thread aggregation, encodes them with the thread groups' time split ({@link
 * ThreadActivity}) and hands the delta to the {@link Exporter}.
 *
 * <p>Thread-safe. Nothing here throws into the application: a failing flush is logged once and the
 * schedule goes on (the values that interval had collected are lost, and reported as events dropped
 * in the next delta, which also carries the counts the failed one had taken: events dropped,
 * misuse, reconnects and merges). {@link #flush} and {@link #shutdown} wait at most their timeout
 * in all, whatever the collector or the {@linkplain #beforeShutdown shutdown tasks} do.
 */
public final class ProfoldRuntime {
  private static final System.Logger LOG = System.getLogger("dev.profold.client");
  private static final SecureRandom RANDOM = new SecureRandom();
  private static volatile ProfoldRuntime current;

  private final ProfoldConfig config;
  private final DeltaEncoder encoder;
  private final Recorder recorder;
  private final JvmThreads jvmThreads = new JvmThreads();
  private final ThreadActivity activity = new ThreadActivity(jvmThreads);
  private final ThreadAggregationPlan aggregation;
  private final EntryEncoder entries;

  /** The channel to the collector and its threads, named {@code profold-grpc-*}. */
  private final CollectorChannel grpc;

  private final ManagedChannel channel;
  private final Exporter exporter;
  private final ScheduledExecutorService flusher;
  private final List<Runnable> beforeShutdown = new CopyOnWriteArrayList<>();
  private static final long LEFTOVER_TASKS_WAIT_MILLIS = 1_000;
  private final java.util.concurrent.atomic.AtomicBoolean shutdownTasksClaimed =
      new java.util.concurrent.atomic.AtomicBoolean();
  private final Object tasksLock = new Object(); // claiming the tasks, and adding one
  private final LongSupplier nanoClock;
  private final LongSupplier wallClock; // unix epoch nanoseconds
  private final WaitListener waits;
  private final Object scheduleLock = new Object();
  private ScheduledFuture<?> schedule; // guarded by scheduleLock
  private boolean stopping; // guarded by scheduleLock
  private long intervalStart;
  private long activityStart; // the last activity close's end: a failed flush's was given back
  private final java.util.Map<Long, Long> ownCpu = new java.util.HashMap<>(); // at the last flush
  private long endedOwnCpu; // guarded by ownCpu: of own threads ended since the last flush
  private boolean flushFailureLogged;
  private long lastEventsLost;
  private long lostInFailedFlushes; // values of intervals whose flush failed, not yet reported

  // The counts a failed flush had taken for its delta, reported with the next one.
  private final java.util.Map<String, Long> misuseOfFailedFlushes = new java.util.TreeMap<>();
  private long reconnectsOfFailedFlushes;
  private long mergesOfFailedFlushes;

  /** Runs between building a delta and submitting it; tests plant a failure there. */
  Runnable beforeSubmit = () -> {};

  /** Hears the budget of each wait of a {@link #flush} or {@link #shutdown} (for tests). */
  interface WaitListener {
    WaitListener NONE = (step, budget) -> {};

    /** Called on the waiting thread just before step {@code step} waits at most {@code budget}. */
    void waiting(String step, Duration budget);
  }

  private ProfoldRuntime(
      ProfoldConfig config, LongSupplier nanoClock, WaitListener waits, LongSupplier wallClock) {
    this.config = config;
    this.nanoClock = nanoClock;
    this.wallClock = wallClock;
    this.waits = waits;
    long incarnation = RANDOM.nextLong();
    SourceIdentity.Builder id =
        SourceIdentity.newBuilder()
            .setService(config.service())
            .setInstance(config.instance())
            .setPid(ProcessHandle.current().pid())
            .setRuntimeVersion(
                atMost256(System.getProperty("java.vm.name", "Java") + " " + Runtime.version()))
            .setSdkVersion("profold-java/" + version())
            .setIncarnationId(incarnation == 0 ? 1 : incarnation)
            .setProcessStartUnixNanos(processStartNanos())
            .putAllLabels(config.labels());
    id.setHost(atMost256(HostName.local()));
    this.encoder =
        new DeltaEncoder(id.build(), ExporterConfig.dictionaryBytes(config.maxMessageBytes()));
    this.recorder = new Recorder(encoder, config.maxCellsPerThread(), config.maxContexts());
    recorder.onNewThread(activity::learnCurrentOsThread); // its wait for a CPU can be read
    this.aggregation =
        new ThreadAggregationPlan(config.threadAggregation(), config.threadAggregationByGroup());
    this.entries = new EntryEncoder(encoder, recorder.contexts());
    this.grpc = new CollectorChannel(config.endpoint());
    this.channel = grpc.channel();
    this.exporter =
        new Exporter(
            channel,
            encoder,
            ExporterConfig.defaults()
                .withMaxBufferBytes(config.maxBufferBytes())
                .withMaxMessageBytes(config.maxMessageBytes())
                .withBackoff(ProfoldConfig.MIN_BACKOFF, config.maxBackoff()));
    this.flusher =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "profold-flush");
              t.setDaemon(true);
              return t;
            });
  }

  /** Starts recording and the interval flush. */
  public static ProfoldRuntime start(ProfoldConfig config) {
    return start(config, System::nanoTime, WaitListener.NONE);
  }

  /** As {@link #start(ProfoldConfig)}, timing flush and shutdown on {@code nanoClock}. */
  static ProfoldRuntime start(ProfoldConfig config, LongSupplier nanoClock, WaitListener waits) {
    return start(config, nanoClock, waits, ProfoldRuntime::nowNanos);
  }

  /** As {@link #start(ProfoldConfig)}, with the wall clock (unix epoch nanoseconds) given too. */
  static ProfoldRuntime start(
      ProfoldConfig config, LongSupplier nanoClock, WaitListener waits, LongSupplier wallClock) {
    ProfoldRuntime r = new ProfoldRuntime(config, nanoClock, waits, wallClock);
    try {
      r.intervalStart = wallClock.getAsLong();
      r.activityStart = r.intervalStart;
      // What the threads spent before is not the first interval's.
      r.activity.baseline();
      r.scheduleNextFlush(false);
      FirstConnection.watch(
          r.channel,
          state ->
              LOG.log(
                  Level.WARNING,
                  "Profold: the collector at {0} cannot be reached (yet); what is recorded is"
                      + " buffered and sent once it can be, and the exporter logs the reason at its"
                      + " first attempt, at the end of the first interval",
                  config.endpoint()));
    } catch (RuntimeException | Error e) {
      // Built but not started: its channel, exporter and flush thread go, or they would run on
      // with nothing to stop them.
      r.discard();
      throw e;
    }
    LOG.log(
        Level.INFO,
        "Profold started: service={0} instance={1} collector={2} interval={3} aggregation={4}",
        config.service(),
        config.instance(),
        config.endpoint(),
        Durations.written(config.interval()),
        config.threadAggregation());
    if (config.service().equals(ProfoldConfig.DEFAULT_SERVICE)) {
      LOG.log(
          Level.WARNING,
          "Profold: no service name is set, so this process reports as {0}, with every other"
              + " process that sets none; set PROFOLD_SERVICE (or -Dprofold.service, or the agent's"
              + " service= option)",
          ProfoldConfig.DEFAULT_SERVICE);
    }
    current = r;
    return r;
  }

  /** The runtime started last and not shut down yet, or null (for the agent to feed). */
  public static ProfoldRuntime current() {
    return current;
  }

  /**
   * Runs {@code task} at {@link #shutdown}, before the last interval is sent (to stop a data source
   * so that what it recorded is in the last delta). Failures are logged and ignored. The tasks run
   * on the flush thread, within the shutdown's timeout: one still running when it is spent is
   * interrupted, and the last interval is not sent.
   *
   * @return false, and {@code task} will not run, when the shutdown tasks have run or are running
   *     already (a shutdown on another thread); the caller must then release what the task was to
   *     release
   */
  public boolean beforeShutdown(Runnable task) {
    synchronized (tasksLock) {
      if (shutdownTasksClaimed.get()) {
        return false;
      }
      beforeShutdown.add(task);
      return true;
    }
  }

  private static long nowNanos() {
    Instant t = Instant.now();
    return t.getEpochSecond() * 1_000_000_000L + t.getNano();
  }

  private static long processStartNanos() {
    return ProcessHandle.current()
        .info()
        .startInstant()
        .map(t -> t.getEpochSecond() * 1_000_000_000L + t.getNano())
        .orElseGet(ProfoldRuntime::nowNanos);
  }

  private static String version() {
    String v = ProfoldRuntime.class.getPackage().getImplementationVersion();
    return v == null ? "dev" : v;
  }

  public Recorder recorder() {
    return recorder;
  }

  /** Where the threads' time goes per interval (the agent reports blocking events to it). */
  public ThreadActivity activity() {
    return activity;
  }

  /**
   * Schedules the next interval flush at the next boundary of the wall clock (a multiple of the
   * interval since the epoch), read now: so the intervals stay aligned to the wall clock when a
   * flush ran late, the clock was stepped or the monotonic clock that the scheduler waits on runs
   * at another rate. After a flush ({@code afterFlush}), a boundary less than a tenth of the
   * interval away is skipped: a flush that fired just before its boundary would otherwise make an
   * interval of a few milliseconds.
   */
  private void scheduleNextFlush(boolean afterFlush) {
    synchronized (scheduleLock) {
      if (stopping) {
        return;
      }
      try {
        schedule =
            flusher.schedule(
                this::scheduledFlush,
                untilNextFlush(wallClock.getAsLong(), config.interval().toNanos(), afterFlush),
                TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException e) {
        // shut down
      }
    }
  }

  /** Nanoseconds from {@code nowNanos} to the next flush, for intervals of {@code period}. */
  private static long untilNextFlush(long nowNanos, long period, boolean afterFlush) {
    long until = period - Math.floorMod(nowNanos, period);
    return afterFlush && until < period / 10 ? until + period : until;
  }

  /** The scheduled flush: closes the interval, then schedules the next one, whatever happened. */
  private void scheduledFlush() {
    try {
      flushSafely(this::flushInterval);
    } finally {
      scheduleNextFlush(true);
    }
  }

  /**
   * Runs {@code flush}, catching whatever it throws, Errors included (logged once, without a stack
   * trace), so that the schedule goes on. That holds for a {@link VirtualMachineError} too:
   * rethrown here it would reach no handler and stop nothing but the profiling, while a later flush
   * may well succeed (an OutOfMemoryError caused by the application's peak, say). Runs on the flush
   * thread.
   */
  void flushSafely(Runnable flush) {
    try {
      flush.run();
    } catch (Throwable t) { // see above: nothing may end the schedule
      if (!flushFailureLogged) {
        flushFailureLogged = true;
        LOG.log(
            Level.WARNING,
            "Profold: a flush failed ({0}); the application is not affected and flushing goes on"
                + " (logged once)",
            t.toString());
      }
    }
  }

  /** {@code s} cut to the 256 characters the collector takes for a source's texts. */
  private static String atMost256(String s) {
    return s.length() <= 256 ? s : s.substring(0, 256);
  }

  /** Closes the current interval: collects, aggregates, encodes and submits one delta. */
  synchronized void flushInterval() {
    long end = wallClock.getAsLong();
    if (end <= activityStart) { // the clock stepped back: at least after the last close
      end = activityStart + 1;
    }
    long ioUnobserved = activity.takeIoUnobservedNanos(end - intervalStart); // -1: not reported
    try {
      submitInterval(end, ioUnobserved);
    } catch (RuntimeException | Error e) { // not submitted: the next delta reports it
      activity.giveBackIoUnobserved(ioUnobserved);
      throw e;
    }
  }

  /**
   * {@link #flushInterval} from the collection on, for the interval ending at {@code end} with
   * {@code ioUnobserved} (-1: not reported); returns only once the delta was submitted.
   */
  private void submitInterval(long end, long ioUnobserved) {
    // The activity first: its threads' CPU time of the interval values their CPU samples. Should
    // the rest fail, the activity is given back, to go with the next delta.
    List<ThreadGroupActivity> threadActivity = activity.close(activityStart, end);
    activityStart = end;
    List<ThreadSnapshot> threads;
    List<Entry> encoded;
    try {
      threads = recorder.collect(activity.intervalCpu());
    } catch (RuntimeException | Error e) {
      // The activity goes with the next delta, with the CPU time of the threads whose samples
      // were not taken yet (those the collection had taken are lost, counted as dropped).
      activity.giveBack(true, recorder.takeThreadsLost());
      throw e;
    }
    try {
      List<AggregatedEntry> reduced =
          aggregation.aggregate(threads, recorder.contexts(), recorder.timeMetric());
      encoded = entries.encode(reduced);
    } catch (RuntimeException | Error e) {
      // The tables were taken: their values are lost with this interval; say so in the next.
      lostInFailedFlushes += values(threads);
      activity.giveBack(false);
      throw e;
    }
    ExporterStats stats = exporter.stats();
    // The counts taken here belong to this delta. Should building or submitting it fail (an
    // OutOfMemoryError), they are kept for the next one, with this interval's values as lost.
    long eventsDropped = recorder.takeDropped() + newlyLost(stats) + takeLostInFailedFlushes();
    java.util.Map<String, Long> misuse = misuse();
    ExportReport export = exporter.takeReport();
    long reconnects = export.reconnects() + reconnectsOfFailedFlushes;
    long merges = export.deltasMerged() + mergesOfFailedFlushes;
    reconnectsOfFailedFlushes = 0;
    mergesOfFailedFlushes = 0;
    try {
      Delta.Builder delta =
          Delta.newBuilder()
              .setIntervalStartUnixNanos(intervalStart)
              .setIntervalEndUnixNanos(end)
              .setThreadAggregation(ThreadAggregators.toProto(config.threadAggregation()))
              .addAllEntries(encoded)
              .addAllThreadActivity(threadActivity)
              .setOverhead(
                  ClientOverhead.newBuilder()
                      .setCpuNanos(ownCpuNanos())
                      .setEventsDropped(eventsDropped)
                      .putAllMisuse(misuse)
                      .setBytesHeld(recorder.bytesHeld() + stats.bufferedBytes())
                      .setContexts(recorder.contextCount())
                      .setContextsLimit(config.maxContexts())
                      .setDictionaryBytes(encoder.dictionaryBytes())
                      .setDictionaryBytesLimit(encoder.maxDictionaryBytes())
                      .setExportReconnects(reconnects)
                      .setExportDeltasMerged(merges)
                      .setExportBufferedBytes(export.bufferedBytes())
                      .setExportBufferLimitBytes(export.bufferLimitBytes()));
      if (ioUnobserved >= 0) {
        delta.setIoObservation(IoObservation.newBuilder().setUnobservedNanos(ioUnobserved));
      }
      beforeSubmit.run();
      exporter.submit(delta);
      intervalStart = end;
    } catch (RuntimeException | Error e) {
      lostInFailedFlushes += eventsDropped + values(threads);
      activity.giveBack(false);
      misuse.forEach((kind, n) -> misuseOfFailedFlushes.merge(kind, n, Long::sum));
      reconnectsOfFailedFlushes += reconnects;
      mergesOfFailedFlushes += merges;
      throw e;
    }
  }

  /** Misuse counts of the interval, with those of deltas the exporter dropped since the last. */
  private java.util.Map<String, Long> misuse() {
    java.util.Map<String, Long> m = new java.util.TreeMap<>(recorder.takeMisuseCounts());
    misuseOfFailedFlushes.forEach((kind, n) -> m.merge(kind, n, Long::sum));
    misuseOfFailedFlushes.clear();
    exporter.takeLostMisuse().forEach((kind, n) -> m.merge(kind, n, Long::sum));
    encoder.takeLimitCounts().forEach((kind, n) -> m.merge(kind, n, Long::sum));
    return m;
  }

  /** Values recorded in {@code threads}. */
  private static long values(List<ThreadSnapshot> threads) {
    long n = 0;
    for (ThreadSnapshot t : threads) {
      for (var c : t.cells()) {
        n += c.state().count();
      }
    }
    return n;
  }

  private long takeLostInFailedFlushes() {
    long n = lostInFailedFlushes;
    lostInFailedFlushes = 0;
    return n;
  }

  /** Events in deltas the exporter dropped since the previous call. */
  private long newlyLost(ExporterStats stats) {
    long d = Math.max(0, stats.eventsLost() - lastEventsLost);
    lastEventsLost = stats.eventsLost();
    return d;
  }

  /**
   * CPU time of Profold's own threads ({@code profold-*}: the flush, exporter and gRPC threads, and
   * the agent's JFR consumer, which the thread groups leave out) since the previous call. Counted
   * per thread, so a thread that ended loses only what it spent since the previous call, and one
   * started since counts from its start.
   */
  private long ownCpuNanos() {
    java.util.Map<Long, Long> now = new java.util.HashMap<>();
    long d = 0;
    synchronized (ownCpu) {
      d += endedOwnCpu;
      endedOwnCpu = 0;
      for (LiveThread t : jvmThreads.own()) {
        if (t.cpuNanos() < 0) {
          continue; // ended meanwhile, or no CPU clock
        }
        d += Math.max(0, t.cpuNanos() - ownCpu.getOrDefault(t.id(), 0L));
        now.put(t.id(), t.cpuNanos());
      }
      ownCpu.clear();
      ownCpu.putAll(now);
    }
    return d;
  }

  /**
   * Counts the CPU time the calling thread, one of Profold's own, spent since a flush last read it
   * in the next delta's overhead: for a thread that ends before a flush could read it, such as the
   * agent's start thread (which loads gRPC, Netty and protobuf and sets up JFR). Call it last thing
   * on that thread. Any thread may call it.
   */
  public void ownThreadEnding() {
    java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
    if (!mx.isCurrentThreadCpuTimeSupported()) {
      return;
    }
    long id = Thread.currentThread().getId();
    synchronized (ownCpu) { // read under the lock: a flush between the read and here would count
      long cpu = mx.getCurrentThreadCpuTime();
      if (cpu < 0) {
        return; // the CPU clock is off
      }
      long seen = ownCpu.getOrDefault(id, 0L);
      endedOwnCpu += Math.max(0, cpu - seen);
      ownCpu.put(
          id, Math.max(seen, cpu)); // a flush still finding it alive counts only what follows
    }
  }

  /**
   * Sends what was recorded so far as a delta now and waits up to {@code timeout} for every delta
   * to be acknowledged. Never throws; false also after {@link #shutdown}.
   *
   * @param timeout the limit of the whole wait; one too long for nanoseconds means no limit
   * @return true when every delta was acknowledged in time and none was dropped or refused by the
   *     collector while this call waited (deltas lost before it do not count)
   */
  public boolean flush(Duration timeout) {
    try {
      long lostBefore = deltasLost();
      return sendLastAndAwait(Deadline.after(timeout, nanoClock), false).outcome() == Outcome.DONE
          && deltasLost() == lostBefore;
    } catch (RejectedExecutionException e) {
      return false; // shut down
    } catch (RuntimeException e) {
      LOG.log(
          Level.WARNING,
          "Profold: flush failed ({0}); the application is not affected",
          e.toString());
      return false;
    }
  }

  /** How {@link #sendLastAndAwait} ended. */
  private enum Outcome {
    /** Every delta was acknowledged. */
    DONE,
    /** The time ran out before the last interval was made a delta: it was not sent. */
    INTERVAL_LATE,
    /** The last interval was sent, but not every delta was acknowledged in time. */
    ACKS_LATE
  }

  /**
   * How {@link #sendLastAndAwait} ended, and why the last interval was not sent when it failed or
   * was interrupted rather than ran out of time (null otherwise).
   */
  private record Sent(Outcome outcome, String failure) {}

  /** How {@link #await} ended: done, or not, and why when not for want of time (else null). */
  private record Waited(boolean done, String failure) {
    static final Waited DONE = new Waited(true, null);
    static final Waited LATE = new Waited(false, null);
  }

  /**
   * On the flush thread, runs the shutdown tasks if {@code shutdownTasks}, then flushes the
   * interval; waits for both and then for every delta's ack, each wait getting what the earlier
   * ones left of {@code deadline}. An interval not flushed in time is cancelled if it has not
   * started, so that it is not sent after the caller gave up on it.
   *
   * @throws RejectedExecutionException once the flush thread is shut down
   */
  private Sent sendLastAndAwait(Deadline deadline, boolean shutdownTasks) {
    Future<?> tasks = shutdownTasks ? flusher.submit(this::runShutdownTasks) : null;
    Future<?> interval = flusher.submit(this::flushInterval);
    Waited w = tasks == null ? Waited.DONE : await("shutdown tasks", tasks, deadline);
    if (w.done()) {
      w = await("interval", interval, deadline);
    }
    if (!w.done()) {
      interval.cancel(false);
      return new Sent(Outcome.INTERVAL_LATE, w.failure());
    }
    Duration budget = deadline.remaining();
    waits.waiting("acks", budget);
    // At shutdown an unreachable collector is tried once more, and then not waited for.
    boolean acked = shutdownTasks ? exporter.flushLast(budget) : exporter.flush(budget);
    return new Sent(acked ? Outcome.DONE : Outcome.ACKS_LATE, null);
  }

  /** What a shutdown that did not end with every delta acknowledged lost, and why. */
  private String shutdownLoss(Sent sent, long tookNanos, Duration timeout) {
    long bound = TimeUnit.NANOSECONDS.toMillis(Durations.saturatedNanos(timeout));
    long took = TimeUnit.NANOSECONDS.toMillis(Math.max(0, tookNanos));
    long unacknowledged = exporter.unacknowledged();
    String why = exporter.stats().lastError().map(e -> "; the last export error: " + e).orElse("");
    if (sent.outcome() == Outcome.INTERVAL_LATE) {
      String failure = sent.failure();
      return "Profold: the last interval was not sent: "
          + (failure != null
              ? failure
              : "the shutdown's bound of " + bound + " ms ran out before it was ready")
          + "; what it recorded is lost"
          + (unacknowledged == 0
              ? ""
              : ", and so are "
                  + unacknowledged
                  + " earlier deltas not acknowledged (the collector may have applied those"
                  + " already sent)"
                  + why);
    }
    return "Profold: "
        + unacknowledged
        + " deltas (an interval each, or part of one) were not acknowledged when the shutdown"
        + " ended, "
        + took
        + " ms after it began (bound: "
        + bound
        + " ms); they are lost (the collector may have applied those already sent)"
        + why;
  }

  /**
   * Deltas the exporter counted dropped or the collector refused for good, so far. A retryable
   * refusal (RESOURCE_EXHAUSTED, UNAVAILABLE: a collector restarting, say) keeps the delta, which
   * is sent again; if it is lost after all, it is counted dropped.
   */
  private long deltasLost() {
    ExporterStats s = exporter.stats();
    long n = s.dropped();
    for (Map.Entry<String, Long> refused : s.rejected().entrySet()) {
      if (!Exporter.RETRYABLE_CODES.contains(refused.getKey())) {
        n += refused.getValue();
      }
    }
    return n;
  }

  /** Waits for {@code work} at most what is left of {@code deadline}. */
  private Waited await(String step, Future<?> work, Deadline deadline) {
    Duration budget = deadline.remaining();
    waits.waiting(step, budget);
    try {
      work.get(budget.toNanos(), TimeUnit.NANOSECONDS);
      return Waited.DONE;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Waited(false, "interrupted while waiting for the " + step);
    } catch (ExecutionException e) {
      return new Waited(false, "the " + step + " failed: " + e.getCause());
    } catch (CancellationException e) {
      return new Waited(false, "Profold was shut down before the " + step + " ran");
    } catch (TimeoutException e) {
      return Waited.LATE;
    }
  }

  /**
   * The shutdown tasks release what the sources hold (the JFR stream, the Thread.start hook). If
   * they are still queued behind a slow interval when the deadline has passed, they run on a daemon
   * thread of their own rather than be discarded with the flush thread's queue; shutdown waits at
   * most {@value #LEFTOVER_TASKS_WAIT_MILLIS} ms for them.
   */
  private void runLeftoverShutdownTasks() {
    if (shutdownTasksClaimed.get()) {
      return; // run, or running, on the flush thread
    }
    Thread t = new Thread(this::runShutdownTasks, "profold-shutdown-tasks");
    t.setDaemon(true);
    t.start();
    try {
      waits.waiting("leftover shutdown tasks", Duration.ofMillis(LEFTOVER_TASKS_WAIT_MILLIS));
      t.join(LEFTOVER_TASKS_WAIT_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Runs the shutdown tasks, once: whichever of the flush thread (normally) and the leftover-tasks
   * thread gets here first runs them; later calls do nothing.
   */
  private void runShutdownTasks() {
    synchronized (tasksLock) { // no task is added once they are claimed
      if (!shutdownTasksClaimed.compareAndSet(false, true)) {
        return;
      }
    }
    for (Runnable task : beforeShutdown) {
      try {
        task.run();
      } catch (RuntimeException e) {
        LOG.log(
            Level.WARNING,
            "Profold: a shutdown task failed ({0}); shutting down anyway",
            e.toString());
      }
    }
  }

  /** How long until the next scheduled flush (for tests). */
  long nextFlushDelayNanos() {
    synchronized (scheduleLock) {
      return schedule.getDelay(TimeUnit.NANOSECONDS);
    }
  }

  /** The exporter's counters. */
  public ExporterStats exporterStats() {
    return exporter.stats();
  }

  /** The settings the exporter runs with, from this runtime's configuration. */
  ExporterConfig exporterConfig() {
    return exporter.config();
  }

  /**
   * Runs the shutdown tasks, sends the last interval and waits for the acks, all within {@code
   * timeout}, then stops everything (shutdown tasks still queued behind a slow interval, and
   * closing the channel, may take up to a second more each). Never throws; whatever happens, the
   * shutdown tasks run, the exporter is closed and the threads and the channel are released.
   *
   * @param timeout the limit of the whole wait; one too long for nanoseconds means no limit
   */
  public void shutdown(Duration timeout) {
    shutdown(timeout, true);
  }

  /**
   * Stops at once without sending the last interval or saying it was not sent: for a runtime whose
   * start is given up (the JVM began to shut down meanwhile), which recorded nothing worth a word.
   */
  public void discard() {
    shutdown(Duration.ZERO, false);
  }

  private void shutdown(Duration timeout, boolean sayLoss) {
    if (current == this) {
      current = null;
    }
    try {
      synchronized (scheduleLock) {
        stopping = true;
        if (schedule != null) {
          schedule.cancel(false);
        }
      }
      long began = nanoClock.getAsLong();
      Sent sent = sendLastAndAwait(Deadline.after(timeout, nanoClock), true);
      if (sent.outcome() == Outcome.INTERVAL_LATE) {
        exporter.expectLateSubmit(); // the interval may be in the making: its loss is said here
      }
      if (sent.outcome() != Outcome.DONE && sayLoss) {
        ShutdownLog.warn(LOG, shutdownLoss(sent, nanoClock.getAsLong() - began, timeout));
      }
    } catch (RejectedExecutionException e) {
      // shut down already
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "Profold: shutdown failed ({0}); stopping anyway", e.toString());
    } finally {
      recorder.stop(); // the last interval is taken (or given up): nothing collects again
      runLeftoverShutdownTasks();
      exporter.close();
      for (Runnable queued : flusher.shutdownNow()) { // interrupts a shutdown task still running
        if (queued instanceof Future<?> f) {
          f.cancel(false); // a flush waiting for its interval ends now, not at its timeout
        }
      }
      channel.shutdownNow();
      grpc.close();
    }
  }
}
