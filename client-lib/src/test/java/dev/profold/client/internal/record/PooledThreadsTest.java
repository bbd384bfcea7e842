package dev.profold.client.internal.record;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.AsyncRegion;
import dev.profold.client.Kind;
import dev.profold.client.Region;
import dev.profold.client.Scope;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.threads.Cell;
import dev.profold.client.internal.threads.ThreadSnapshot;
import dev.profold.proto.v1.SourceIdentity;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * States lent to pooled threads (virtual threads in production): taken at the first open, given
 * back when the last frame closes, so their number follows the threads recording at once, not the
 * threads ever started. Platform threads stand in for virtual ones here (the recorder is told which
 * threads are pooled), so this runs on Java 17; {@code VirtualThreadsTest} runs real ones.
 */
class PooledThreadsTest {
  private final DeltaEncoder encoder =
      new DeltaEncoder(
          SourceIdentity.newBuilder().setService("s").setInstance("i").setIncarnationId(1).build());

  /** Threads named "" (as virtual threads are) or "req-..." are pooled. */
  private final Recorder recorder =
      new Recorder(
          encoder,
          1024,
          Integer.MAX_VALUE,
          t -> t.getName().isEmpty() || t.getName().startsWith("req-"));

  private final int bytes = recorder.metric("bytes", "bytes");

  private static void runAll(List<Thread> threads) throws InterruptedException {
    threads.forEach(Thread::start);
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(30));
      assertThat(t.isAlive()).as("thread finished").isFalse();
    }
  }

  /** What one request does: nested regions, a scope, a measurement inside and one outside. */
  private void request() {
    try (Region handle = recorder.region("handle", Kind.COMPUTE)) {
      try (Scope tenant = recorder.with("tenant", "t1");
          Region query = recorder.region("db.query", Kind.IO)) {
        recorder.record(bytes, 10);
      }
    }
    recorder.record(bytes, 1); // outside any region: taken and given back at once
  }

  private static long count(List<ThreadSnapshot> snapshots, int metric) {
    long n = 0;
    for (ThreadSnapshot t : snapshots) {
      for (Cell c : t.cells()) {
        if (c.metric() == metric) {
          n += c.state().count();
        }
      }
    }
    return n;
  }

  @Test
  void statesFollowTheThreadsRecordingAtOnceNotTheThreadsEverStarted() throws Exception {
    for (int batch = 0; batch < 250; batch++) { // 1,000 short-lived threads, 4 at a time
      List<Thread> threads = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        threads.add(new Thread(this::request, ""));
      }
      runAll(threads);
    }
    assertThat(recorder.states()).isLessThanOrEqualTo(4);
    assertThat(recorder.pool(ThreadGroups.VIRTUAL).idleCount()).isEqualTo(recorder.states());

    List<ThreadSnapshot> s = recorder.collect();
    assertThat(count(s, recorder.timeMetric())).isEqualTo(2_000); // handle + db.query, each 1,000
    assertThat(count(s, bytes)).isEqualTo(2_000);
    assertThat(s).allSatisfy(t -> assertThat(t.group()).isEqualTo("virtual"));
    assertThat(s).allSatisfy(t -> assertThat(t.name()).matches("virtual#[1-4]"));
    assertThat(s).allSatisfy(t -> assertThat(t.threadId()).isLessThan(-1));
    assertThat(recorder.misuseCounts().values()).allMatch(n -> n == 0);
  }

  @Test
  void asyncRegionsOpenedAndClosedOnPooledThreadsLeaveNoStateLent() throws Exception {
    List<AsyncRegion> open = java.util.Collections.synchronizedList(new ArrayList<>());
    for (int batch = 0; batch < 50; batch++) { // each opens one and closes another's
      List<Thread> threads = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        threads.add(
            new Thread(
                () -> {
                  AsyncRegion mine = recorder.asyncRegion("call", Kind.WAIT);
                  AsyncRegion other;
                  synchronized (open) { // one look and take: two threads must not take one
                    other = open.isEmpty() ? null : open.remove(0);
                    open.add(mine);
                  }
                  if (other != null) {
                    other.end();
                  }
                },
                ""));
      }
      runAll(threads);
    }
    assertThat(recorder.states()).isLessThanOrEqualTo(4);
    assertThat(recorder.pool(ThreadGroups.VIRTUAL).idleCount()).isEqualTo(recorder.states());
    int left = open.size();
    open.forEach(AsyncRegion::end); // the rest on this (platform) thread
    List<ThreadSnapshot> s = recorder.collect();
    int latency = recorder.ownMetric(Recorder.ASYNC_DURATION, "seconds");
    assertThat(count(s, latency)).isEqualTo(200);
    long onThisThread =
        s.stream()
            .filter(t -> t.threadId() == Thread.currentThread().getId())
            .mapToLong(t -> count(List.of(t), latency))
            .sum();
    assertThat(onThisThread).as("each counted in the thread that closed it").isEqualTo(left);
    assertThat(recorder.misuseCounts().values()).allMatch(n -> n == 0);
  }

  @Test
  void aThreadKeepsItsStateUntilItsLastFrameCloses() throws Exception {
    AtomicReference<String> failure = new AtomicReference<>("not run");
    runAll(
        List.of(
            new Thread(
                () -> {
                  ThreadState first;
                  try (Region outer = recorder.region("outer", Kind.COMPUTE)) {
                    first = recorder.stateOfCallingThread();
                    try (Scope s = recorder.with("k", 1L)) {
                      if (recorder.pool(ThreadGroups.VIRTUAL).idleCount() != 0) {
                        failure.set("given back while a region and a scope were open");
                        return;
                      }
                    }
                    if (recorder.stateOfCallingThread() != first) {
                      failure.set("a new state while the outer region was open");
                      return;
                    }
                  }
                  failure.set(
                      recorder.pool(ThreadGroups.VIRTUAL).idleCount() == 1
                          ? ""
                          : "not given back when the last frame closed");
                },
                "")));
    assertThat(failure.get()).isEmpty();
  }

  @Test
  void aHandleClosedAgainAfterItsStateWentBackCountsAsClosedTwice() throws Exception {
    runAll(
        List.of(
            new Thread(
                () -> {
                  Region r = recorder.region("once", Kind.COMPUTE);
                  r.close();
                  r.close();
                },
                "")));
    assertThat(recorder.misuseCounts()).containsEntry("closed_twice", 1L);
    assertThat(count(recorder.collect(), recorder.timeMetric())).isEqualTo(1);
  }

  @Test
  void aStaleHandleClosedOnAnotherThreadLeavesTheNextBorrowersRegionsAlone() throws Exception {
    AtomicReference<Region> stale = new AtomicReference<>();
    runAll(
        List.of(
            new Thread(
                () -> {
                  Region r = recorder.region("a", Kind.COMPUTE);
                  r.close(); // its state goes back to the pool, r still refers to its frame
                  stale.set(r);
                },
                "")));
    CountDownLatch opened = new CountDownLatch(1);
    CountDownLatch staleClosed = new CountDownLatch(1);
    Thread b =
        new Thread(
            () -> {
              try (Region outer = recorder.region("b", Kind.COMPUTE)) {
                opened.countDown();
                staleClosed.await();
                try (Region inner = recorder.region("c", Kind.COMPUTE)) {
                  assertThat(inner).isNotNull();
                }
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            "");
    b.start();
    assertThat(opened.await(30, TimeUnit.SECONDS)).isTrue();
    stale.get().close(); // the same frame object as b's open region: it must not close it
    staleClosed.countDown();
    b.join();

    IdHolder holder = recorder.holder();
    int contextB = recorder.regionContext(holder, 0, "b", Kind.COMPUTE);
    int contextBc = recorder.regionContext(holder, contextB, "c", Kind.COMPUTE);
    int contextC = recorder.regionContext(holder, 0, "c", Kind.COMPUTE);
    java.util.Map<Integer, Long> byContext = new java.util.HashMap<>();
    for (ThreadSnapshot t : recorder.collect()) {
      for (Cell c : t.cells()) {
        byContext.merge(c.context(), c.state().count(), Long::sum);
      }
    }
    assertThat(byContext).containsEntry(contextB, 1L).containsEntry(contextBc, 1L);
    assertThat(byContext).doesNotContainKey(contextC);
    // A handle of an earlier loan is a second close (client.md); before, a close of it on another
    // thread than the borrower's counted as closed_on_other_thread.
    assertThat(recorder.misuseCounts())
        .containsEntry("closed_on_other_thread", 0L)
        .containsEntry("closed_twice", 1L);
  }

  @Test
  void aRegionClosedOnAnotherThreadIsClosedWithThatTimeAtItsThreadsNextOpen() throws Exception {
    IdHolder holder = recorder.holder();
    int async = recorder.regionContext(holder, 0, "async", Kind.WAIT);
    int next = recorder.regionContext(holder, 0, "next", Kind.COMPUTE);
    runAll(
        List.of(
            new Thread(
                () -> {
                  Region r = recorder.region("async", Kind.WAIT);
                  Thread completer = new Thread(r::close, "completer"); // not pooled
                  completer.start();
                  try {
                    completer.join();
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  try (Region n = recorder.region("next", Kind.COMPUTE)) { // closes "async" first
                    assertThat(n).isNotNull();
                  }
                },
                "")));
    java.util.Map<Integer, Long> byContext = new java.util.HashMap<>();
    for (ThreadSnapshot t : recorder.collect()) {
      for (Cell c : t.cells()) {
        byContext.merge(c.context(), c.state().count(), Long::sum);
      }
    }
    assertThat(byContext).containsEntry(async, 1L).containsEntry(next, 1L).hasSize(2);
    assertThat(recorder.misuseCounts()).containsEntry("closed_on_other_thread", 1L);
    assertThat(recorder.states()).isEqualTo(1);
    assertThat(recorder.pool(ThreadGroups.VIRTUAL).idleCount()).isEqualTo(1); // given back
  }

  @Test
  void aRegionHandedOnIsRecordedWhenItsOwnThreadEndedBeforeTheClose() throws Exception {
    IdHolder holder = recorder.holder();
    int async = recorder.regionContext(holder, 0, "async", Kind.WAIT);
    AtomicReference<Region> handed = new AtomicReference<>();
    runAll(List.of(new Thread(() -> handed.set(recorder.region("async", Kind.WAIT)), "")));
    handed.get().close(); // on this (platform) thread, after the virtual one ended

    long count = 0;
    for (ThreadSnapshot t : recorder.collect()) {
      for (Cell c : t.cells()) {
        if (c.context() == async) {
          count += c.state().count();
        }
      }
    }
    assertThat(count).isEqualTo(1);
    assertThat(recorder.misuseCounts()).containsEntry("left_open", 0L);
    assertThat(recorder.states()).isZero();
  }

  @Test
  void aHandleOfAnEarlierLoanClosedByItsOwnThreadLeavesTheNewRegionsAlone() throws Exception {
    runAll(
        List.of(
            new Thread(
                () -> {
                  Region r = recorder.region("a", Kind.COMPUTE);
                  r.close(); // the state goes back, and this thread takes it again below
                  try (Region outer = recorder.region("b", Kind.COMPUTE);
                      Region inner = recorder.region("c", Kind.COMPUTE)) {
                    r.close(); // a handle of the earlier loan, at the depth of "b"
                  }
                },
                "")));
    IdHolder holder = recorder.holder();
    int contextB = recorder.regionContext(holder, 0, "b", Kind.COMPUTE);
    int contextBc = recorder.regionContext(holder, contextB, "c", Kind.COMPUTE);
    java.util.Map<Integer, Long> byContext = new java.util.HashMap<>();
    for (ThreadSnapshot t : recorder.collect()) {
      for (Cell c : t.cells()) {
        byContext.merge(c.context(), c.state().count(), Long::sum);
      }
    }
    assertThat(byContext).containsEntry(contextB, 1L).containsEntry(contextBc, 1L);
    assertThat(recorder.misuseCounts())
        .containsEntry("closed_twice", 1L)
        .containsEntry("unbalanced", 0L);
  }

  @Test
  void aScopeReusingAFrameClosedAgainElsewhereStaysOpen() throws Exception {
    runAll(
        List.of(
            new Thread(
                () -> {
                  try (Region r = recorder.region("r", Kind.COMPUTE)) {
                    Region q = recorder.region("q", Kind.COMPUTE);
                    q.close();
                    Thread other = new Thread(q::close, "other"); // flags q's frame, not open
                    other.start();
                    try {
                      other.join();
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                    try (Scope s = recorder.with("k", "v")) { // the same frame as q's
                      try (Region inner = recorder.region("inner", Kind.COMPUTE)) {
                        recorder.record(bytes, 1);
                      }
                    }
                  }
                },
                "")));
    IdHolder holder = recorder.holder();
    int r = recorder.regionContext(holder, 0, "r", Kind.COMPUTE);
    int scoped = recorder.attributeContext(holder, r, "k", "v");
    int inner = recorder.regionContext(holder, scoped, "inner", Kind.COMPUTE);
    long underScope = 0;
    for (ThreadSnapshot t : recorder.collect()) {
      for (Cell c : t.cells()) {
        if (c.context() == inner) {
          underScope += c.state().count();
        }
      }
    }
    assertThat(underScope).isEqualTo(2); // the region's time and the measurement
    assertThat(recorder.misuseCounts())
        .containsEntry("closed_on_other_thread", 1L)
        .containsEntry("closed_twice", 0L);
  }

  @Test
  void aThreadThatEndsHoldingAStateLosesItAtTheNextCollection() throws Exception {
    runAll(List.of(new Thread(() -> recorder.region("left.open", Kind.COMPUTE), "")));
    assertThat(recorder.states()).isEqualTo(1);
    assertThat(recorder.pool(ThreadGroups.VIRTUAL).idleCount()).isZero();

    recorder.collect();
    assertThat(recorder.states()).isZero();
    assertThat(recorder.misuseCounts()).containsEntry("left_open", 1L);

    runAll(List.of(new Thread(this::request, "")));
    assertThat(recorder.states()).isEqualTo(1);
    assertThat(count(recorder.collect(), recorder.timeMetric())).isEqualTo(2);
  }

  @Test
  void idleStatesAreRetiredAfterTwoCollectionsWithoutRecording() throws Exception {
    CountDownLatch allOpen = new CountDownLatch(3);
    CountDownLatch close = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      threads.add(
          new Thread(
              () -> {
                try (Region r = recorder.region("burst", Kind.COMPUTE)) {
                  allOpen.countDown();
                  close.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              },
              ""));
    }
    threads.forEach(Thread::start);
    assertThat(allOpen.await(30, TimeUnit.SECONDS)).isTrue();
    close.countDown();
    for (Thread t : threads) {
      t.join();
    }
    assertThat(recorder.states()).isEqualTo(3);

    assertThat(count(recorder.collect(), recorder.timeMetric())).isEqualTo(3); // recorded
    recorder.collect(); // idle once
    recorder.collect(); // idle twice
    assertThat(recorder.states()).isEqualTo(3);
    recorder.collect(); // retired, drained, dropped
    assertThat(recorder.states()).isZero();
  }

  @Test
  void namedPooledThreadsArePooledByTheirGroup() throws Exception {
    runAll(List.of(new Thread(this::request, "req-17"), new Thread(this::request, "")));
    List<ThreadSnapshot> s = recorder.collect();
    Set<String> groups = new HashSet<>();
    s.forEach(t -> groups.add(t.group() + " " + t.name()));
    assertThat(groups).containsExactlyInAnyOrder("req-* req-*#1", "virtual virtual#1");
  }

  @Test
  void everyValueIsCollectedOnceWhileStatesChangeHandsUnderACollectingThread() throws Exception {
    int threads = 4;
    int perThread = 20_000;
    List<Thread> workers = new ArrayList<>();
    for (int i = 0; i < threads; i++) {
      workers.add(
          new Thread(
              () -> {
                for (int j = 0; j < perThread; j++) {
                  try (Region r = recorder.region("op", Kind.COMPUTE)) {
                    recorder.record(bytes, 1);
                  }
                }
              },
              "req-" + i));
    }
    long total = 0;
    long values = 0;
    workers.forEach(Thread::start);
    while (workers.stream().anyMatch(Thread::isAlive)) {
      List<ThreadSnapshot> s = recorder.collect(); // retires idle states as the workers churn
      total += count(s, recorder.timeMetric());
      values += count(s, bytes);
    }
    List<ThreadSnapshot> last = recorder.collect();
    total += count(last, recorder.timeMetric());
    values += count(last, bytes);
    assertThat(total).isEqualTo((long) threads * perThread);
    assertThat(values).isEqualTo((long) threads * perThread);
  }
}
