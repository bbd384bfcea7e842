package dev.profold.client.internal.jfr;

import com.sun.management.HotSpotDiagnosticMXBean;
import dev.profold.client.internal.activity.OsThreads;
import dev.profold.client.internal.activity.ThreadActivity;
import dev.profold.client.internal.record.Recorder;
import java.lang.System.Logger.Level;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import jdk.jfr.FlightRecorder;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingStream;

/**
 * Streams JDK Flight Recorder events of this JVM ({@link RecordingStream}) into a {@link Recorder}:
 * each event is read ({@link RecordedEvents}), mapped ({@link EventMapper}) and recorded on behalf
 * of its thread ({@link JfrSink}) on one daemon thread, {@code profold-jfr}.
 *
 * <p>JFR delivers events in batches about once a second, so an event lands in the interval in which
 * it is delivered, up to about a second after it happened. Thread-safe: {@link #close()} may be
 * called from any thread.
 */
public final class JfrProfiler implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger("dev.profold.client");

  private final RecordingStream stream;
  private final JfrSink sink;
  private final ActivityFeed activity;
  private final EventMapper mapper;
  private final RecordedEvents reader;
  private final Thread thread;
  private final CountDownLatch flushed = new CountDownLatch(1);
  private final AtomicBoolean failureLogged = new AtomicBoolean();
  private final AtomicLong events = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();
  private final Recorder recorder;
  private final ThreadStarts starts;
  private final JfrSettings settings;
  private final LongSupplier clock;
  private final IoEventGate ioGate; // null when I/O events are off
  private final long startedAt; // by clock
  private final ThreadActivity threadActivity;

  /**
   * OS thread ids by Java thread id, of the threads JFR's events were about (at most {@value
   * #MAX_OS_TIDS}; ended threads removed), for the gate's look at the threads; the consumer
   * thread's only. (The thread activity keeps its own, for the threads' run-queue time.)
   */
  private final Map<Long, Long> osTids = new HashMap<>();

  private static final int MAX_OS_TIDS = 4096;
  private final AtomicBoolean ioOffLogged = new AtomicBoolean();
  private volatile boolean closed;

  private final Queue<CountDownLatch> flushWaiters = new ConcurrentLinkedQueue<>();

  private JfrProfiler(
      Recorder recorder,
      ThreadActivity activity,
      JfrSettings settings,
      ThreadStarts starts,
      LongSupplier clock,
      BooleanSupplier threadsInIo) {
    if (!FlightRecorder.isAvailable()) {
      throw new IllegalStateException("JDK Flight Recorder is not available in this JVM");
    }
    this.recorder = recorder;
    this.settings = settings;
    this.clock = clock;
    this.startedAt = clock.getAsLong();
    this.threadActivity = activity;
    this.ioGate =
        settings.io()
            ? new IoEventGate(
                settings.ioQuiet().toNanos(),
                this::switchIoEvents,
                threadsInIo != null ? threadsInIo : () -> BlockingIo.anyApplicationThread(osTids),
                OsThreads::runQueueNanos,
                clock.getAsLong())
            : null;
    this.sink = new JfrSink(recorder);
    this.activity = new ActivityFeed(activity);
    this.starts = starts;
    this.mapper = new EventMapper(settings, starts);
    this.reader = new RecordedEvents(settings.maxDepth());
    this.stream = new RecordingStream();
    try {
      configure(settings);
      stream.onEvent(this::onEvent);
      stream.onFlush(this::onFlush);
      stream.onError(this::onError);
    } catch (RuntimeException | Error e) { // the stream holds a recording and its disk space
      stream.close();
      throw e;
    }
    this.thread = new Thread(this::run, "profold-jfr");
    thread.setDaemon(true);
  }

  /**
   * Starts streaming into {@code recorder}, reporting thread time to {@code activity}.
   *
   * @throws IllegalStateException or another unchecked exception when JFR is unavailable or refuses
   *     to start (the caller reports it and runs on without)
   */
  public static JfrProfiler start(
      Recorder recorder, ThreadActivity activity, JfrSettings settings) {
    return start(recorder, activity, settings, ThreadStarts.NONE);
  }

  /**
   * As {@link #start(Recorder, ThreadActivity, JfrSettings)}, with thread starts timed into {@code
   * starts} (by {@code Thread.start} instrumentation), which become the durations of the {@code
   * Thread.start} records.
   */
  public static JfrProfiler start(
      Recorder recorder, ThreadActivity activity, JfrSettings settings, ThreadStarts starts) {
    return start(recorder, activity, settings, starts, System::nanoTime, null);
  }

  /**
   * As above, with the time the I/O event gate ({@link IoEventGate}) goes by and its look at the
   * threads (for tests; null: the application's threads, {@link BlockingIo#anyApplicationThread}).
   */
  static JfrProfiler start(
      Recorder recorder,
      ThreadActivity activity,
      JfrSettings settings,
      ThreadStarts starts,
      LongSupplier clock,
      BooleanSupplier threadsInIo) {
    JfrProfiler p = new JfrProfiler(recorder, activity, settings, starts, clock, threadsInIo);
    activity.observeIo(p::ioUnobservedNanos);
    // The lock events report a block when it ends; a thread stuck on a lock counts meanwhile.
    // Parks count on the owned synchronizers of locks (ReentrantLock's, ReentrantReadWriteLock's:
    // NonfairSync, FairSync), not on a monitor waited on with Object.wait, whatever its name.
    activity.countStuckLocks(lockClass -> lockClass.endsWith("Sync"));
    p.thread.start();
    if (settings.cpu() && !exactSampleAttribution()) {
      LOG.log(
          Level.INFO,
          "Profold agent: CPU samples in inlined code are attributed to the nearest point the JIT"
              + " recorded, often the calling frame; for exact call paths and thread_mgmt time"
              + " start the JVM with -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints"
              + " (docs/agent.md)");
    }
    return p;
  }

  /**
   * True when the JIT records where every instruction of compiled code came from ({@code
   * DebugNonSafepoints}), so that a sample inside inlined code names its own method, not the
   * nearest safepoint's; false when it does not, or when that cannot be read.
   */
  static boolean exactSampleAttribution() {
    try {
      return Boolean.parseBoolean(
          ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
              .getVMOption("DebugNonSafepoints")
              .getValue());
    } catch (RuntimeException | LinkageError e) {
      return false; // not unlocked (the option is then not visible), or not a HotSpot JVM
    }
  }

  private void configure(JfrSettings s) {
    Duration lock = s.lockThreshold();
    Duration wait = s.waitThreshold();
    if (s.cpu()) {
      stream.enable(EventMapper.EXECUTION_SAMPLE).withPeriod(s.samplePeriod());
    }
    stream.enable(EventMapper.MONITOR_ENTER).withThreshold(lock).withStackTrace();
    stream.enable(EventMapper.MONITOR_WAIT).withThreshold(wait).withStackTrace();
    stream.enable(EventMapper.THREAD_SLEEP).withThreshold(wait).withStackTrace();
    stream
        .enable(EventMapper.THREAD_PARK)
        .withThreshold(lock.compareTo(wait) < 0 ? lock : wait)
        .withStackTrace();
    if (s.io()) {
      for (String io : EventMapper.IO_EVENTS) {
        stream.enable(io).withThreshold(s.ioThreshold()).withStackTrace();
      }
    }
    if (s.runtime()) {
      stream.enable(EventMapper.GARBAGE_COLLECTION);
      stream.enable(EventMapper.SAFEPOINT_BEGIN);
    }
    if (s.threads()) {
      stream.enable(EventMapper.THREAD_START).withStackTrace();
    }
    stream.enable(EventMapper.THREAD_END); // always: it frees the ended thread's table
    if (s.allocation()) {
      stream.enable(EventMapper.ALLOCATION_SAMPLE).with("throttle", "150/s").withStackTrace();
    }
    stream.setMaxAge(Duration.ofMinutes(1));
  }

  /** Enables or disables JFR's socket and file events on the running stream. */
  private void switchIoEvents(boolean on) {
    if (closed) {
      return; // a last batch after close(): the recording is gone, nothing to switch
    }
    for (String io : EventMapper.IO_EVENTS) {
      if (on) {
        stream.enable(io); // threshold and stack trace stay as configure() set them
      } else {
        stream.disable(io);
      }
    }
    LOG.log(Level.DEBUG, () -> "Profold agent: JFR's I/O events turned " + (on ? "on" : "off"));
    if (!on && ioOffLogged.compareAndSet(false, true)) {
      LOG.log(
          Level.INFO,
          "Profold agent: no socket or file read or write waited "
              + settings.ioThreshold().toMillis()
              + "ms or more for I/O in "
              + millisOrSeconds(settings.ioQuiet())
              + " (calls that took as long only by waiting for a CPU do not count); JFR's I/O"
              + " events are turned off, which spares every such call their cost, and turned on"
              + " again from time to time to look (io.quiet; docs/agent.md)");
    }
  }

  private static String millisOrSeconds(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
  }

  private void run() {
    Throwable failed = null;
    try {
      stream.start();
    } catch (RuntimeException | Error e) { // an Error too: not into the application's stderr
      failed = e;
    } finally {
      sink.close();
    }
    if (!closed) {
      ended(failed);
    }
  }

  /**
   * The stream ended while the agent runs: its recording was stopped (jcmd JFR.stop, JMC, the
   * application closing every recording) or the stream failed. From now on no event arrives, so the
   * thread activity stops reporting I/O as observed, and it is said once.
   */
  private void ended(Throwable cause) {
    long stoppedAt = clock.getAsLong();
    // No I/O event arrives any more: I/O waits go unobserved from now on, as with the events off.
    threadActivity.observeIo(() -> Math.max(0, clock.getAsLong() - stoppedAt));
    threadActivity.countStuckLocks(null);
    LOG.log(
        Level.WARNING,
        "Profold agent: JFR stopped delivering events"
            + (cause == null
                ? " (its recording was stopped: jcmd JFR.stop, JMC, or the application?)"
                : " (" + cause + ")")
            + "; from now on the agent sees no CPU samples, blocking or I/O events, and the time"
            + " they would have shown counts as idle. Restart the application to profile it"
            + " again");
  }

  private void onEvent(RecordedEvent e) {
    try {
      JfrEvent event = reader.read(e);
      if (event == null) {
        return;
      }
      Observation o = mapper.map(event);
      if (o != null && ioGate != null && EventMapper.IO_EVENTS.contains(event.type())) {
        ioGate.eventSeen(clock.getAsLong(), event.osThreadId(), event.durationNanos());
      }
      if (o != null) {
        sink.record(o);
        activity.accept(event, o);
        events.incrementAndGet();
      }
      if (EventMapper.THREAD_END.equals(event.type()) && event.threadId() >= 0) {
        sink.threadEnded(event.threadId());
        osTids.remove(event.threadId());
      } else if (event.osThreadId() > 0 && event.threadId() >= 0) {
        threadActivity.osThread(event.threadId(), event.osThreadId()); // for its cpu_wait
        if (ioGate != null) {
          if (osTids.size() >= MAX_OS_TIDS && !osTids.containsKey(event.threadId())) {
            osTids.clear(); // threads whose ends were missed: start again with the live ones
          }
          osTids.put(event.threadId(), event.osThreadId());
        }
      }
    } catch (RuntimeException ex) {
      recorder.eventsLost(1); // reported with the next delta as an event dropped
      onError(ex);
    }
  }

  /** After each batch JFR delivered (about once a second), on the consumer thread. */
  private void onFlush() {
    flushed.countDown();
    try {
      recorder.eventsLost(starts.takeTimingFailures()); // starts the listener failed to report
      sink.sweep();
      if (ioGate != null) {
        ioGate.tick(clock.getAsLong());
      }
    } catch (RuntimeException ex) {
      onError(ex);
    }
    flushWaiters.forEach(CountDownLatch::countDown);
    flushWaiters.removeIf(w -> w.getCount() == 0);
  }

  private void onError(Throwable t) {
    failures.incrementAndGet();
    if (failureLogged.compareAndSet(false, true)) {
      LOG.log(
          Level.WARNING,
          "Profold agent: reading a JFR event failed; the event is skipped (logged once; counted)",
          t);
    }
  }

  /**
   * Waits until JFR delivered its first batch (the stream is running), at most {@code timeout}.
   *
   * @return true when it did
   */
  public boolean awaitRunning(Duration timeout) throws InterruptedException {
    return flushed.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * A latch counted down at each of the next {@code n} batches JFR delivers: once it is open, every
   * event committed before this call was delivered (for tests).
   */
  CountDownLatch nextFlushes(int n) {
    CountDownLatch l = new CountDownLatch(n);
    flushWaiters.add(l);
    return l;
  }

  /** The ids of the threads the consumer keeps a table for now (for tests). */
  Set<Long> threadsWithTables() {
    return sink.threadIds();
  }

  /** Whether the stream still delivers events (its thread runs). */
  boolean streaming() {
    return thread.isAlive();
  }

  /** Whether JFR's socket and file events are on now ({@link IoEventGate}). */
  public boolean ioEventsOn() {
    return ioGate != null && ioGate.isOn();
  }

  /**
   * How long, since the start, I/O waits went unobserved while the other classes were: the time the
   * I/O events were off ({@link IoEventGate}), or all of it with {@code io=false}. Any thread.
   */
  long ioUnobservedNanos() {
    long now = clock.getAsLong();
    return ioGate == null ? now - startedAt : ioGate.offNanos(now);
  }

  /** Events recorded so far. */
  public long eventsRecorded() {
    return events.get();
  }

  /** Events that could not be read or recorded. */
  public long failures() {
    return failures.get();
  }

  /**
   * Stops the stream and waits (at most 2 s) for the consumer thread to finish its last event, so
   * that nothing is recorded after this returns.
   */
  @Override
  public void close() {
    closed = true;
    threadActivity.observeIo(null); // nothing is observed from now on: no longer reported
    threadActivity.countStuckLocks(null);
    stream.close();
    try {
      thread.join(2_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
