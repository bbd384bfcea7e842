package dev.profold.collector.fold;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.ingest.DecodedDelta;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.testing.Deltas;
import dev.profold.collector.testing.MutableClock;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.RegionKind;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The fold worker's shutdown: every delta it accepts is answered. */
class FoldWorkerTest {
  private static final String RECEIVER = "test-receiver";

  /** A task queue that holds the receiver's next add until released. */
  private static final class HeldQueue extends LinkedBlockingQueue<Runnable> {
    private static final long serialVersionUID = 1L;
    final CountDownLatch inAdd = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);

    @Override
    public boolean add(Runnable task) {
      if (Thread.currentThread().getName().equals(RECEIVER)) {
        inAdd.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return super.add(task);
    }
  }

  /** An engine with no data, its clock after the first default delta's interval. */
  private static FoldEngine engine(CollectorMetrics metrics) {
    return new FoldEngine(
        new FoldConfig(10_000_000_000L, 5, 1000),
        new GlobalDictionary(10_000),
        MutableClock.atNanos(Deltas.DEFAULT_START + 10_000_000_000L),
        metrics);
  }

  /** Holds {@code worker}'s fold thread until {@code hold} opens. */
  private static void holdUntil(FoldWorker worker, CountDownLatch hold) {
    worker.execute(
        () -> {
          try {
            hold.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
  }

  @Test
  void windowsClosedOnRequestSayWhetherClosingFailedAndTheFoldGoesOn() throws Exception {
    // Before: the alert loop's request ran engine.advance() bare; its failure never completed the
    // request, which waited out 5 s and was logged as a slow fold thread, at every interval.
    CollectorMetrics metrics = new CollectorMetrics(new SimpleMeterRegistry());
    GlobalDictionary dictionary = new GlobalDictionary(10_000);
    MutableClock clock = MutableClock.atNanos(Deltas.DEFAULT_START + 1_000_000_000L);
    FoldEngine engine =
        new FoldEngine(new FoldConfig(10_000_000_000L, 5, 1000), dictionary, clock, metrics);
    engine.onIntervalClosed(
        (scheme, labels, paths, interval) -> {
          throw new IllegalStateException("a listener that fails");
        });
    engine.apply(
        Deltas.source("checkout", "i-1")
            .seq(1)
            .region(1, "main", RegionKind.REGION_KIND_COMPUTE)
            .entry(1, 1.0)
            .decode(dictionary));
    clock.setNanos(Deltas.DEFAULT_START + 30_000_000_000L); // its window is due
    // Ticks an hour apart: only the request closes windows here.
    FoldWorker worker =
        new FoldWorker(engine, metrics, 1 << 20, Duration.ofHours(1), Duration.ofSeconds(5));
    worker.start();
    try (dev.profold.collector.testing.LogLines logs =
        dev.profold.collector.testing.LogLines.capture(FoldWorker.class)) {
      CompletableFuture<Boolean> closed = new CompletableFuture<>();
      assertThat(worker.execute(() -> closed.complete(worker.closeDueWindows()))).isTrue();

      assertThat(closed.get(5, TimeUnit.SECONDS)).isFalse();
      assertThat(logs.messages()).anyMatch(m -> m.contains("closing intervals failed"));
      CompletableFuture<Boolean> alive = new CompletableFuture<>();
      worker.execute(() -> alive.complete(true));
      assertThat(alive.get(5, TimeUnit.SECONDS)).as("the fold goes on").isTrue();
    } finally {
      worker.shutdown(Duration.ofSeconds(30));
    }
  }

  @Test
  void theAgeOfTheSnapshotServedSaysWhetherTheFoldThreadAnswered() throws Exception {
    CollectorMetrics metrics = new CollectorMetrics(new SimpleMeterRegistry());
    FoldEngine engine = engine(metrics);
    FoldWorker worker =
        new FoldWorker(engine, metrics, 1 << 20, Duration.ofMillis(50), Duration.ofMillis(200));
    worker.start();
    try {
      worker.snapshot();
      assertThat(worker.snapshotAgeNanos()).as("answered just now").isLessThan(1_000_000_000L);
      CountDownLatch hold = new CountDownLatch(1);
      holdUntil(worker, hold);
      worker.snapshot(); // not answered within 200 ms: the previous one
      assertThat(worker.snapshotAgeNanos()).isGreaterThanOrEqualTo(200_000_000L);
      hold.countDown();
    } finally {
      worker.shutdown(Duration.ofSeconds(30));
    }
  }

  @Test
  void snapshotRequestsWhileOneWaitsShareIt() throws Exception {
    // Each scrape or query queued its own copy of every group for the fold thread, however far
    // behind it was.
    CollectorMetrics metrics = new CollectorMetrics(new SimpleMeterRegistry());
    FoldEngine engine = engine(metrics);
    java.util.concurrent.atomic.AtomicInteger adds =
        new java.util.concurrent.atomic.AtomicInteger();
    LinkedBlockingQueue<Runnable> queue =
        new LinkedBlockingQueue<>() {
          private static final long serialVersionUID = 1L;

          @Override
          public boolean add(Runnable task) {
            adds.incrementAndGet();
            return super.add(task);
          }
        };
    FoldWorker worker =
        new FoldWorker(
            engine, metrics, 1 << 20, Duration.ofMillis(50), Duration.ofSeconds(30), queue);
    worker.start();
    CountDownLatch hold = new CountDownLatch(1);
    holdUntil(worker, hold);
    java.util.List<CompletableFuture<dev.profold.sinks.snapshot.CollectorSnapshot>> got =
        new java.util.ArrayList<>();
    java.util.List<Thread> callers = new java.util.ArrayList<>();
    for (int i = 0; i < 5; i++) {
      CompletableFuture<dev.profold.sinks.snapshot.CollectorSnapshot> f = new CompletableFuture<>();
      got.add(f);
      Thread t = new Thread(() -> f.complete(worker.snapshot()));
      callers.add(t);
      t.start();
    }
    long deadline = System.nanoTime() + 30_000_000_000L; // a hang guard
    while (!callers.stream().allMatch(t -> t.getState() == Thread.State.TIMED_WAITING)) {
      assertThat(System.nanoTime()).as("callers waiting within 30 s").isLessThan(deadline);
      Thread.onSpinWait();
    }
    assertThat(adds).as("the held task and one snapshot request").hasValue(2);
    hold.countDown();
    for (CompletableFuture<dev.profold.sinks.snapshot.CollectorSnapshot> f : got) {
      assertThat(f.get(30, java.util.concurrent.TimeUnit.SECONDS)).isSameAs(got.get(0).join());
    }
    worker.snapshot(); // after it ran: a request of its own
    assertThat(adds).hasValue(3);
    worker.shutdown(Duration.ofSeconds(30));
  }

  @Test
  void aDeltaSubmittedAsTheFoldDrainsAtShutdownIsAnsweredOrRefused() throws Exception {
    MutableClock clock = MutableClock.atNanos(Deltas.DEFAULT_START + 10_000_000_000L);
    CollectorMetrics metrics = new CollectorMetrics(new SimpleMeterRegistry());
    GlobalDictionary dictionary = new GlobalDictionary(10_000);
    FoldEngine engine =
        new FoldEngine(new FoldConfig(10_000_000_000L, 5, 1000), dictionary, clock, metrics);
    HeldQueue queue = new HeldQueue();
    FoldWorker worker =
        new FoldWorker(
            engine, metrics, 1 << 20, Duration.ofMillis(50), Duration.ofSeconds(5), queue);
    worker.start();
    Delta delta =
        Deltas.source("checkout", "i-1")
            .seq(1)
            .region(1, "main", RegionKind.REGION_KIND_COMPUTE)
            .entry(1, 0.25)
            .build();
    DecodedDelta decoded = Deltas.decode(delta, dictionary);

    CompletableFuture<FoldResult> answer = new CompletableFuture<>();
    CompletableFuture<Boolean> queued = new CompletableFuture<>();
    Thread receiver =
        new Thread(() -> queued.complete(worker.submit(decoded, answer::complete)), RECEIVER);
    receiver.start();
    queue.inAdd.await(); // the receiver passed the accepting check and is about to queue

    worker.shutdown(Duration.ofSeconds(30)); // the fold drains and stops meanwhile
    queue.release.countDown();
    receiver.join();

    // Accepted means answered; otherwise refused, so the caller answers UNAVAILABLE.
    if (queued.join()) {
      assertThat(answer).as("the answer to an accepted delta").isDone();
    } else {
      assertThat(worker.accepting()).isFalse();
      assertThat(metrics.pendingBytes().get()).isZero();
    }
  }
}
