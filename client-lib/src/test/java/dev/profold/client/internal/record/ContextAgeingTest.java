package dev.profold.client.internal.record;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.Kind;
import dev.profold.client.Region;
import dev.profold.client.Scope;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.threads.Cell;
import dev.profold.client.internal.threads.ThreadSnapshot;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ValueType;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Contexts age out: a process whose attribute values and paths keep changing keeps recording them
 * under their own keys instead of, once the limit is reached, under the overflow contexts; and no
 * value ever lands under another key because an id was reused while a thread, an open region or a
 * foreign writer could still use it.
 */
class ContextAgeingTest {
  private static final int LIMIT = 64;

  private final DeltaEncoder encoder =
      new DeltaEncoder(
          SourceIdentity.newBuilder().setService("s").setInstance("i").setIncarnationId(1).build());
  private final Recorder recorder = new Recorder(encoder, 1024, LIMIT);
  @RegisterExtension final TestThreads threads = new TestThreads();

  private ContextTable table() {
    return (ContextTable) recorder.contexts();
  }

  /** The key of {@code context}, as text: {@code path a/b} then {@code name=value}s in order. */
  private String key(int context) {
    return ContextKeys.key(recorder, encoder, context);
  }

  /** Collects and returns the counts of the time metric by key, decoded before the next collect. */
  private Map<String, Long> collect() {
    Map<String, Long> counts = new TreeMap<>();
    for (ThreadSnapshot t : recorder.collect()) {
      for (Cell c : t.cells()) {
        counts.merge(key(c.context()), c.state().count(), Long::sum);
      }
    }
    return counts;
  }

  @Test
  void contextsInUsePinTheirPathNodesAgainstDictionaryAgeing() {
    Region open = recorder.region("long.running", Kind.WAIT);
    try (Region step = recorder.region("step", Kind.COMPUTE)) {
      assertThat(step).isNotNull();
    }
    assertThat(collect()).containsOnly(Map.entry("long.running/step", 1L));
    for (int round = 0; round < 3; round++) { // nothing looked up, nothing buffered
      BitSet paths = new BitSet();
      encoder.pin(paths);
      encoder.age(new BitSet(), paths);
    }
    try (Region step = recorder.region("step", Kind.COMPUTE)) { // the thread's cached context
      assertThat(step).isNotNull();
    }
    open.close();
    assertThat(collect())
        .containsOnly(Map.entry("long.running", 1L), Map.entry("long.running/step", 1L));
  }

  @Test
  void attributeValuesThatKeepChangingAreAgedOutInsteadOfOverflowing() {
    for (int round = 0; round < 300; round++) {
      try (Scope s = recorder.with("tenant", (long) round);
          Region r = recorder.region("request", Kind.COMPUTE)) {
        try (Region db = recorder.region("db", Kind.IO)) {
          assertThat(db).isNotNull();
        }
        assertThat(r).isNotNull();
        assertThat(s).isNotNull();
      }
      assertThat(collect())
          .as("round %d", round)
          .containsOnly(
              Map.entry("request tenant=" + round, 1L),
              Map.entry("request/db tenant=" + round, 1L));
      assertThat(recorder.contextCount()).isLessThanOrEqualTo(LIMIT);
    }
    assertThat(recorder.misuseCounts().get("contexts_full")).isZero();
    assertThat(table().agedOut()).as("900 contexts made, at most 64 at a time").isGreaterThan(800);
    assertThat(table().eventCount()).isLessThanOrEqualTo(LIMIT + Kind.values().length);
  }

  @Test
  void withoutAgeingTheSameChurnWouldHaveOverflowed() {
    Recorder unaged = new Recorder(encoder, 1024, LIMIT);
    for (int round = 0; round < 300; round++) {
      try (Scope s = unaged.with("tenant", (long) round)) {
        unaged.region("request", Kind.COMPUTE).close();
        assertThat(s).isNotNull();
      } // no collect: nothing ages out between rounds
    }
    assertThat(unaged.misuseCounts().get("contexts_full")).isPositive();
  }

  /** Contexts made by 300 rounds of a churning attribute on the calling thread, collected. */
  private void churn() {
    for (int round = 0; round < 300; round++) {
      try (Scope s = recorder.with("tenant", (long) round)) {
        recorder.region("busy", Kind.COMPUTE).close();
        assertThat(s).isNotNull();
      }
      collect();
    }
  }

  @Test
  void regionsLeftOpenOnAnotherThreadKeepTheirContextsWhileOthersAgeOut() throws Exception {
    ExecutorService a = threads.newThread();
    Object[] open = new Object[3];
    a.submit(
            () -> {
              open[0] = recorder.with("user", "alice");
              open[1] = recorder.region("session", Kind.WAIT);
              open[2] = recorder.region("inner", Kind.COMPUTE);
            })
        .get();
    churn(); // the thread has not answered: what it was given stays pinned
    a.submit(() -> ((Region) open[2]).close()).get(); // answers first, keeping its frames
    assertThat(collect()).containsOnly(Map.entry("session/inner user=alice", 1L));
    churn(); // its open region and scope stay pinned by its frames alone
    assertThat(table().agedOut()).isGreaterThan(2 * LIMIT);
    a.submit(
            () -> {
              ((Region) open[1]).close();
              ((Scope) open[0]).close();
            })
        .get();
    assertThat(collect()).containsOnly(Map.entry("session user=alice", 1L));
  }

  @Test
  void anIdleThreadsCachedIdsAreNotReusedUnderIt() throws Exception {
    ExecutorService idle = threads.newThread();
    Runnable task =
        () -> {
          try (Scope s = recorder.with("tenant", "idle");
              Region r = recorder.region("idle.task", Kind.COMPUTE)) {
            recorder.region("step", Kind.IO).close();
            assertThat(r).isNotNull();
            assertThat(s).isNotNull();
          }
        };
    idle.submit(task).get(); // interns and caches its contexts, then stays away
    assertThat(collect())
        .containsOnly(
            Map.entry("idle.task tenant=idle", 1L), Map.entry("idle.task/step tenant=idle", 1L));
    for (int round = 0; round < 300; round++) { // the rest of the process churns
      try (Scope s = recorder.with("tenant", (long) round)) {
        recorder.region("busy", Kind.COMPUTE).close();
        assertThat(s).isNotNull();
      }
      collect();
    }
    assertThat(table().agedOut()).isGreaterThan(LIMIT);
    idle.submit(task).get(); // its caches still hold the ids it was given
    assertThat(collect())
        .containsOnly(
            Map.entry("idle.task tenant=idle", 1L), Map.entry("idle.task/step tenant=idle", 1L));
  }

  @Test
  void aForeignWritersIdsStayValidUntilItReleasesThem() {
    IdHolder jfr = recorder.holder();
    int cached = recorder.regionContext(jfr, 0, "sampled", Kind.COMPUTE);
    ForeignThread f = recorder.foreign(42, "worker-1", false);
    for (int round = 0; round < 300; round++) {
      try (Scope s = recorder.with("tenant", (long) round)) {
        recorder.region("busy", Kind.COMPUTE).close();
        assertThat(s).isNotNull();
      }
      collect();
    }
    assertThat(jfr.requested()).as("asked for its ids back").isTrue();
    f.record(cached, recorder.timeMetric(), 1.0); // not released yet: still its context
    assertThat(collect()).containsEntry("sampled", 1L);

    recorder.release(jfr);
    assertThat(jfr.requested()).isFalse();
    for (int round = 0; round < 300; round++) {
      try (Scope s = recorder.with("tenant", (long) round)) {
        recorder.region("busy", Kind.COMPUTE).close();
        assertThat(s).isNotNull();
      }
      collect();
    }
    int again = recorder.regionContext(jfr, 0, "sampled", Kind.COMPUTE);
    f.record(again, recorder.timeMetric(), 1.0);
    assertThat(collect()).containsEntry("sampled", 1L);
    recorder.forget(jfr);
  }

  @Test
  void idsReleasedWhileACollectionRunsAreFreedOnlyByTheNextOne() {
    ContextTable t = new ContextTable(encoder, 8, () -> {});
    IdHolder h = t.holder(() -> {});
    List<Integer> ids = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      ContextTable.AttributeSetting v =
          new ContextTable.AttributeSetting("k", ValueType.VALUE_TYPE_STRING, "v" + i, 0);
      ids.add(t.child(0, t.attributeEvent(v, h), h));
    }
    t.beginCollection(); // the tables are swapped: what the holder writes now is not taken...
    t.release(h, new int[0]); // ...and it releases its ids during this collection
    t.endCollection();
    assertThat(ids).allMatch(t::inUse);
    assertThat(t.agedOut()).isZero();

    t.beginCollection(); // this one takes those writes: now the ids may go
    t.endCollection();
    assertThat(t.agedOut()).isEqualTo(3); // 7 in use, the root included: down to half of 8
    assertThat(ids.stream().filter(t::inUse)).hasSize(3);
  }

  @Test
  void writersChurningWhileTheFlushAgesContextsOutLoseAndMisplaceNothing() throws Exception {
    int writerThreads = 2;
    int perThread = 60_000;
    int perValue = 500; // a value lives for 500 regions: few at a time, many over the run
    AtomicBoolean done = new AtomicBoolean();
    AtomicLong collections = new AtomicLong();
    Map<String, Long> seen = new TreeMap<>();
    Future<?> flusher =
        threads
            .newThread()
            .submit(
                () -> {
                  while (!done.get()) {
                    collect().forEach((k, n) -> seen.merge(k, n, Long::sum));
                    collections.incrementAndGet();
                  }
                  return null;
                });
    // Before each new value a writer lets a collection pass, so that the values in use between
    // two collections stay well under the limit however the threads are scheduled.
    IntConsumer pace =
        i -> {
          if (i % perValue == 0) {
            long now = collections.get();
            while (collections.get() < now + 2 && !done.get()) {
              if (flusher.isDone()) { // it failed: waiting for it would spin for good
                throw new IllegalStateException("the collecting thread stopped");
              }
              Thread.onSpinWait();
            }
          }
        };
    CountDownLatch start = new CountDownLatch(1);
    List<Future<?>> writers = new ArrayList<>();
    for (int t = 0; t < writerThreads; t++) {
      long base = t * 1_000_000L;
      writers.add(
          threads
              .newThread()
              .submit(
                  () -> {
                    start.await();
                    for (int i = 0; i < perThread; i++) {
                      pace.accept(i);
                      try (Scope s = recorder.with("tenant", base + i / perValue)) {
                        recorder.region("work", Kind.COMPUTE).close();
                        assertThat(s).isNotNull();
                      }
                    }
                    return null;
                  }));
    }
    writers.add( // a foreign writer, as the agent's JFR sink: releases whenever asked
        threads
            .newThread()
            .submit(
                () -> {
                  start.await();
                  IdHolder holder = recorder.holder();
                  ForeignThread f = recorder.foreign(7_000_000L, "sampler", false);
                  Map<String, Integer> cache = new HashMap<>();
                  for (int i = 0; i < perThread; i++) {
                    pace.accept(i);
                    if (holder.requested()) {
                      cache.clear();
                      recorder.release(holder);
                    }
                    String v = "s" + i / perValue;
                    Integer ctx = cache.get(v);
                    if (ctx == null) {
                      ctx = recorder.attributeContext(holder, 0, "event", v);
                      cache.put(v, ctx);
                    }
                    f.record(ctx, recorder.timeMetric(), 1.0);
                  }
                  f.retire();
                  recorder.forget(holder);
                  return null;
                }));
    start.countDown();
    for (Future<?> w : writers) {
      w.get(60, TimeUnit.SECONDS);
    }
    done.set(true);
    flusher.get(60, TimeUnit.SECONDS);
    collect().forEach((k, n) -> seen.merge(k, n, Long::sum));

    Map<String, Long> expected = new TreeMap<>();
    for (int t = 0; t < writerThreads; t++) {
      for (int v = 0; v < perThread / perValue; v++) {
        expected.put("work tenant=" + (t * 1_000_000L + v), (long) perValue);
      }
    }
    for (int v = 0; v < perThread / perValue; v++) {
      expected.put("event=s" + v, (long) perValue);
    }
    assertThat(recorder.misuseCounts().get("contexts_full")).isZero();
    assertThat(seen).isEqualTo(expected);
  }

  /**
   * A region first entered while the table was full went to the overflow context; once ageing has
   * made room, entering it again (with the same name instance, which a thread's region cache keys
   * on) must get a context of its own, the same one as any other instance of the name.
   */
  @Test
  void aRegionFirstEnteredWhileTheTableWasFullGetsItsOwnContextOnceThereIsRoom() {
    Recorder small = new Recorder(encoder, 1024, 8);
    small.collect();
    IdHolder filler = small.holder();
    for (int i = 0; i < 7; i++) {
      small.regionContext(filler, 0, "f" + i, Kind.COMPUTE); // full: the root and 7
    }
    small.forget(filler);
    small.collect(); // over half: holders are asked for their ids (this thread holds none yet)
    String name = "x";
    try (Region r = small.region(name, Kind.COMPUTE)) {
      assertThat(r).isNotNull();
    }
    int first = onlyContext(small.collect()); // ageing frees the filler's contexts here
    assertThat(small.isOverflow(0, first)).as("entered while full").isTrue();
    assertThat(small.contextCount()).isLessThanOrEqualTo(4);

    for (int round = 0; round < 3; round++) {
      try (Region r = small.region(name, Kind.COMPUTE)) {
        assertThat(r).isNotNull();
      }
      try (Region r = small.region(new String(name), Kind.COMPUTE)) { // another instance
        assertThat(r).isNotNull();
      }
      int context = onlyContext(small.collect());
      assertThat(small.isOverflow(0, context)).as("round %d", round).isFalse();
    }
  }

  /** The one context the calling thread recorded in, from a collection. */
  private static int onlyContext(List<ThreadSnapshot> snapshots) {
    assertThat(snapshots).hasSize(1);
    List<Cell> cells = snapshots.get(0).cells();
    assertThat(cells).hasSize(1);
    return cells.get(0).context();
  }
}
