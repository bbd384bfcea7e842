package dev.profold.collector.fold;

import dev.profold.collector.ingest.DecodedDelta;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.telemetry.RejectReason;
import dev.profold.sinks.snapshot.CollectorSnapshot;
import dev.profold.sinks.snapshot.SnapshotSource;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a {@link FoldEngine} on its own thread ("profold-fold"): receiving threads submit decoded
 * deltas and ordered tasks, the fold thread applies them in arrival order, ticks the engine's
 * clock, and builds snapshots when asked. Receiving threads never wait on the fold: when the bytes
 * waiting exceed {@code maxPendingBytes}, {@link #submit} refuses and the caller answers
 * RESOURCE_EXHAUSTED. Scrapes never take a lock ingest needs: they ask the fold thread for a
 * snapshot and reuse the last one while nothing changed.
 *
 * <p>At shutdown every delta {@link #submit} accepted is folded and answered: a submit racing with
 * the fold thread's last drain either lands before it or takes its delta back and refuses it.
 *
 * <p>A task or tick that throws a {@link RuntimeException} is logged and the fold goes on. An
 * {@link Error} (out of memory, a stack overflow) ends the fold thread: the worker then refuses
 * every delta (so clients keep them), {@link #failure} says why, and the listener given to {@link
 * #onFailure} runs once, so that the collector can report itself unhealthy and be restarted. The
 * deltas queued then are neither folded nor acknowledged; their clients resend them.
 *
 * <p>Thread-safe.
 */
public final class FoldWorker implements SnapshotSource {
  private static final Logger log = LoggerFactory.getLogger(FoldWorker.class);
  private static final Runnable STOP = new Stop();

  /** The sentinel that ends the fold loop. */
  private static final class Stop implements Runnable {
    @Override
    public void run() {}
  }

  private final FoldEngine engine;
  private final CollectorMetrics metrics;
  private final long maxPendingBytes;
  private volatile long tickMillis;
  private final Duration snapshotTimeout;
  private final BlockingQueue<Runnable> queue;
  private final AtomicLong pending;
  private final Thread thread;
  private volatile CollectorSnapshot lastSnapshot = CollectorSnapshot.empty();
  private long lastSnapshotVersion = -1;
  private volatile long lastAnsweredNanos = System.nanoTime();
  private final java.util.concurrent.atomic.AtomicReference<CompletableFuture<CollectorSnapshot>>
      pendingSnapshot = new java.util.concurrent.atomic.AtomicReference<>();
  private volatile boolean accepting = true;
  // Set by the fold thread before its last drain: a task added later may not run.
  private volatile boolean stopped;
  private volatile String failure;
  private volatile Runnable onFailure = () -> {};
  private long tickFailures;

  public FoldWorker(
      FoldEngine engine,
      CollectorMetrics metrics,
      long maxPendingBytes,
      Duration tick,
      Duration snapshotTimeout) {
    this(engine, metrics, maxPendingBytes, tick, snapshotTimeout, new LinkedBlockingQueue<>());
  }

  /** As above, with the task queue given (tests use it to interleave a submit with shutdown). */
  FoldWorker(
      FoldEngine engine,
      CollectorMetrics metrics,
      long maxPendingBytes,
      Duration tick,
      Duration snapshotTimeout,
      BlockingQueue<Runnable> queue) {
    this.queue = queue;
    this.engine = engine;
    this.metrics = metrics;
    this.maxPendingBytes = maxPendingBytes;
    this.tickMillis = Math.max(1, tick.toMillis());
    this.snapshotTimeout = snapshotTimeout;
    this.pending = metrics.pendingBytes();
    this.thread = new Thread(this::run, "profold-fold");
    this.thread.setDaemon(true);
  }

  public void start() {
    thread.start();
  }

  /**
   * Runs {@code listener} once, on the dying fold thread, if an {@link Error} ends it (see the
   * class comment); call before {@link #start}. The listener should be short and must not wait on
   * the fold thread.
   */
  public void onFailure(Runnable listener) {
    this.onFailure = listener;
  }

  /**
   * Why the fold thread ended before its shutdown ({@code "java.lang.OutOfMemoryError: Java heap
   * space"}), or null while it runs or after a clean shutdown.
   */
  public String failure() {
    return failure;
  }

  /**
   * Queues {@code delta} for folding; {@code done} runs on the fold thread with the result.
   *
   * @return false, without queueing, when the pending-bytes limit is reached or the worker is
   *     stopping; true when {@code done} will run
   */
  public boolean submit(DecodedDelta delta, Consumer<FoldResult> done) {
    if (!accepting) {
      return false;
    }
    if (!charge(delta.serializedBytes)) {
      return false;
    }
    Runnable task =
        () -> {
          pending.addAndGet(-delta.serializedBytes);
          FoldResult r;
          try {
            r = engine.apply(delta);
          } catch (PartlyAppliedException e) {
            log.error(
                "fold failed part-way through delta {} of {}: part of it may be applied; its"
                    + " sequence counts as applied, so a resend is acknowledged as a duplicate",
                delta.sequence,
                delta.source,
                e.getCause());
            metrics.deltaRejected(RejectReason.INTERNAL_ERROR);
            r =
                new FoldResult(
                    FoldResult.Outcome.REJECTED,
                    null,
                    "internal error while folding ("
                        + e.getCause().getMessage()
                        + "); part of this delta may have been applied and the rest was dropped;"
                        + " do not resend it (a resend is acknowledged as a duplicate)",
                    0);
          } catch (RuntimeException e) {
            log.error("fold failed for a delta of {}; it was not applied", delta.source, e);
            metrics.deltaRejected(RejectReason.INTERNAL_ERROR);
            r =
                new FoldResult(
                    FoldResult.Outcome.REJECTED, null, "internal error: " + e.getMessage(), 0);
          }
          done.accept(r);
        };
    if (!enqueue(task)) {
      pending.addAndGet(-delta.serializedBytes);
      return false;
    }
    return true;
  }

  /**
   * Adds {@code bytes} to the pending bytes unless that goes over {@code maxPendingBytes} (one item
   * alone is always taken, so a delta larger than the limit still gets through an empty queue).
   */
  private boolean charge(long bytes) {
    long after = pending.addAndGet(bytes);
    if (after > maxPendingBytes && after != bytes) {
      pending.addAndGet(-bytes);
      return false;
    }
    return true;
  }

  /**
   * Queues {@code task} (an answer for a delta that is not folded, such as a rejection ack) after
   * everything submitted before it, counting {@code bytes} toward {@code maxPendingBytes} until it
   * runs, as {@link #submit} counts a delta's bytes.
   *
   * @return false, without queueing, when the pending-bytes limit is reached or the fold thread has
   *     stopped; true when {@code task} will run
   */
  public boolean executeCharged(long bytes, Runnable task) {
    if (!charge(bytes)) {
      return false;
    }
    Runnable charged =
        () -> {
          pending.addAndGet(-bytes);
          task.run();
        };
    if (!enqueue(charged)) {
      pending.addAndGet(-bytes);
      return false;
    }
    return true;
  }

  /**
   * Runs {@code task} on the fold thread after everything submitted before it, outside the
   * pending-bytes limit: for a bounded number of small tasks (one per stream or per call).
   *
   * @return false, without running it, when the fold thread has stopped
   */
  public boolean execute(Runnable task) {
    return enqueue(task);
  }

  /**
   * Queues {@code task}; false if the fold thread stopped before it could take it. The fold thread
   * sets {@code stopped} before its last drain, so a task added before that is drained, and one
   * added after is taken back here unless the drain already took it.
   */
  private boolean enqueue(Runnable task) {
    queue.add(task);
    // After a failure nothing runs, whether the failing thread cleared the task or not.
    return !(stopped && (queue.remove(task) || failure != null));
  }

  /**
   * Runs {@code task} on the fold thread after everything queued before it and returns its result,
   * waiting at most {@code timeout} for the fold thread to reach it. A task the fold thread has not
   * started by then never runs: the caller gets a {@link TimeoutException} and knows that nothing
   * changed. A task already running is waited for to its end (it should be short), so that the
   * caller always learns whether it ran.
   *
   * @throws ExecutionException with what the task threw (it ran, and failed)
   * @throws TimeoutException when the task was not started within {@code timeout}, or the fold
   *     thread has stopped; it never will be started
   * @throws InterruptedException when interrupted before the task started; it never will be
   */
  public <T> T call(Callable<T> task, Duration timeout)
      throws ExecutionException, TimeoutException, InterruptedException {
    Call<T> call = new Call<>(task);
    if (!enqueue(call)) {
      throw new TimeoutException("the fold thread has stopped");
    }
    try {
      return call.result.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      if (call.state.compareAndSet(Call.WAITING, Call.CANCELLED)) {
        throw e;
      }
      return call.awaitUninterruptibly();
    } catch (InterruptedException e) {
      if (call.state.compareAndSet(Call.WAITING, Call.CANCELLED)) {
        throw e;
      }
      try {
        return call.awaitUninterruptibly();
      } finally {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** A task of {@link #call}: runs only if its caller did not give up on it first. */
  private static final class Call<T> implements Runnable {
    static final int WAITING = 0;
    static final int RUNNING = 1;
    static final int CANCELLED = 2;

    final Callable<T> task;
    final AtomicInteger state = new AtomicInteger(WAITING);
    final CompletableFuture<T> result = new CompletableFuture<>();

    Call(Callable<T> task) {
      this.task = task;
    }

    @Override
    public void run() {
      if (!state.compareAndSet(WAITING, RUNNING)) {
        return;
      }
      try {
        result.complete(task.call());
      } catch (Exception e) {
        result.completeExceptionally(e);
      } catch (Error e) {
        result.completeExceptionally(e);
        throw e;
      }
    }

    T awaitUninterruptibly() throws ExecutionException {
      boolean interrupted = false;
      try {
        while (true) {
          try {
            return result.get();
          } catch (InterruptedException e) {
            interrupted = true;
          }
        }
      } finally {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
    }
  }

  /**
   * Waits at most {@code timeout} for the fold thread to end (after {@link #shutdown}, or its
   * failure).
   *
   * @return true when it has ended
   */
  public boolean awaitEnd(Duration timeout) throws InterruptedException {
    thread.join(Math.max(1, timeout.toMillis()));
    return !thread.isAlive();
  }

  /** True while the worker takes new deltas. */
  public boolean accepting() {
    return accepting;
  }

  /**
   * The current snapshot, built on the fold thread. If the fold thread does not answer within the
   * snapshot timeout, the previous snapshot is returned (and a warning logged).
   */
  @Override
  public CollectorSnapshot snapshot() {
    if (!thread.isAlive()) {
      return lastSnapshot;
    }
    CompletableFuture<CollectorSnapshot> f = snapshotRequest();
    try {
      return f.get(snapshotTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      log.warn(
          "fold thread did not answer a snapshot request in {}; serving the previous one",
          snapshotTimeout);
      return lastSnapshot;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return lastSnapshot;
    } catch (ExecutionException e) {
      throw new IllegalStateException(e.getCause());
    }
  }

  /**
   * The snapshot request waiting in the queue, joined, or a new one queued: scrapes and queries
   * that come while one waits share it, rather than each adding a copy of every group to the fold
   * thread's work when it is behind already. A request still waiting was queued after everything
   * applied so far (the queue runs in order), so it shows all that its callers saw acknowledged.
   */
  private CompletableFuture<CollectorSnapshot> snapshotRequest() {
    while (true) {
      CompletableFuture<CollectorSnapshot> waiting = pendingSnapshot.get();
      if (waiting != null) {
        return waiting;
      }
      CompletableFuture<CollectorSnapshot> mine = new CompletableFuture<>();
      if (pendingSnapshot.compareAndSet(null, mine)) {
        queue.add(
            () -> {
              pendingSnapshot.compareAndSet(mine, null); // later callers queue a fresher one
              mine.complete(snapshotOnFoldThread());
            });
        return mine;
      }
    }
  }

  /**
   * How long ago the fold thread last answered a snapshot request: right after {@link #snapshot}
   * about nothing when it answered that one, at least the snapshot timeout when it did not (the
   * previous snapshot was served).
   */
  public long snapshotAgeNanos() {
    return System.nanoTime() - lastAnsweredNanos;
  }

  private CollectorSnapshot snapshotOnFoldThread() {
    lastAnsweredNanos = System.nanoTime();
    if (engine.version() != lastSnapshotVersion) {
      lastSnapshot = engine.snapshot();
      lastSnapshotVersion = engine.version();
    }
    return lastSnapshot;
  }

  /**
   * Ticks every {@code tick} from the next wait on (a reload that adds a scheme of a shorter
   * interval: its windows close that much after their time at most).
   */
  public void tickEvery(Duration tick) {
    tickMillis = Math.max(1, tick.toMillis());
  }

  /** How often the fold thread ticks when no task comes. */
  public Duration tickPeriod() {
    return Duration.ofMillis(tickMillis);
  }

  private void run() {
    try {
      while (true) {
        Runnable task = queue.poll(tickMillis, TimeUnit.MILLISECONDS);
        if (task == STOP) {
          break;
        }
        if (task != null) {
          runSafely(task);
        }
        tick();
      }
      // Drain what arrived before the stop, then close the current windows.
      stopped = true;
      Runnable task;
      while ((task = queue.poll()) != null) {
        runSafely(task);
      }
      engine.closeAll();
      snapshotOnFoldThread();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (Error e) {
      fail(e);
    }
  }

  /**
   * Closes the windows the clock has passed now, as the periodic tick does (a failure logged the
   * same way); to be run on the fold thread ({@link #execute}).
   *
   * @return false when closing them failed
   */
  public boolean closeDueWindows() {
    return tick();
  }

  /**
   * Closes the windows the clock has passed. A failure is logged (the first, then every 1000th: it
   * would recur at every tick) and the fold goes on.
   *
   * @return false when it failed
   */
  private boolean tick() {
    try {
      engine.advance();
      return true;
    } catch (RuntimeException e) {
      if (tickFailures++ % 1000 == 0) {
        log.error(
            "closing intervals failed ({} times so far); the fold goes on, but intervals may not"
                + " close: report this as a bug",
            tickFailures,
            e);
      }
      return false;
    }
  }

  /**
   * The fold thread ends with {@code e}: refuse deltas from now on and tell the listener. Out of
   * memory, anything here may fail again: the flags first, a text made in advance if the error's
   * own cannot be, the listener (health) before the log line.
   */
  private void fail(Error e) {
    accepting = false;
    stopped = true;
    failure = FAILED; // refusals and /healthz see a failure from here on
    queue.clear(); // what it held can never run: give its memory back
    pending.set(0);
    try {
      failure = e.toString();
    } catch (Throwable again) {
      // out of memory still: the text made in advance stays
    }
    try {
      onFailure.run();
    } catch (Throwable second) {
      // the dying thread's last words: a second failure changes nothing of the above
    }
    try {
      log.error(
          "the fold thread failed and stopped: {}; the collector now refuses deltas (their clients"
              + " keep and resend them), /healthz answers 503 and it must be restarted",
          failure,
          e);
    } catch (Throwable second) {
      // as above
    }
  }

  /** The failure's text when the error's own cannot be made (out of memory). */
  private static final String FAILED = "java.lang.Error (its description could not be made)";

  private static void runSafely(Runnable task) {
    try {
      task.run();
    } catch (RuntimeException e) {
      log.error("task on the fold thread failed; the fold goes on", e);
    }
  }

  /**
   * Stops taking deltas, applies everything already queued, closes the open windows and stops the
   * thread, waiting at most {@code timeout}.
   */
  public void shutdown(Duration timeout) throws InterruptedException {
    accepting = false;
    queue.add(STOP);
    thread.join(Math.max(1, timeout.toMillis()));
    if (thread.isAlive()) {
      log.warn("fold thread still busy after {}; {} tasks left", timeout, queue.size());
    }
  }
}
