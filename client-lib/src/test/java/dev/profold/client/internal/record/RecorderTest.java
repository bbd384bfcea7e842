package dev.profold.client.internal.record;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.client.Kind;
import dev.profold.client.Region;
import dev.profold.client.Scope;
import dev.profold.client.ThreadAggregation;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.threads.Cell;
import dev.profold.client.internal.threads.EntryEncoder;
import dev.profold.client.internal.threads.ThreadAggregators;
import dev.profold.client.internal.threads.ThreadSnapshot;
import dev.profold.proto.v1.Dictionary;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.PathNode;
import dev.profold.proto.v1.SourceIdentity;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class RecorderTest {
  private final DeltaEncoder encoder =
      new DeltaEncoder(
          SourceIdentity.newBuilder().setService("s").setInstance("i").setIncarnationId(1).build());
  private final Recorder recorder = new Recorder(encoder, 1024);
  private final IdHolder holder = recorder.holder();

  /** Region path ("a/b") of a context, from the encoder's path nodes. */
  private String path(int context) {
    Dictionary dictionary = encoder.definitions();
    Map<Integer, PathNode> nodes = new HashMap<>();
    dictionary.getPathNodesList().forEach(n -> nodes.put(n.getId(), n));
    Map<Integer, String> strings = dictionary.getStringsMap();
    int node = recorder.contexts().pathNode(context);
    String p = "";
    while (node != 0) {
      PathNode n = nodes.get(node);
      p = strings.get(n.getNameId()) + (p.isEmpty() ? "" : "/" + p);
      node = n.getParentId();
    }
    return p;
  }

  private Map<String, Long> countsByPath(List<ThreadSnapshot> snapshots, int metric) {
    Map<String, Long> out = new HashMap<>();
    for (ThreadSnapshot t : snapshots) {
      for (Cell c : t.cells()) {
        if (c.metric() == metric) {
          out.merge(path(c.context()), c.state().count(), Long::sum);
        }
      }
    }
    return out;
  }

  @Test
  void theNewThreadActionRunsOnceOnEachPlatformThreadAsItFirstRecordsButNotOnPooledOnes()
      throws InterruptedException {
    Recorder pooling = new Recorder(encoder, 64, 1000, t -> t.getName().startsWith("pooled-"));
    List<String> ranOn = new java.util.concurrent.CopyOnWriteArrayList<>();
    pooling.onNewThread(() -> ranOn.add(Thread.currentThread().getName()));
    for (String name : List.of("platform-1", "platform-2", "pooled-1")) {
      Thread t =
          new Thread(
              () -> {
                pooling.region("a", Kind.COMPUTE).close();
                pooling.region("b", Kind.COMPUTE).close();
              },
              name);
      t.start();
      t.join();
    }
    assertThat(ranOn).containsExactly("platform-1", "platform-2");
  }

  @Test
  void nestedRegionsRecordTheirTimeUnderTheirPath() {
    for (int i = 0; i < 3; i++) {
      try (Region outer = recorder.region("handle", Kind.COMPUTE)) {
        try (Region inner = recorder.region("db.query", Kind.IO)) {
          assertThat(inner).isNotNull();
        }
        try (Region inner = recorder.region("db.query", Kind.IO)) {
          assertThat(inner).isNotNull();
        }
      }
    }
    List<ThreadSnapshot> s = recorder.collect();
    assertThat(s).hasSize(1);
    assertThat(s.get(0).name()).isEqualTo(Thread.currentThread().getName());
    assertThat(countsByPath(s, recorder.timeMetric()))
        .containsEntry("handle", 3L)
        .containsEntry("handle/db.query", 6L)
        .hasSize(2);
    // Inclusive time: the outer region's total covers its inner regions.
    double outer = 0;
    double inner = 0;
    for (Cell c : s.get(0).cells()) {
      if (recorder.contexts().kind(c.context()) == Kind.COMPUTE) {
        outer += c.state().sum();
      } else {
        inner += c.state().sum();
      }
    }
    assertThat(outer).isGreaterThanOrEqualTo(inner);
    assertThat(recorder.collect()).as("nothing new since the last collect").isEmpty();
  }

  @Test
  void aCollectionFailingPartWayCountsTheValuesItHadTakenAsDropped() {
    int ctx = recorder.regionContext(holder, 0, "work", Kind.COMPUTE);
    ForeignThread a = recorder.foreign(101, "a", false);
    ForeignThread b = recorder.foreign(102, "b", false);
    for (int i = 0; i < 3; i++) {
      a.record(ctx, recorder.timeMetric(), 0.001);
    }
    for (int i = 0; i < 4; i++) {
      b.record(ctx, recorder.timeMetric(), 0.001);
    }
    int[] drains = {0};
    recorder.afterEachDrain =
        () -> {
          if (++drains[0] == 2) {
            throw new OutOfMemoryError("planted, after the second table was drained");
          }
        };

    assertThatThrownBy(recorder::collect).isInstanceOf(OutOfMemoryError.class);

    assertThat(recorder.takeDropped()).as("both tables' values, taken and lost").isEqualTo(7);
    assertThat(recorder.takeThreadsLost())
        .as("whose CPU time must not value later samples")
        .containsExactlyInAnyOrder(101L, 102L);
    assertThat(recorder.takeThreadsLost()).as("taken once").isEmpty();
    recorder.afterEachDrain = () -> {};
    assertThat(recorder.collect()).as("not given twice").isEmpty();
  }

  @Test
  void measurementsGoToTheCurrentContextAndScopesMakeTheirOwn() {
    int bytes = recorder.metric("bytes", "bytes");
    recorder.record(bytes, 10);
    try (Region r = recorder.region("io", Kind.IO);
        Scope tenant = recorder.with("tenant", "42")) {
      recorder.record(bytes, 5);
      try (Scope inner = recorder.with("tenant", "7")) {
        recorder.record(bytes, 1);
      }
      recorder.record(bytes, 5);
    }
    List<Cell> cells = recorder.collect().get(0).cells();
    Map<String, Double> sums = new HashMap<>();
    for (Cell c : cells) {
      if (c.metric() == bytes) {
        Entry.Builder e = Entry.newBuilder();
        recorder.contexts().addKey(c.context(), e);
        sums.put(keyText(e), c.state().sum());
      }
    }
    assertThat(sums).hasSize(3).containsValues(10.0, 10.0, 1.0);
    // The inner scope's key holds tenant once, with the inner value.
    String innerKey =
        sums.entrySet().stream().filter(x -> x.getValue() == 1.0).findFirst().get().getKey();
    assertThat(innerKey).contains("tenant=7").doesNotContain("tenant=42");
  }

  private String keyText(Entry.Builder e) {
    Dictionary dictionary = encoder.definitions();
    Map<Integer, String> strings = dictionary.getStringsMap();
    Map<Integer, String> attrs = new HashMap<>();
    dictionary.getAttributesList().forEach(a -> attrs.put(a.getId(), a.getName()));
    List<String> parts = new ArrayList<>();
    e.getKeyList()
        .forEach(
            v ->
                parts.add(
                    attrs.get(v.getAttributeId())
                        + "="
                        + (v.hasStringId() ? strings.get(v.getStringId()) : v.getPathNodeId())));
    return String.join(",", parts);
  }

  @Test
  void misuseIsCountedAndNeverThrows() throws Exception {
    Region r = recorder.region("a", Kind.COMPUTE);
    r.close();
    r.close(); // twice
    assertThat(recorder.misuseCounts()).containsEntry("closed_twice", 1L);

    Region outer = recorder.region("outer", Kind.COMPUTE);
    recorder.region("inner", Kind.WAIT); // never closed
    outer.close(); // closes inner too
    assertThat(recorder.misuseCounts()).containsEntry("unbalanced", 1L);

    Region mine = recorder.region("mine", Kind.COMPUTE);
    Thread other = new Thread(mine::close);
    other.start();
    other.join();
    assertThat(recorder.misuseCounts()).containsEntry("closed_on_other_thread", 1L);
    mine.close();

    try (Scope a = recorder.with("k", "text")) {
      assertThat(a).isNotNull();
    }
    try (Scope b = recorder.with("k", 3L)) {
      assertThat(b).isNotNull();
    }
    assertThat(recorder.misuseCounts()).containsEntry("attribute_type_change", 1L);

    recorder.record(recorder.metric("x", ""), Double.NaN);
    recorder.with("bad key!", 1L).close();
    assertThat(recorder.misuseCounts().get("bad_argument")).isEqualTo(2L);

    Map<String, Long> counts = countsByPath(recorder.collect(), recorder.timeMetric());
    assertThat(counts)
        .containsEntry("a", 1L)
        .containsEntry("outer", 1L)
        .containsEntry("outer/inner", 1L)
        .containsEntry("mine", 1L);
  }

  @Test
  void aRegionClosedElsewhereAfterItsThreadEndedIsRecordedWithThatCloseTime() throws Exception {
    java.util.concurrent.atomic.AtomicReference<Region> handed =
        new java.util.concurrent.atomic.AtomicReference<>();
    Thread opener = new Thread(() -> handed.set(recorder.region("async", Kind.WAIT)), "opener");
    long before = System.nanoTime();
    opener.start();
    opener.join();
    long workStart = System.nanoTime(); // the asynchronous work: 20 ms at least (a park may
    // return early, so park until they have passed)
    for (long left = 20_000_000L; left > 0; left = 20_000_000L - (System.nanoTime() - workStart)) {
      java.util.concurrent.locks.LockSupport.parkNanos(left);
    }
    handed.get().close(); // on this thread, after the opener ended: nobody else will apply it
    long elapsed = System.nanoTime() - before;

    List<ThreadSnapshot> collected = recorder.collect();
    StateSum async = sumByPath(collected, recorder.timeMetric()).get("async");
    assertThat(async).as("the region's record").isNotNull();
    assertThat(async.count).isEqualTo(1);
    assertThat(async.sum).isBetween(0.020, elapsed * 1e-9);
    assertThat(recorder.misuseCounts())
        .containsEntry("closed_on_other_thread", 1L)
        .containsEntry("left_open", 0L);
    assertThat(recorder.states()).as("the ended thread's state is dropped").isZero();
  }

  @Test
  void aRegionLeftOpenByAThreadThatEndedIsCountedLeftOpen() throws Exception {
    Thread t =
        new Thread(
            () -> {
              recorder.region("forgotten", Kind.COMPUTE); // never closed
              try (Scope s = recorder.with("k", "v")) { // a scope left open is no region
                recorder.with("k2", "v2");
              }
            },
            "forgetful");
    t.start();
    t.join();
    assertThat(countsByPath(recorder.collect(), recorder.timeMetric())).isEmpty();
    assertThat(recorder.misuseCounts()).containsEntry("left_open", 1L);
  }

  /** Count and sum of {@code metric} per path. */
  private Map<String, StateSum> sumByPath(List<ThreadSnapshot> snapshots, int metric) {
    Map<String, StateSum> out = new HashMap<>();
    for (ThreadSnapshot t : snapshots) {
      for (Cell c : t.cells()) {
        if (c.metric() == metric) {
          StateSum s = out.computeIfAbsent(path(c.context()), k -> new StateSum());
          s.count += c.state().count();
          s.sum += c.state().sum();
        }
      }
    }
    return out;
  }

  private static final class StateSum {
    long count;
    double sum;
  }

  /**
   * Exactness under concurrency: N threads record M values each while a flusher collects as fast as
   * it can; the sum of everything collected equals exactly what was recorded, none lost or doubled.
   */
  @Test
  void concurrentRecordingAndFlushingLoseAndDoubleNothing() throws Exception {
    int threads = 4;
    int events = 200_000;
    int metric = recorder.metric("units", "");
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread w =
          new Thread(
              () -> {
                try {
                  start.await();
                } catch (InterruptedException e) {
                  return;
                }
                for (int i = 0; i < events; i++) {
                  try (Region r = recorder.region(i % 2 == 0 ? "even" : "odd", Kind.COMPUTE)) {
                    recorder.record(metric, 1.0);
                  }
                }
              },
              "worker-" + t);
      workers.add(w);
      w.start();
    }
    AtomicBoolean done = new AtomicBoolean();
    long[] totals = new long[3]; // metric count, metric sum, region count
    Thread flusher =
        new Thread(
            () -> {
              while (!done.get()) {
                add(totals, recorder.collect(), metric);
              }
            });
    flusher.start();
    start.countDown();
    for (Thread w : workers) {
      w.join();
    }
    done.set(true);
    flusher.join();
    add(totals, recorder.collect(), metric);
    long expected = (long) threads * events;
    assertThat(totals[0]).isEqualTo(expected);
    assertThat(totals[1]).isEqualTo(expected);
    assertThat(totals[2]).isEqualTo(expected);
  }

  private void add(long[] totals, List<ThreadSnapshot> snapshots, int metric) {
    for (ThreadSnapshot s : snapshots) {
      for (Cell c : s.cells()) {
        if (c.metric() == metric) {
          totals[0] += c.state().count();
          totals[1] += (long) c.state().sum();
        } else if (c.metric() == recorder.timeMetric()) {
          totals[2] += c.state().count();
        }
      }
    }
  }

  @Test
  void regionTimesStayExactBeyondTheDirectCellArrayAndAcrossIntervals() {
    // 300 distinct region contexts: more than the per-context time-cell array starts with, so it
    // has to grow; three intervals, so cells are reset and reused between them.
    for (int interval = 1; interval <= 3; interval++) {
      for (int r = 0; r < 300; r++) {
        for (int k = 0; k <= r % 3; k++) {
          try (Region x = recorder.region("r" + r, Kind.COMPUTE)) {
            assertThat(x).isNotNull();
          }
        }
      }
      Map<String, Long> counts = countsByPath(recorder.collect(), recorder.timeMetric());
      assertThat(counts).hasSize(300);
      for (int r = 0; r < 300; r++) {
        assertThat(counts).containsEntry("r" + r, (long) (r % 3 + 1));
      }
    }
    assertThat(recorder.collect()).isEmpty(); // nothing recorded since: nothing reported
  }

  @Test
  void threadNamesAreGroupedByPool() {
    assertThat(ThreadGroups.normalise("http-exec-17")).isEqualTo("http-exec-*");
    assertThat(ThreadGroups.normalise("pool-2-thread-15")).isEqualTo("pool-*-thread-*");
    assertThat(ThreadGroups.normalise("main")).isEqualTo("main");
    assertThat(ThreadGroups.normalise("")).isEqualTo("*");
  }

  @Test
  void aThreadTheAgentRecordsForIsGroupedByItsLatestName() {
    // Before: by the name of its first event, for good.
    ForeignThread f = recorder.foreign(77, "OkHttp https://a.example/1", false);
    int region = recorder.regionContext(recorder.holder(), 0, "call", Kind.IO);
    f.record(region, recorder.timeMetric(), 0.5);
    assertThat(recorder.collect())
        .extracting(ThreadSnapshot::group)
        .containsExactly("OkHttp https://a.example/*");
    f.named("OkHttp Dispatcher");
    f.record(region, recorder.timeMetric(), 0.5);
    assertThat(recorder.collect())
        .extracting(ThreadSnapshot::group)
        .containsExactly("OkHttp Dispatcher");
    f.retire();
  }

  @Test
  void theAgentsContextsAreSelfTimedAndRegionsAreNot() {
    IdHolder holder = recorder.holder();
    int event = recorder.attributeContext(holder, 0, Recorder.AGENT_EVENT_ATTRIBUTE, "sample");
    int frame = recorder.regionContext(holder, event, "Worker.run", Kind.COMPUTE);
    int leaf = recorder.regionContext(holder, frame, "Math.sqrt", Kind.COMPUTE);
    int region = recorder.regionContext(holder, 0, "handle", Kind.COMPUTE);
    int scoped = recorder.attributeContext(holder, region, "tenant", "a");

    assertThat(recorder.contexts().selfTimed(leaf)).isTrue();
    assertThat(recorder.contexts().selfTimed(frame)).isTrue();
    assertThat(recorder.contexts().selfTimed(region)).isFalse();
    assertThat(recorder.contexts().selfTimed(scoped)).isFalse();
    assertThat(recorder.contexts().selfTimed(0)).isFalse();
  }

  @Test
  void calltreeClustersThreadsByRegionPathsWhateverTheirScopedAttributes() throws Exception {
    // A per-request attribute: before, no two threads shared a context set, and CALLTREE made one
    // cluster per thread.
    List<Thread> workers = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      String tenant = "tenant-" + (char) ('a' + i);
      workers.add(
          new Thread(
              () -> {
                try (Scope s = recorder.with("tenant", tenant);
                    Region r = recorder.region("handle", Kind.COMPUTE)) {
                  assertThat(r).isNotNull();
                }
              },
              "t-" + i));
    }
    workers.add(
        new Thread(
            () -> {
              try (Region r = recorder.region("other", Kind.COMPUTE)) {
                assertThat(r).isNotNull();
              }
            },
            "t-9"));
    for (Thread t : workers) {
      t.start();
      t.join();
    }
    List<List<Long>> clusters =
        ThreadAggregators.clusters(recorder.collect(), recorder.contexts()).get("t-*");
    assertThat(clusters).hasSize(2);
    assertThat(clusters.get(0))
        .containsExactly(workers.get(0).getId(), workers.get(1).getId(), workers.get(2).getId());
  }

  @Test
  void calltreeCountsNoPathVisitedForWhatAThreadRecordsOutsideAnyRegion() throws Exception {
    // Before: the root (path node 0) counted as a visited path, so a thread that also recorded a
    // measurement outside any region made a cluster of its own.
    int m = recorder.metric("m", "");
    Runnable work =
        () -> {
          try (Region r = recorder.region("a", Kind.COMPUTE)) {
            assertThat(r).isNotNull();
          }
        };
    Thread first = new Thread(work, "c-1");
    Thread second =
        new Thread(
            () -> {
              work.run();
              recorder.record(m, 1);
            },
            "c-2");
    for (Thread t : List.of(first, second)) {
      t.start();
      t.join();
    }
    assertThat(ThreadAggregators.clusters(recorder.collect(), recorder.contexts()).get("c-*"))
        .containsExactly(List.of(first.getId(), second.getId()));
  }

  @Test
  void aRenamedThreadIsGroupedByItsNameAtTheCollection() throws Exception {
    // OkHttp names its dispatcher thread after the call it runs: before, the thread stayed in
    // the group of the name it had at its first record, for good.
    CountDownLatch recorded = new CountDownLatch(1);
    CountDownLatch renamed = new CountDownLatch(1);
    CountDownLatch recordedAgain = new CountDownLatch(1);
    CountDownLatch collected = new CountDownLatch(1);
    Thread t =
        new Thread(
            () -> {
              try (Region r = recorder.region("call", Kind.IO)) {
                assertThat(r).isNotNull();
              }
              recorded.countDown();
              try {
                renamed.await();
                try (Region r = recorder.region("call", Kind.IO)) {
                  assertThat(r).isNotNull();
                }
                recordedAgain.countDown();
                collected.await(); // alive at the collection
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            },
            "OkHttp https://a.example/1");
    t.start();
    try {
      recorded.await();
      List<ThreadSnapshot> first = recorder.collect();
      assertThat(first)
          .extracting(ThreadSnapshot::group)
          .containsExactly("OkHttp https://a.example/*");
      t.setName("OkHttp Dispatcher");
      renamed.countDown();
      recordedAgain.await();
      List<ThreadSnapshot> second = recorder.collect();
      assertThat(second).extracting(ThreadSnapshot::name).containsExactly("OkHttp Dispatcher");
      assertThat(second).extracting(ThreadSnapshot::group).containsExactly("OkHttp Dispatcher");
    } finally {
      collected.countDown();
      t.join();
    }
  }

  @Test
  void endedThreadsAreCollectedOnceThenForgotten() throws Exception {
    Thread t =
        new Thread(
            () -> {
              try (Region r = recorder.region("short-lived", Kind.THREAD_MGMT)) {
                assertThat(r).isNotNull();
              }
            },
            "batch-3");
    t.start();
    t.join();
    List<ThreadSnapshot> s = recorder.collect();
    assertThat(s).hasSize(1);
    assertThat(s.get(0).group()).isEqualTo("batch-*");
    assertThat(s.get(0).initial()).isFalse();
    assertThat(recorder.collect()).isEmpty();
  }

  @Test
  void aForeignTableIsReportedAsItsThreadMergedWithWhatTheThreadRecordedItself() {
    int handle = recorder.regionContext(holder, 0, "handle", Kind.COMPUTE);
    assertThat(recorder.regionContext(holder, 0, "handle", Kind.COMPUTE))
        .as("interned")
        .isEqualTo(handle);
    int ctx = recorder.regionContext(holder, handle, "Object.wait", Kind.WAIT);
    Thread me = Thread.currentThread();
    ForeignThread f = recorder.foreign(me.getId(), me.getName(), false);
    ForeignThread other = recorder.foreign(9_999_999L, "http-exec-12", false);
    f.record(ctx, recorder.timeMetric(), 0.25);
    f.record(ctx, recorder.timeMetric(), 0.5);
    other.record(ctx, recorder.timeMetric(), 1.0);
    try (Region r = recorder.region("handle", Kind.COMPUTE)) {
      assertThat(r).isNotNull();
    }

    List<ThreadSnapshot> s = recorder.collect();
    assertThat(s)
        .extracting(ThreadSnapshot::threadId)
        .containsExactlyInAnyOrder(me.getId(), 9_999_999L);
    ThreadSnapshot mine = s.stream().filter(t -> t.threadId() == me.getId()).findFirst().get();
    assertThat(countsByPath(List.of(mine), recorder.timeMetric()))
        .containsEntry("handle", 1L)
        .containsEntry("handle/Object.wait", 2L)
        .hasSize(2);
    ThreadSnapshot foreign = s.stream().filter(t -> t.threadId() == 9_999_999L).findFirst().get();
    assertThat(foreign.group()).isEqualTo("http-exec-*");
    assertThat(foreign.cells())
        .singleElement()
        .satisfies(c -> assertThat(c.state().sum()).isEqualTo(1.0));
    assertThat(recorder.contexts().kind(ctx)).isEqualTo(Kind.WAIT);
  }

  @Test
  void aRetiredForeignTableGivesItsLastValuesOnceThenIsForgotten() {
    int ctx =
        recorder.attributeContext(
            holder, recorder.regionContext(holder, 0, "a", Kind.IO), "event", "x");
    ForeignThread f = recorder.foreign(77, "worker-1", false);
    f.record(ctx, recorder.timeMetric(), 1.0);
    assertThat(recorder.collect()).hasSize(1);
    f.record(ctx, recorder.timeMetric(), 2.0);
    f.retire();
    List<ThreadSnapshot> s = recorder.collect();
    assertThat(s)
        .singleElement()
        .satisfies(t -> assertThat(t.cells().get(0).state().sum()).isEqualTo(2.0));
    Entry.Builder e = Entry.newBuilder();
    recorder.contexts().addKey(ctx, e);
    assertThat(keyText(e)).contains("event=x");
    assertThat(recorder.collect()).isEmpty();
  }

  @Test
  void aForeignWriterRacingTheFlushLosesAndDoublesNothing() throws Exception {
    int events = 300_000;
    int ctx = recorder.regionContext(holder, 0, "sampled", Kind.COMPUTE);
    ForeignThread f = recorder.foreign(5, "worker-5", false);
    Thread writer =
        new Thread(
            () -> {
              for (int i = 0; i < events; i++) {
                f.record(ctx, recorder.timeMetric(), 1.0);
              }
              f.retire();
            });
    long[] totals = new long[3];
    writer.start();
    while (writer.isAlive()) {
      add(totals, recorder.collect(), -1);
    }
    add(totals, recorder.collect(), -1);
    assertThat(totals[2]).isEqualTo(events);
    assertThat(recorder.collect()).isEmpty();
  }

  @Test
  void nameValidationMatchesTheProtocolPattern() {
    java.util.regex.Pattern p = java.util.regex.Pattern.compile("[a-zA-Z_][a-zA-Z0-9_.]{0,127}");
    for (String name :
        List.of(
            "tenant",
            "db.rows",
            "_x",
            "a1",
            "1a",
            ".a",
            "a-b",
            "",
            "é",
            "a b",
            "x".repeat(128),
            "x".repeat(129),
            "A_Z.9")) {
      assertThat(Recorder.isValidName(name)).as(name).isEqualTo(p.matcher(name).matches());
    }
  }

  /** Names of the attributes in each wire entry's key, one list per entry. */
  private List<List<String>> keyNames(ThreadAggregation mode) {
    List<ThreadSnapshot> threads = recorder.collect();
    List<Entry> entries =
        new EntryEncoder(encoder, recorder.contexts())
            .encode(
                ThreadAggregators.forMode(mode)
                    .aggregate(threads, recorder.contexts(), recorder.timeMetric()));
    List<List<String>> out = new ArrayList<>();
    for (Entry e : entries) {
      out.add(
          e.getKeyList().stream()
              .map(v -> encoder.attribute(v.getAttributeId()).getName())
              .toList());
    }
    return out;
  }

  /**
   * A scoped attribute named like one of Profold's own key values would put that name into an
   * entry's key twice, and the collector refuses a delta with such a key as a whole: it is recorded
   * under the name with an underscore, counted as misuse.
   */
  @Test
  void anAttributeNamedLikeProfoldsOwnKeyValuesIsRenamedNotSentTwice() {
    int m = recorder.metric("payload", "bytes");
    for (ThreadAggregation mode : ThreadAggregation.values()) {
      try (Scope s1 = recorder.with("thread.group", "tenant-a");
          Scope s2 = recorder.with("thread", 7L);
          Scope s3 = recorder.with("region", "eu");
          Scope s4 = recorder.with("thread.role", true);
          Scope s5 = recorder.with("thread.cluster", 1.5);
          Scope s6 = recorder.with("threads", "kept");
          Scope s7 = recorder.with("thread.group.name", "kept");
          Region r = recorder.region("handle", Kind.COMPUTE)) {
        recorder.record(m, 5);
      }
      List<List<String>> keys = keyNames(mode);
      assertThat(keys).as("%s", mode).isNotEmpty();
      for (List<String> key : keys) {
        assertThat(key).as("%s", mode).doesNotHaveDuplicates();
        assertThat(key)
            .as("%s", mode)
            .contains(
                "region",
                "thread.group",
                "thread.group_",
                "thread_",
                "region_",
                "thread.role_",
                "thread.cluster_",
                "threads",
                "thread.group.name");
      }
    }
    // counted when the thread first used each name, not at every scope
    assertThat(recorder.misuseCounts()).containsEntry("bad_argument", 5L);
    assertThat(Recorder.isReserved("thread")).isTrue();
    assertThat(Recorder.isReserved("thread_")).isFalse();
    assertThat(Recorder.isReserved("tenant")).isFalse();
  }

  /**
   * SET adds {@code <measurement>.per_thread} for each measurement; a measurement of the user's
   * with such a name would be merged into it, so it is renamed, counted as misuse.
   */
  @Test
  void aMeasurementNamedLikeSetsCompanionIsRenamed() {
    int payload = recorder.metric("payload", "bytes");
    int user = recorder.metric("payload.per_thread", "bytes");
    assertThat(encoder.attribute(user).getName()).isEqualTo("payload.per_thread_");
    assertThat(recorder.misuseCounts()).containsEntry("bad_argument", 1L);
    assertThat(new EntryEncoder(encoder, recorder.contexts()).perThreadMeasurement(payload))
        .isNotEqualTo(user);
    // a name at the length limit is cut, not made longer than a name may be
    String longest = "m".repeat(128 - EntryEncoder.PER_THREAD_SUFFIX.length()) + ".per_thread";
    String sent = encoder.attribute(recorder.metric(longest, "")).getName();
    assertThat(sent).hasSize(128).endsWith(".per_threa_");
    assertThat(Recorder.isValidName(sent)).isTrue();
  }

  /**
   * A measurement named like one of Profold's own (the regions' {@code time}, the agent's {@code
   * allocation}) would be merged into it, whatever its unit (the same unit merges in the client,
   * another one clashes in the collector's exposition), so it is renamed, counted as misuse.
   */
  @Test
  void aMeasurementNamedLikeProfoldsOwnIsRenamed() {
    int time = recorder.metric("time", "seconds");
    int unitless = recorder.metric("time", "");
    int allocation = recorder.metric("allocation", "bytes");
    assertThat(time).isNotEqualTo(recorder.timeMetric());
    assertThat(encoder.attribute(time).getName()).isEqualTo("time_");
    assertThat(encoder.attribute(unitless).getName()).isEqualTo("time_");
    assertThat(encoder.attribute(allocation).getName()).isEqualTo("allocation_");
    assertThat(recorder.ownMetric("allocation", "bytes")).isNotEqualTo(allocation);
    int async = recorder.metric("async_duration", "seconds");
    assertThat(encoder.attribute(async).getName()).isEqualTo("async_duration_");
    assertThat(recorder.ownMetric(Recorder.ASYNC_DURATION, "seconds")).isNotEqualTo(async);
    assertThat(recorder.misuseCounts()).containsEntry("bad_argument", 4L);
    assertThat(encoder.attribute(recorder.metric("timeout", "seconds")).getName())
        .isEqualTo("timeout");
    assertThat(encoder.attribute(recorder.metric("latency", "seconds")).getName())
        .as("an application's own name")
        .isEqualTo("latency");
  }

  @Test
  void eachKindOfBadArgumentIsLoggedOnceAndNullKeysAndValuesAreCounted() {
    List<String> warnings =
        dev.profold.client.internal.LogCapture.warnings(
            "dev.profold.client",
            () -> {
              recorder.region(null, Kind.WAIT).close();
              recorder.region(null, Kind.WAIT).close();
              recorder.record(recorder.metric("x", ""), Double.NaN);
              recorder.with(null, "v").close();
              recorder.with("k", (String) null).close();
            });
    assertThat(recorder.misuseCounts()).containsEntry("bad_argument", 5L);
    assertThat(warnings)
        .as("one line per problem, not one for the first only (before: 1 line; nulls uncounted)")
        .hasSize(4)
        .anyMatch(w -> w.contains("region(name, kind) needs a name"))
        .anyMatch(w -> w.contains("not a finite number"))
        .anyMatch(w -> w.contains("no key (null)"))
        .anyMatch(w -> w.contains("a null value"));
  }

  @Test
  void anAttributeKeyUsedWithAnotherTypeOnAnotherThreadIsCounted() throws Exception {
    recorder.with("tenant", "acme").close();
    Thread other = new Thread(() -> recorder.with("tenant", 42L).close(), "other");
    other.start();
    other.join();
    assertThat(recorder.misuseCounts())
        .as("before: not counted, the check was per thread")
        .containsEntry("attribute_type_change", 1L);
    Thread same = new Thread(() -> recorder.with("tenant", "globex").close(), "same");
    same.start();
    same.join();
    assertThat(recorder.misuseCounts()).containsEntry("attribute_type_change", 1L);
  }

  @Test
  void anEmptyOrNullRegionNameIsCountedAndRecordedUnderANameThatSaysSo() {
    recorder.region("", Kind.WAIT).close();
    recorder.region(null, Kind.WAIT).close();
    recorder.region("x".repeat(1025), null).close();
    assertThat(recorder.misuseCounts()).containsEntry("bad_argument", 3L);
    Map<String, Long> counts = countsByPath(recorder.collect(), recorder.timeMetric());
    assertThat(counts).containsKeys("empty", "null", "x".repeat(1024)).doesNotContainKey("");
  }

  @Test
  void equalNamesFromDifferentStringInstancesAndParentsMeanTheSameAndDifferentRegions() {
    String built = new StringBuilder("ha").append("ndle").toString();
    try (Region a = recorder.region("handle", Kind.COMPUTE)) {
      assertThat(a).isNotNull();
    }
    try (Region b = recorder.region(built, Kind.COMPUTE)) {
      assertThat(b).isNotNull();
    }
    try (Region c = recorder.region("handle", Kind.WAIT)) { // same name, other kind
      assertThat(c).isNotNull();
    }
    try (Region outer = recorder.region("outer", Kind.COMPUTE);
        Region d = recorder.region("handle", Kind.COMPUTE)) {
      assertThat(d).isNotNull();
    }
    List<ThreadSnapshot> s = recorder.collect();
    Map<String, Long> byPathAndKind = new HashMap<>();
    for (Cell c : s.get(0).cells()) {
      byPathAndKind.merge(
          path(c.context()) + ":" + recorder.contexts().kind(c.context()),
          c.state().count(),
          Long::sum);
    }
    assertThat(byPathAndKind)
        .containsEntry("handle:COMPUTE", 2L)
        .containsEntry("handle:WAIT", 1L)
        .containsEntry("outer:COMPUTE", 1L)
        .containsEntry("outer/handle:COMPUTE", 1L)
        .hasSize(4);
  }

  @Test
  void anUnbalancedCloseReturnsToTheClosedRegionsParent() {
    Region outer = recorder.region("outer", Kind.COMPUTE);
    Region inner = recorder.region("inner", Kind.IO); // left open
    try (Scope s = recorder.with("k", 1L)) { // left open too, inside inner
      outer.close(); // closes the scope and inner with it
    }
    inner.close(); // already closed: counted, ignored
    assertThat(recorder.misuseCounts())
        .containsEntry("unbalanced", 1L)
        .containsEntry("closed_twice", 2L); // the scope's close and inner's
    try (Region after = recorder.region("inner", Kind.IO)) { // back at the root
      assertThat(after).isNotSameAs(inner);
    }
    Map<String, Long> counts = countsByPath(recorder.collect(), recorder.timeMetric());
    assertThat(counts)
        .containsEntry("outer", 1L)
        .containsEntry("outer/inner", 1L)
        .containsEntry("inner", 1L)
        .hasSize(3);
  }

  @Test
  void theCellLimitCountsCellsInRecentUseNotEveryCellAThreadEverTouched() {
    Recorder small = new Recorder(encoder, 16);
    int m = small.metric("m", "");
    // 5 new cells per interval for 10 intervals: 50 cells over the thread's life, at most 10 in
    // any two consecutive intervals, against a limit of 16.
    long dropped = 0;
    for (int interval = 0; interval < 10; interval++) {
      for (int i = 0; i < 5; i++) {
        try (Scope s = small.with("k", (long) (interval * 5 + i))) {
          small.record(m, 1.0);
        }
      }
      long counted = 0;
      for (ThreadSnapshot t : small.collect()) {
        for (Cell c : t.cells()) {
          counted += c.state().count();
        }
      }
      assertThat(counted).as("interval %d", interval).isEqualTo(5);
      dropped += small.takeDropped();
    }
    assertThat(dropped).isZero();
    assertThat(small.misuseCounts()).containsEntry("table_full", 0L);
  }

  @Test
  void aCellThatComesBackAfterBeingFreedStartsFromZero() {
    Recorder small = new Recorder(encoder, 16);
    int m = small.metric("m", "");
    // Interval 1 (table A): 10 cells, more than half the limit, so idle ones are freed later.
    for (long k = 0; k < 10; k++) {
      try (Scope s = small.with("k", k)) {
        small.record(m, 2.0);
      }
    }
    small.collect();
    small.collect(); // interval 2 (table B): nothing
    small.collect(); // interval 3 (table A): nothing; its drain frees the 10 idle cells
    try (Scope s = small.with("k", 3L)) {
      small.record(m, 3.0);
    }
    List<ThreadSnapshot> out = small.collect();
    assertThat(out).hasSize(1);
    assertThat(out.get(0).cells()).hasSize(1);
    assertThat(out.get(0).cells().get(0).state().count()).isEqualTo(1);
    assertThat(out.get(0).cells().get(0).state().sum()).isEqualTo(3.0);
  }

  @Test
  void aTableUnderHalfFullKeepsItsIdleCellsSoTheyAreNotAllocatedAgain() {
    int m = recorder.metric("m", "");
    recorder.record(m, 2.0); // interval 1: table A
    recorder.collect();
    recorder.collect(); // interval 2: table B
    recorder.collect(); // interval 3: table A, idle: its one cell is kept
    assertThat(recorder.stateOfCallingThread().cells()).isEqualTo(1);
  }

  @Test
  void aWriteThatThrowsStillEndsItsSectionSoTheFlushDoesNotWait() throws Exception {
    ForeignThread f = recorder.foreign(42, "w-1", false);
    // A context id the table cannot hold: the write throws inside its critical section.
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> f.record(-1, recorder.timeMetric(), 1.0))
        .isInstanceOf(IllegalArgumentException.class); // the agent's consumer counts these
    f.record(0, recorder.timeMetric(), 1.0);
    java.util.concurrent.ExecutorService flush =
        java.util.concurrent.Executors.newSingleThreadExecutor();
    try {
      java.util.concurrent.Future<List<ThreadSnapshot>> done =
          flush.submit(() -> recorder.collect());
      // Generous: a stalled flush never returns; a working one returns at once.
      List<ThreadSnapshot> out = done.get(30, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(out).hasSize(1);
    } finally {
      flush.shutdownNow();
    }
  }

  @Test
  void aNullMeasurementNameOrUnitIsCountedNotThrown() {
    int a = recorder.metric(null, "");
    int b = recorder.metric("bytes", null);
    recorder.record(a, 1.0);
    recorder.record(b, 1.0);
    assertThat(recorder.metric("null", "")).isEqualTo(a);
    assertThat(recorder.metric("bytes", "")).isEqualTo(b);
    assertThat(recorder.misuseCounts()).containsEntry("bad_argument", 2L);
  }

  @Test
  void theDirectTimeCellPathIsCappedSoAThreadsArraysDoNotGrowWithTheProcess() throws Exception {
    for (int i = 0; i < ThreadTable.DIRECT_CONTEXTS + 100; i++) {
      recorder.regionContext(holder, 0, "r" + i, Kind.COMPUTE);
    }
    // This thread's first region gets a context id above the cap: it takes the hash path, and
    // its time is still recorded exactly.
    try (Region late = recorder.region("late", Kind.COMPUTE)) {
      assertThat(late).isNotNull();
    }
    try (Region late = recorder.region("late", Kind.COMPUTE)) {
      assertThat(late).isNotNull();
    }
    assertThat(countsByPath(recorder.collect(), recorder.timeMetric())).containsEntry("late", 2L);
    java.lang.reflect.Field f = ThreadTable.class.getDeclaredField("timeCells");
    f.setAccessible(true);
    ThreadTable t = new ThreadTable(16, recorder.timeMetric());
    t.record(ThreadTable.DIRECT_CONTEXTS + 50_000, recorder.timeMetric(), 1.0);
    t.record(ThreadTable.DIRECT_CONTEXTS - 1, recorder.timeMetric(), 1.0);
    assertThat(((Object[]) f.get(t)).length).isLessThanOrEqualTo(ThreadTable.DIRECT_CONTEXTS);
    assertThat(t.drain()).hasSize(2);
  }

  @Test
  void misuseCountsAreTakenPerIntervalWithKindsThatDidNotHappenLeftOut() {
    Region r = recorder.region("a", Kind.COMPUTE);
    r.close();
    r.close();
    r.close();
    recorder.record(recorder.metric("m", ""), Double.NaN);
    assertThat(recorder.takeMisuseCounts())
        .containsExactlyInAnyOrderEntriesOf(Map.of("closed_twice", 2L, "bad_argument", 1L));
    assertThat(recorder.takeMisuseCounts()).isEmpty();
    r.close();
    assertThat(recorder.takeMisuseCounts()).containsExactly(Map.entry("closed_twice", 1L));
    assertThat(recorder.misuseCounts()).containsEntry("closed_twice", 3L); // cumulative
  }

  @Test
  void aTableOfMoreThanSixtyFourCellsFreesItsIdleOnes() {
    int m = recorder.metric("m", "");
    for (long k = 0; k < ThreadTable.IDLE_KEPT + 36; k++) {
      try (Scope s = recorder.with("k", k)) {
        recorder.record(m, 1.0);
      }
    }
    recorder.collect(); // interval 1 (table A): 100 cells recorded, kept
    recorder.collect(); // interval 2 (table B): nothing
    recorder.collect(); // interval 3 (table A): all idle, more than 64: freed
    assertThat(recorder.stateOfCallingThread().cells()).isZero();
  }

  /**
   * A table remembers the cell it recorded into last, to skip the hash probe when the same
   * measurement is recorded in the same context again; a drain may free that cell, and a value
   * recorded after it must still arrive.
   */
  @Test
  void aValueRecordedAfterItsCellWasFreedStillArrives() {
    int metric = recorder.metric("m", "");
    ThreadTable t = new ThreadTable(1024, recorder.timeMetric());
    for (int c = 0; c < ThreadTable.IDLE_KEPT + 6; c++) {
      t.record(c, metric, 1.0);
    }
    t.record(3, metric, 2.0); // the last cell recorded into
    assertThat(t.drain()).hasSize(ThreadTable.IDLE_KEPT + 6);
    assertThat(t.drain()).isEmpty(); // every cell idle, more than 64: all freed
    assertThat(t.size()).isZero();

    t.record(3, metric, 5.0);
    t.record(3, metric, 7.0); // through the shortcut, into the new cell
    List<Cell> cells = t.drain();
    assertThat(cells).hasSize(1);
    assertThat(cells.get(0).context()).isEqualTo(3);
    assertThat(cells.get(0).state().count()).isEqualTo(2);
    assertThat(cells.get(0).state().sum()).isEqualTo(12.0);
  }

  @Test
  void recordsAlternatingBetweenCellsEachLandInTheirOwn() {
    int a = recorder.metric("a", "");
    int b = recorder.metric("b", "");
    ThreadTable t = new ThreadTable(1024, recorder.timeMetric());
    for (int i = 0; i < 10; i++) {
      t.record(1, a, 1.0);
      t.record(1, a, 1.0);
      t.record(1, b, 10.0);
      t.record(2, a, 100.0);
    }
    Map<Long, Double> sums = new HashMap<>();
    for (Cell c : t.drain()) {
      sums.put(((long) c.context() << 32) | c.metric(), c.state().sum());
    }
    assertThat(sums)
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                (1L << 32) | a, 20.0,
                (1L << 32) | b, 100.0,
                (2L << 32) | a, 1000.0));
  }
}
