package dev.profold.client.internal.record;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.AsyncRegion;
import dev.profold.client.Kind;
import dev.profold.client.Region;
import dev.profold.client.Scope;
import dev.profold.client.internal.LogCapture;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.threads.Cell;
import dev.profold.client.internal.threads.ThreadAggregators;
import dev.profold.client.internal.threads.ThreadSnapshot;
import dev.profold.proto.v1.SourceIdentity;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Asynchronous regions: opened on one thread in its current context, closed once on any thread,
 * never on the opening thread's stack; their contexts stay valid while they are open, however the
 * process churns.
 */
class AsyncRegionTest {
  private static final int LIMIT = 64;

  private final DeltaEncoder encoder =
      new DeltaEncoder(
          SourceIdentity.newBuilder().setService("s").setInstance("i").setIncarnationId(1).build());
  private final Recorder recorder = new Recorder(encoder, 1024, LIMIT);
  @RegisterExtension final TestThreads threads = new TestThreads();

  private ContextTable table() {
    return (ContextTable) recorder.contexts();
  }

  /** One collection's cells: count, sum, thread and measurement by context key. */
  private record Recorded(long count, double seconds, String thread, int metric) {}

  private Map<String, Recorded> collect() {
    Map<String, Recorded> out = new TreeMap<>();
    for (ThreadSnapshot t : recorder.collect()) {
      for (Cell c : t.cells()) {
        out.merge(
            ContextKeys.key(recorder, encoder, c.context()),
            new Recorded(c.state().count(), c.state().sum(), t.name(), c.metric()),
            (a, b) -> new Recorded(a.count + b.count, a.seconds + b.seconds, a.thread, a.metric));
      }
    }
    return out;
  }

  private int asyncDuration() {
    return recorder.ownMetric(Recorder.ASYNC_DURATION, "seconds");
  }

  private Map<String, Long> counts() {
    Map<String, Long> out = new TreeMap<>();
    collect().forEach((k, v) -> out.put(k, v.count()));
    return out;
  }

  @Test
  void itRecordsWhereItWasOpenedOnceWhenClosedOnAnotherThreadAndNothingNestsUnderIt()
      throws Exception {
    ExecutorService loop = threads.newThread();
    AsyncRegion[] call = new AsyncRegion[1];
    long[] opened = new long[2]; // before the open, after it
    String loopName =
        loop.submit(
                () -> {
                  try (Scope s = recorder.with("tenant", "acme");
                      Region r = recorder.region("channel.read", Kind.COMPUTE)) {
                    opened[0] = System.nanoTime();
                    call[0] = recorder.asyncRegion("backend.call", Kind.WAIT);
                    opened[1] = System.nanoTime();
                    recorder.region("write", Kind.IO).close(); // the loop goes on
                    assertThat(r).isNotNull();
                    assertThat(s).isNotNull();
                  }
                  return Thread.currentThread().getName();
                })
            .get();
    long closing = System.nanoTime();
    call[0].end();
    long closed = System.nanoTime();

    Map<String, Recorded> got = collect();
    assertThat(got.keySet())
        .containsExactlyInAnyOrder(
            "channel.read tenant=acme",
            "channel.read/write tenant=acme",
            "channel.read/backend.call tenant=acme");
    Recorded async = got.get("channel.read/backend.call tenant=acme");
    assertThat(async.count()).isEqualTo(1);
    assertThat(async.metric())
        .as("its duration is a latency, not thread time")
        .isEqualTo(asyncDuration())
        .isNotEqualTo(recorder.timeMetric());
    assertThat(async.thread()).isEqualTo(Thread.currentThread().getName()).isNotEqualTo(loopName);
    assertThat(async.seconds())
        .as("between the time from the open's end to the close's start and the whole span")
        .isBetween((closing - opened[1]) * 1e-9, (closed - opened[0]) * 1e-9);
    assertThat(got.get("channel.read/write tenant=acme").thread()).isEqualTo(loopName);
    assertThat(got.get("channel.read/write tenant=acme").metric()).isEqualTo(recorder.timeMetric());
    assertThat(recorder.misuseCounts()).allSatisfy((k, v) -> assertThat(v).as(k).isZero());
  }

  @Test
  void callbackThreadsThatEndedOtherThreadsRegionsStillClusterByTheirOwnWork() throws Exception {
    ExecutorService loop = threads.newThread();
    List<AsyncRegion> calls =
        loop.submit(
                () -> {
                  List<AsyncRegion> out = new ArrayList<>();
                  for (String tenant : List.of("a", "b")) {
                    try (Scope s = recorder.with("tenant", tenant)) {
                      out.add(recorder.asyncRegion("backend.call", Kind.WAIT));
                      assertThat(s).isNotNull();
                    }
                  }
                  return out;
                })
            .get();
    List<Thread> callbacks = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      AsyncRegion call = calls.get(i);
      callbacks.add(
          new Thread(
              () -> {
                recorder.region("handle", Kind.COMPUTE).close(); // the same work on both
                call.end(); // a call of another tenant each
              },
              "cb-" + i));
    }
    for (Thread t : callbacks) {
      t.start();
      t.join();
    }
    List<ThreadSnapshot> snapshots = recorder.collect();
    assertThat(ThreadAggregators.clusters(snapshots, recorder.contexts()).get("cb-*"))
        .as("one behaviour: which requests a thread ended is not where it ran")
        .hasSize(1);
    assertThat(ThreadAggregators.clusters(snapshots).get("cb-*"))
        .as("counting every cell as a visit, as before")
        .hasSize(2);
  }

  @Test
  void anEndAfterTheRuntimeStoppedRecordsNothingAndMakesNoState() throws Exception {
    AsyncRegion r = recorder.asyncRegion("late", Kind.WAIT);
    recorder.collect();
    recorder.stop();
    int states = recorder.states();
    Thread closer = new Thread(r::end, "closer");
    closer.start();
    closer.join();
    assertThat(recorder.states()).isEqualTo(states);
    assertThat(recorder.collect()).isEmpty();
  }

  @Test
  void regionsNeverEndedThatKeepManyContextsAreWarnedAbout() {
    List<String> warnings =
        LogCapture.warnings(
            "dev.profold.client",
            () -> {
              for (int i = 0; i < LIMIT / 2; i++) {
                try (Scope s = recorder.with("request", (long) i)) {
                  recorder.asyncRegion("call", Kind.WAIT); // never ended
                  assertThat(s).isNotNull();
                }
              }
              churn();
            });
    assertThat(warnings)
        .anyMatch(w -> w.contains("are kept by asynchronous regions still open"))
        .filteredOn(w -> w.contains("asynchronous regions"))
        .hasSize(1);
  }

  @Test
  void whatACallbackRecordsInsideEnterNestsUnderTheRegionsPathAndAttributes() throws Exception {
    AsyncRegion call;
    try (Scope s = recorder.with("tenant", "acme");
        Region r = recorder.region("channel.read", Kind.COMPUTE)) {
      call = recorder.asyncRegion("backend.call", Kind.WAIT);
      assertThat(s).isNotNull();
      assertThat(r).isNotNull();
    }
    int bytes = recorder.metric("bytes", "bytes");
    ExecutorService callback = threads.newThread();
    callback
        .submit(
            () -> {
              try (Scope s = call.enter()) {
                recorder.region("decode", Kind.COMPUTE).close();
                recorder.record(bytes, 100);
                assertThat(s).isNotNull();
              }
              call.end();
              recorder.region("other", Kind.COMPUTE).close(); // its own context again
            })
        .get();
    assertThat(counts())
        .containsOnly(
            Map.entry("channel.read tenant=acme", 1L),
            Map.entry("channel.read/backend.call tenant=acme", 2L), // the bytes and the duration
            Map.entry("channel.read/backend.call/decode tenant=acme", 1L),
            Map.entry("other", 1L));
    assertThat(recorder.misuseCounts()).allSatisfy((k, v) -> assertThat(v).as(k).isZero());
  }

  @Test
  void enteringARegionThatEndedIsCountedAndChangesNothing() {
    AsyncRegion call = recorder.asyncRegion("backend.call", Kind.WAIT);
    call.end();
    try (Scope s = call.enter()) {
      recorder.region("decode", Kind.COMPUTE).close();
      assertThat(s).isNotNull();
    }
    assertThat(counts()).containsOnly(Map.entry("backend.call", 1L), Map.entry("decode", 1L));
    assertThat(recorder.misuseCounts().get("bad_argument")).isEqualTo(1);
  }

  @Test
  void aContextEnteredStaysValidAfterTheRegionEndsWhileTheProcessChurns() throws Exception {
    AsyncRegion session;
    try (Scope s = recorder.with("user", "alice")) {
      session = recorder.asyncRegion("session", Kind.WAIT);
      assertThat(s).isNotNull();
    }
    ExecutorService callback = threads.newThread();
    Scope[] inside = new Scope[1];
    callback.submit(() -> inside[0] = session.enter()).get();
    session.end(); // on this thread, while the callback is still inside
    assertThat(counts()).containsOnly(Map.entry("session user=alice", 1L));
    churn(); // the ended region no longer keeps the context: the callback's scope must
    assertThat(table().agedOut()).isGreaterThan(2 * LIMIT);
    callback
        .submit(
            () -> {
              recorder.region("step", Kind.COMPUTE).close();
              inside[0].close();
            })
        .get();
    assertThat(counts()).containsOnly(Map.entry("session/step user=alice", 1L));
  }

  /**
   * A callback thread that was asked for its ids back while idle (the process churned) enters an
   * asynchronous region, which then ends elsewhere while the process churns on: what the callback
   * records inside stays under the region's key. {@code keepLent} keeps an outer region open on the
   * callback (a pooled state given back would be retired by the churn, and a fresh one has no
   * request pending).
   */
  private void enterAfterAReleaseWasAsked(Recorder r, ExecutorService callback, boolean keepLent)
      throws Exception {
    AsyncRegion session;
    try (Scope s = r.with("user", "alice")) {
      session = r.asyncRegion("session", Kind.WAIT);
      assertThat(s).isNotNull();
    }
    Region[] outer = new Region[1];
    if (keepLent) {
      callback.submit(() -> outer[0] = r.region("outer", Kind.COMPUTE)).get();
    } else {
      callback.submit(() -> r.region("warm", Kind.COMPUTE).close()).get(); // it has a state
    }
    churn(r); // asks every holder for its ids; the idle callback has not answered
    Scope[] inside = new Scope[1];
    callback.submit(() -> inside[0] = session.enter()).get();
    session.end();
    churn(r);
    int bytes = r.metric("bytes", "bytes");
    callback
        .submit(
            () -> {
              r.record(bytes, 1);
              r.region("step", Kind.COMPUTE).close();
              inside[0].close();
              if (outer[0] != null) {
                outer[0].close();
              }
            })
        .get();
    Map<String, Long> got = new TreeMap<>();
    for (ThreadSnapshot t : r.collect()) {
      for (Cell c : t.cells()) {
        got.merge(ContextKeys.key(r, encoder, c.context()), c.state().count(), Long::sum);
      }
    }
    got.remove("outer");
    assertThat(got)
        .containsOnly(
            Map.entry("session user=alice", 1L), Map.entry("session/step user=alice", 1L));
  }

  @Test
  void aThreadAskedForItsIdsBeforeItEntersKeepsTheEnteredContext() throws Exception {
    enterAfterAReleaseWasAsked(recorder, threads.newThread(), false);
  }

  @Test
  void aPooledThreadAskedForItsIdsBeforeItEntersKeepsTheEnteredContext() throws Exception {
    Recorder pooled =
        new Recorder(encoder, 1024, LIMIT, t -> t.getName().startsWith("pool-")); // executors'
    enterAfterAReleaseWasAsked(pooled, threads.newThread(), true);
  }

  @Test
  void anEnterAfterTheRuntimeStoppedMakesNoState() throws Exception {
    AsyncRegion r = recorder.asyncRegion("late", Kind.WAIT);
    recorder.collect();
    recorder.stop();
    int states = recorder.states();
    Thread t = new Thread(() -> r.enter().close(), "enterer");
    t.start();
    t.join();
    assertThat(recorder.states()).isEqualTo(states);
  }

  @Test
  void moreOpenAtOnceThanAThreadsDepthLimitAreAllRecorded() throws Exception {
    ExecutorService loop = threads.newThread();
    int n = 3 * ThreadState.MAX_DEPTH;
    List<AsyncRegion> open =
        loop.submit(
                () -> {
                  List<AsyncRegion> out = new ArrayList<>();
                  for (int i = 0; i < n; i++) {
                    out.add(recorder.asyncRegion("request", Kind.WAIT));
                    recorder.region("accept", Kind.IO).close();
                  }
                  return out;
                })
            .get();
    assertThat(counts()).containsOnly(Map.entry("accept", (long) n));
    open.forEach(AsyncRegion::end);
    assertThat(counts()).containsOnly(Map.entry("request", (long) n));
    assertThat(recorder.misuseCounts().get("too_deep")).isZero();
  }

  @Test
  void aSecondCloseIsCountedAndRecordsNothing() {
    AsyncRegion r = recorder.asyncRegion("once", Kind.COMPUTE);
    r.end();
    r.end();
    assertThat(counts()).containsOnly(Map.entry("once", 1L));
    assertThat(recorder.misuseCounts().get("closed_twice")).isEqualTo(1);
    r.end();
    assertThat(counts()).isEmpty();
    assertThat(recorder.misuseCounts().get("closed_twice")).isEqualTo(2);
  }

  @Test
  void aBadNameIsCountedAndRecordedUnderANameThatSaysSo() {
    recorder.asyncRegion("", Kind.IO).end();
    recorder.asyncRegion(null, null).end();
    assertThat(counts()).containsOnly(Map.entry("empty", 1L), Map.entry("null", 1L));
    assertThat(recorder.misuseCounts().get("bad_argument")).isEqualTo(2);
  }

  /** 300 intervals in which the calling thread churns through new attribute values. */
  private void churn() {
    churn(recorder);
  }

  /** As {@link #churn()}, on {@code r}. */
  private static void churn(Recorder r) {
    for (int round = 0; round < 300; round++) {
      try (Scope s = r.with("tenant", (long) round)) {
        r.region("busy", Kind.COMPUTE).close();
        assertThat(s).isNotNull();
      }
      r.collect();
    }
  }

  @Test
  void itsContextIsKeptWhileItIsOpenAndAgesOutOnceItsValueWasTaken() {
    AsyncRegion r;
    int context;
    try (Scope s = recorder.with("user", "alice")) {
      r = recorder.asyncRegion("session", Kind.WAIT);
      context = ((AsyncFrame) r).context;
      assertThat(s).isNotNull();
    }
    churn(); // the thread gives back its ids as asked: only the open region keeps the context
    assertThat(table().agedOut()).isGreaterThan(2 * LIMIT);
    assertThat(table().inUse(context)).isTrue();
    assertThat(ContextKeys.key(recorder, encoder, context)).isEqualTo("session user=alice");

    r.end();
    assertThat(counts()).containsOnly(Map.entry("session user=alice", 1L));
    assertThat(table().asyncPins.open(context)).isZero();
    churn();
    assertThat(
            !table().inUse(context)
                || !ContextKeys.key(recorder, encoder, context).equals("session user=alice"))
        .as("aged out once nothing holds it")
        .isTrue();
  }

  @Test
  void aValueClosedBeforeACollectionBeganIsKeptThroughTheAgeingBeforeTheNextOne() {
    ContextTable t = table();
    AsyncRegion r;
    int context;
    try (Scope s = recorder.with("user", "bob")) {
      r = recorder.asyncRegion("late", Kind.WAIT);
      context = ((AsyncFrame) r).context;
      assertThat(s).isNotNull();
    }
    churn();
    // A collection begins (its tables are swapped) and the region closes after that: the value
    // is in the table the next collection takes, and the ageing that runs as that one starts
    // must not free the context.
    t.endCollection();
    t.beginCollection();
    r.end();
    for (int i = 0; i < LIMIT; i++) { // new values, recorded now: the table is over half full
      try (Scope s = recorder.with("tenant", 1_000L + i)) {
        recorder.region("busy", Kind.COMPUTE).close();
        assertThat(s).isNotNull();
      }
    }
    long agedBefore = t.agedOut();
    t.endCollection(); // the next collection's ageing, before it takes anything
    assertThat(t.agedOut()).as("the ageing did free contexts").isGreaterThan(agedBefore);
    assertThat(ContextKeys.key(recorder, encoder, context)).isEqualTo("late user=bob");
    assertThat(counts()).containsEntry("late user=bob", 1L);
    assertThat(t.asyncPins.keeps(context, 1_000_000)).isFalse();
  }

  @Test
  void openersAndClosersRacingTheFlushWhileItAgesContextsLoseAndMisplaceNothing() throws Exception {
    int openers = 2;
    int perOpener = 30_000;
    int perValue = 500;
    BlockingQueue<AsyncRegion> inFlight = new ArrayBlockingQueue<>(32);
    AtomicBoolean done = new AtomicBoolean();
    AtomicLong collections = new AtomicLong();
    Map<String, Long> seen = new TreeMap<>();
    Future<?> flusher =
        threads
            .newThread()
            .submit(
                () -> {
                  while (!done.get()) {
                    counts().forEach((k, n) -> seen.merge(k, n, Long::sum));
                    collections.incrementAndGet();
                  }
                  return null;
                });
    CountDownLatch start = new CountDownLatch(1);
    List<Future<?>> work = new ArrayList<>();
    for (int o = 0; o < openers; o++) {
      long base = o * 1_000_000L;
      work.add(
          threads
              .newThread()
              .submit(
                  () -> {
                    start.await();
                    for (int i = 0; i < perOpener; i++) {
                      if (i % perValue == 0) { // let two collections pass before a new value
                        long now = collections.get();
                        while (collections.get() < now + 2) {
                          if (flusher.isDone()) { // it failed: waiting would spin for good
                            throw new IllegalStateException("the collecting thread stopped");
                          }
                          Thread.onSpinWait();
                        }
                      }
                      try (Scope s = recorder.with("tenant", base + i / perValue)) {
                        inFlight.put(recorder.asyncRegion("call", Kind.WAIT));
                        assertThat(s).isNotNull();
                      }
                    }
                    return null;
                  }));
    }
    ExecutorService closer = threads.newThread();
    Future<Long> closed =
        closer.submit(
            () -> {
              start.await();
              long n = 0;
              while (n < (long) openers * perOpener) {
                AsyncRegion r = inFlight.poll(30, TimeUnit.SECONDS);
                if (r == null) {
                  break;
                }
                r.end();
                n++;
              }
              return n;
            });
    start.countDown();
    for (Future<?> w : work) {
      w.get(120, TimeUnit.SECONDS);
    }
    assertThat(closed.get(120, TimeUnit.SECONDS)).isEqualTo((long) openers * perOpener);
    done.set(true);
    flusher.get(60, TimeUnit.SECONDS);
    counts().forEach((k, n) -> seen.merge(k, n, Long::sum));

    Map<String, Long> expected = new TreeMap<>();
    for (int o = 0; o < openers; o++) {
      for (int v = 0; v < perOpener / perValue; v++) {
        expected.put("call tenant=" + (o * 1_000_000L + v), (long) perValue);
      }
    }
    assertThat(recorder.misuseCounts().get("contexts_full")).isZero();
    assertThat(table().agedOut()).as("the churn did make the table age").isGreaterThan(LIMIT);
    assertThat(seen).isEqualTo(expected);
  }
}
