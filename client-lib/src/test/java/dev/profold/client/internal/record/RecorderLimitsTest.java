package dev.profold.client.internal.record;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.Kind;
import dev.profold.client.Region;
import dev.profold.client.Scope;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.threads.Cell;
import dev.profold.client.internal.threads.ThreadSnapshot;
import dev.profold.proto.v1.Dictionary;
import dev.profold.proto.v1.PathNode;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.reduce.Aggregate;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The recorder's bounds: what happens when application code opens regions it closes elsewhere or
 * never, and when names and attribute values have no bound. Memory stays bounded, every value is
 * still recorded once (or dropped and counted), and each limit is counted when it bites.
 */
class RecorderLimitsTest {
  private final DeltaEncoder encoder =
      new DeltaEncoder(
          SourceIdentity.newBuilder().setService("s").setInstance("i").setIncarnationId(1).build());
  @RegisterExtension final TestThreads threads = new TestThreads();

  /** Region paths ("a/b") of every cell of {@code metric}, with their value counts. */
  private Map<String, Long> countsByPath(Recorder r, List<ThreadSnapshot> out, int metric) {
    Map<String, Long> counts = new HashMap<>();
    byPath(r, out, metric).forEach((p, a) -> counts.put(p, a.count()));
    return counts;
  }

  /** Region paths ("a/b") of every cell of {@code metric}, with their merged aggregates. */
  private Map<String, Aggregate> byPath(Recorder r, List<ThreadSnapshot> out, int metric) {
    Dictionary dictionary = encoder.definitions();
    Map<Integer, PathNode> nodes = new HashMap<>();
    dictionary.getPathNodesList().forEach(n -> nodes.put(n.getId(), n));
    Map<Integer, String> strings = dictionary.getStringsMap();
    Map<String, Aggregate> paths = new HashMap<>();
    for (ThreadSnapshot t : out) {
      for (Cell c : t.cells()) {
        if (c.metric() != metric) {
          continue;
        }
        String p = "";
        for (int node = r.contexts().pathNode(c.context()); node != 0; ) {
          PathNode n = nodes.get(node);
          p = strings.get(n.getNameId()) + (p.isEmpty() ? "" : "/" + p);
          node = n.getParentId();
        }
        paths.computeIfAbsent(p, x -> new Aggregate()).merge(c.state());
      }
    }
    return paths;
  }

  private static int contexts(Recorder r) {
    return ((ContextTable) r.contexts()).size();
  }

  @Test
  void aRegionClosedOnAnotherThreadIsClosedOnItsOwnThreadNextTimeAndDoesNotNest() throws Exception {
    Recorder r = new Recorder(encoder, 4096);
    ExecutorService owner = threads.newThread();
    ExecutorService completer = threads.newThread();
    int before = contexts(r);
    for (int i = 0; i < 1000; i++) {
      Region request = owner.submit(() -> r.region("request", Kind.WAIT)).get();
      completer.submit(request::close).get(); // an asynchronous completion
    }
    owner
        .submit(
            () -> {
              try (Region tick = r.region("tick", Kind.COMPUTE)) {
                assertThat(tick).isNotNull();
              }
            })
        .get();
    Map<String, Long> counts = countsByPath(r, r.collect(), r.timeMetric());
    assertThat(counts).containsOnly(Map.entry("request", 1000L), Map.entry("tick", 1L));
    assertThat(contexts(r) - before).isEqualTo(2);
    assertThat(r.misuseCounts())
        .containsEntry("closed_on_other_thread", 1000L)
        .containsEntry("unbalanced", 0L)
        .containsEntry("closed_twice", 0L);
  }

  @Test
  void aRegionClosedElsewhereKeepsTheTimeOfThatCloseNotOfItsHandling() throws Exception {
    Recorder r = new Recorder(encoder, 4096);
    ExecutorService owner = threads.newThread();
    long beforeOpen = System.nanoTime();
    Region opened = owner.submit(() -> r.region("request", Kind.WAIT)).get();
    opened.close(); // on this thread, not the owner
    long afterClose = System.nanoTime();
    // The owner handles the close only 20 ms later: a duration taken then would be longer than
    // the region can have lasted.
    while (System.nanoTime() - afterClose < 20_000_000L) {
      Thread.onSpinWait();
    }
    owner.submit(() -> r.region("next", Kind.COMPUTE).close()).get();
    Aggregate request = byPath(r, r.collect(), r.timeMetric()).get("request");
    assertThat(request.count()).isEqualTo(1);
    assertThat(request.sum()).isPositive().isLessThanOrEqualTo((afterClose - beforeOpen) * 1e-9);
  }

  @Test
  void aStaleCloseFromAnotherThreadDoesNotCloseWhatTheOwnerOpensLater() throws Exception {
    Recorder r = new Recorder(encoder, 4096);
    ExecutorService owner = threads.newThread();
    Region stale = owner.submit(() -> r.region("a", Kind.COMPUTE)).get();
    owner.submit(stale::close).get(); // closed properly on its own thread
    stale.close(); // and again from here: counted, and must not touch later regions
    owner
        .submit(
            () -> {
              try (Region b = r.region("b", Kind.COMPUTE);
                  Region c = r.region("c", Kind.COMPUTE)) {
                assertThat(c).isNotSameAs(b);
              }
            })
        .get();
    Map<String, Long> counts = countsByPath(r, r.collect(), r.timeMetric());
    assertThat(counts).containsOnly(Map.entry("a", 1L), Map.entry("b", 1L), Map.entry("b/c", 1L));
    assertThat(r.misuseCounts())
        .containsEntry("closed_on_other_thread", 1L)
        .containsEntry("unbalanced", 0L);
  }

  @Test
  void regionsNeverClosedStopAtTheDepthLimitCounted() {
    Recorder r = new Recorder(encoder, 4096);
    List<Region> open = new ArrayList<>();
    for (int i = 0; i < ThreadState.MAX_DEPTH + 88; i++) {
      open.add(r.region("leak", Kind.COMPUTE));
    }
    assertThat(r.misuseCounts()).containsEntry("too_deep", 88L);
    assertThat(contexts(r)).isEqualTo(1 + ThreadState.MAX_DEPTH);
    for (int i = open.size() - 1; i >= 0; i--) {
      open.get(i).close(); // the handles of regions not opened close to nothing
    }
    Map<String, Long> counts = countsByPath(r, r.collect(), r.timeMetric());
    assertThat(counts.values().stream().mapToLong(Long::longValue).sum())
        .isEqualTo(ThreadState.MAX_DEPTH);
    assertThat(r.misuseCounts()).containsEntry("closed_twice", 0L).containsEntry("unbalanced", 0L);
  }

  @Test
  void attributeValuesBeyondTheContextLimitAreLeftOutButTheirValuesAreKept() {
    Recorder r = new Recorder(encoder, 4096, 100);
    int m = r.metric("bytes", "");
    long recorded = 0;
    for (int i = 1; i <= 10_000; i++) {
      try (Scope s = r.with("request_id", "req-" + i)) {
        r.record(m, 1.0);
      }
      if (i % 1000 == 0) { // so the cell limit does not bite
        for (ThreadSnapshot t : r.collect()) {
          for (Cell c : t.cells()) {
            recorded += c.state().count();
          }
        }
      }
    }
    assertThat(recorded).isEqualTo(10_000);
    assertThat(r.takeDropped()).isZero();
    assertThat(contexts(r)).isLessThanOrEqualTo(100);
    assertThat(r.misuseCounts().get("contexts_full")).isPositive();
    assertThat(r.stateOfCallingThread().cachedEntries()).isLessThanOrEqualTo(2 * 100);
  }

  @Test
  void everyValueIsRecordedOnceWhenTheContextLimitBites() {
    Recorder r = new Recorder(encoder, 1 << 16, 100);
    int m = r.metric("bytes", "");
    for (int i = 0; i < 5_000; i++) {
      try (Scope s = r.with("request_id", "req-" + i);
          Region x = r.region("handler-" + (i % 300), Kind.IO)) {
        r.record(m, 2.0);
      }
    }
    double sum = 0;
    long regions = 0;
    List<ThreadSnapshot> out = r.collect();
    for (ThreadSnapshot t : out) {
      for (Cell c : t.cells()) {
        if (c.metric() == m) {
          sum += c.state().sum();
        } else {
          regions += c.state().count();
        }
      }
    }
    assertThat(sum).isEqualTo(10_000.0);
    assertThat(regions).isEqualTo(5_000);
    assertThat(countsByPath(r, out, r.timeMetric())).containsKey(ContextTable.OVERFLOW);
    assertThat(contexts(r)).isLessThanOrEqualTo(100 + Kind.values().length);
    assertThat(r.stateOfCallingThread().cachedEntries()).isLessThanOrEqualTo(3 * 100);
  }

  @Test
  void measurementsBeyondTheLimitAreDroppedAndCounted() {
    Recorder r = new Recorder(encoder, 1 << 16);
    int base = r.metric("base", ""); // the time metric and this one exist already
    for (int i = 0; i < Recorder.MAX_MEASUREMENTS + 50; i++) {
      r.record(r.metric("m" + i, ""), 1.0);
    }
    r.record(base, 1.0);
    assertThat(r.metric("m" + (Recorder.MAX_MEASUREMENTS + 10), "")).isEqualTo(Recorder.NO_METRIC);
    assertThat(r.takeDropped()).isEqualTo(51);
    // Once per value dropped (before, Profold.record's path counted each twice).
    assertThat(r.misuseCounts().get("measurements_full")).isEqualTo(51);
  }

  @Test
  void attributeKeysBeyondTheLimitScopeNothingAndAreCounted() {
    // Before: the client sent every key; past 4096 attributes on a stream the collector refused
    // whole deltas.
    Recorder r = new Recorder(encoder, 1 << 16);
    int m = r.metric("m", "");
    try (Region outer = r.region("work", Kind.COMPUTE)) {
      for (int i = 0; i < Recorder.MAX_KEYS + 10; i++) {
        try (Scope s = r.with("user_" + i, 1L)) {
          r.record(m, 1.0);
        }
      }
      try (Scope again = r.with("user_0", 2L)) { // admitted before: still recorded
        r.record(m, 1.0);
      }
    }
    assertThat(r.misuseCounts().get("keys_full")).isEqualTo(10);
    assertThat(r.misuseCounts().get("unbalanced")).isZero();
    List<ThreadSnapshot> out = r.collect();
    assertThat(countsByPath(r, out, m).values().stream().mapToLong(Long::longValue).sum())
        .as("every value recorded, in its own context or the enclosing one")
        .isEqualTo(Recorder.MAX_KEYS + 11);
  }

  @Test
  void aKeyGivenAnotherTypeOnTheSameThreadIsWithinTheKeyBudget() {
    // Before: the thread's cache of the key took the new type without asking the budget, and
    // (user_0, string) became a definition beyond it.
    Recorder r = new Recorder(encoder, 1 << 16);
    int m = r.metric("m", "");
    try (Region outer = r.region("work", Kind.COMPUTE)) {
      for (int i = 0; i < Recorder.MAX_KEYS; i++) {
        try (Scope s = r.with("user_" + i, 1L)) {
          r.record(m, 1.0);
        }
      }
      assertThat(r.misuseCounts().get("keys_full")).isZero();
      try (Scope s = r.with("user_0", "s")) {
        r.record(m, 1.0);
      }
      try (Scope s = r.with("user_0", 2L)) { // the type admitted: still recorded
        r.record(m, 1.0);
      }
    }
    assertThat(r.misuseCounts().get("keys_full")).isEqualTo(1);
    List<ThreadSnapshot> out = r.collect();
    for (ThreadSnapshot t : out) {
      for (Cell c : t.cells()) {
        r.contexts().addKey(c.context(), dev.profold.proto.v1.Entry.newBuilder()); // defines
      }
    }
    assertThat(encoder.definitions().getAttributesList())
        .filteredOn(a -> a.getName().startsWith("user_"))
        .hasSize(Recorder.MAX_KEYS)
        .noneMatch(a -> a.getType() == dev.profold.proto.v1.ValueType.VALUE_TYPE_STRING);
    assertThat(countsByPath(r, out, m))
        .as("every value recorded, the refused scope's in the enclosing context")
        .containsOnly(Map.entry("work", Recorder.MAX_KEYS + 2L));
  }

  /**
   * Bytes the calling thread allocates running {@code misuse} 2,000 times, after 100 runs (the
   * first one logs). Before, every run built its log message.
   */
  private static long bytesAllocatedByRepeated(Runnable misuse) {
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    org.junit.jupiter.api.Assumptions.assumeTrue(mx.isThreadAllocatedMemorySupported());
    mx.setThreadAllocatedMemoryEnabled(true);
    for (int i = 0; i < 100; i++) {
      misuse.run();
    }
    long self = Thread.currentThread().getId();
    long before = mx.getThreadAllocatedBytes(self);
    for (int i = 0; i < 2_000; i++) {
      misuse.run();
    }
    return mx.getThreadAllocatedBytes(self) - before;
  }

  @Test
  void aRegionClosedOnAnotherThreadAgainAndAgainBuildsItsMessageOnce() throws Exception {
    Recorder r = new Recorder(encoder, 1024);
    Region open = threads.newThread().submit(() -> r.region("handed", Kind.WAIT)).get();
    long bytes = bytesAllocatedByRepeated(open::close);
    assertThat(r.misuseCounts().get("closed_on_other_thread")).isEqualTo(2_100);
    assertThat(bytes).as("bytes allocated by 2,000 closes on another thread").isLessThan(2_000);
  }

  @Test
  void aScopeOfAKeyOverTheBudgetAgainAndAgainBuildsItsMessageOnce() {
    Recorder r = new Recorder(encoder, 1 << 16);
    for (int i = 0; i < Recorder.MAX_KEYS; i++) {
      r.with("user_" + i, 1L).close();
    }
    long bytes = bytesAllocatedByRepeated(() -> r.with("over", 1L).close());
    assertThat(r.misuseCounts().get("keys_full")).isEqualTo(2_100);
    assertThat(bytes).as("bytes allocated by 2,000 scopes refused").isLessThan(2_000);
  }

  @Test
  void scopesOfMoreKeysThanAnEntryHoldsAtOnceAreLeftOutAndCounted() {
    // Before: 70 nested scopes of distinct keys made entries of 71 key values, and the collector
    // refused every delta holding one (at most 64), with the rest of the interval's data.
    Recorder r = new Recorder(encoder, 1 << 16);
    int m = r.metric("m", "");
    List<Scope> open = new ArrayList<>();
    try (Region outer = r.region("work", Kind.COMPUTE)) {
      for (int i = 0; i < 70; i++) {
        open.add(r.with("k" + i, (long) i));
      }
      r.record(m, 1.0);
      for (int i = open.size() - 1; i >= 0; i--) {
        open.get(i).close();
      }
    }
    assertThat(r.misuseCounts().get("keys_full")).isEqualTo(70 - ContextTable.MAX_CONTEXT_KEYS);
    assertThat(r.misuseCounts().get("unbalanced")).isZero();
    List<ThreadSnapshot> out = r.collect();
    int widest = 0;
    for (ThreadSnapshot t : out) {
      for (Cell c : t.cells()) {
        dev.profold.proto.v1.Entry.Builder e = dev.profold.proto.v1.Entry.newBuilder();
        r.contexts().addKey(c.context(), e);
        widest = Math.max(widest, e.getKeyCount());
      }
    }
    assertThat(widest).as("region and the 61 keys admitted").isEqualTo(62);
    assertThat(countsByPath(r, out, m).values().stream().mapToLong(Long::longValue).sum())
        .as("the value recorded, in the context of the keys admitted")
        .isEqualTo(1);
  }

  @Test
  void aUnitTheCollectorWouldRefuseIsLeftOutAndCounted() {
    // Before: "Bytes" went on the wire, and the collector refused every delta defining it, with
    // all the rest of the interval's data.
    Recorder r = new Recorder(encoder, 4096);
    int plain = r.metric("payload", "");
    for (String unit : new String[] {"Bytes", "%", "ms/op", "x".repeat(33)}) {
      assertThat(r.metric("payload", unit)).as(unit).isEqualTo(plain);
    }
    assertThat(r.metric("payload", "bytes")).isNotEqualTo(plain);
    assertThat(r.misuseCounts().get("bad_argument")).isEqualTo(4);
  }

  @Test
  void aNonFiniteDoubleAttributeScopesNothingAndIsCounted() {
    // Before: the value went on the wire, and the collector refused the whole delta.
    Recorder r = new Recorder(encoder, 4096);
    int m = r.metric("m", "");
    try (Region outer = r.region("work", Kind.COMPUTE)) {
      try (Scope s = r.with("ratio", Double.NaN)) {
        r.record(m, 2.0);
      }
      try (Scope s = r.with("ratio", Double.POSITIVE_INFINITY)) {
        r.record(m, 3.0);
      }
    }
    assertThat(r.misuseCounts().get("bad_argument")).isEqualTo(2);
    assertThat(r.misuseCounts().get("unbalanced")).isZero();
    List<ThreadSnapshot> out = r.collect();
    assertThat(countsByPath(r, out, m)).containsExactly(Map.entry("work", 2L));
  }

  @Test
  void longAttributeValuesAreCutAndCounted() {
    Recorder r = new Recorder(encoder, 4096);
    try (Scope s = r.with("note", "x".repeat(5000))) {
      r.record(r.metric("n", ""), 1.0);
    }
    assertThat(r.misuseCounts()).containsEntry("bad_argument", 1L);
    assertThat(r.collect()).hasSize(1);
  }

  private static int pendingClosesElsewhere(ThreadState s) throws Exception {
    java.lang.reflect.Field f = ThreadState.class.getDeclaredField("attention");
    f.setAccessible(true);
    return f.getInt(s) & ((1 << 30) - 1); // the count; the bit above it asks for ids back
  }

  @Test
  void twoClosesElsewhereOfOneHandleAreHandledOnceAndLeaveNothingPending() throws Exception {
    Recorder r = new Recorder(encoder, 4096);
    Region open = r.region("req", Kind.WAIT);
    Thread other =
        new Thread(
            () -> {
              open.close();
              open.close();
            });
    other.start();
    other.join();
    r.region("next", Kind.COMPUTE).close(); // the owner handles the flagged frame here
    assertThat(pendingClosesElsewhere(r.stateOfCallingThread())).isZero();
    assertThat(countsByPath(r, r.collect(), r.timeMetric()))
        .containsOnly(Map.entry("req", 1L), Map.entry("next", 1L));
  }

  @Test
  void aCloseElsewhereRacingTheReuseOfItsFrameNeverRecordsANegativeDuration() throws Exception {
    Recorder r = new Recorder(encoder, 4096);
    java.util.concurrent.atomic.AtomicReference<Region> handoff =
        new java.util.concurrent.atomic.AtomicReference<>();
    java.util.concurrent.atomic.AtomicBoolean stop =
        new java.util.concurrent.atomic.AtomicBoolean();
    Thread other =
        new Thread(
            () -> {
              while (!stop.get()) {
                Region h = handoff.getAndSet(null);
                if (h != null) {
                  h.close(); // a second close, from another thread, of a handle already closed
                }
              }
            });
    other.start();
    double min = Double.MAX_VALUE;
    try {
      for (int round = 0; round < 10; round++) {
        for (int i = 0; i < 100_000; i++) {
          Region a = r.region("a", Kind.COMPUTE);
          handoff.set(a);
          a.close();
          r.region("b", Kind.COMPUTE).close(); // reuses a's frame, racing the other close
        }
        for (ThreadSnapshot t : r.collect()) {
          for (Cell c : t.cells()) {
            min = Math.min(min, c.state().min());
          }
        }
      }
    } finally {
      stop.set(true);
      other.join();
    }
    assertThat(min).isGreaterThanOrEqualTo(0);
    Map<String, Long> misuse = r.misuseCounts();
    assertThat(misuse.get("closed_twice") + misuse.get("closed_on_other_thread"))
        .as("the other thread's closes happened (else the race was never run): %s", misuse)
        .isPositive();
  }

  @Test
  void aStaleCloseFlaggedLateDoesNotSwallowTheRealCloseThatFollows() throws Exception {
    Recorder r = new Recorder(encoder, 4096);
    ExecutorService owner = threads.newThread();
    Region a = owner.submit(() -> r.region("a", Kind.COMPUTE)).get();
    owner.submit(a::close).get();
    long staleTime = System.nanoTime(); // a stale closer of a reads the clock here...
    Region b = owner.submit(() -> r.region("b", Kind.WAIT)).get();
    assertThat(b).isSameAs(a); // the frame is reused
    // ...and flags the frame only now, as ThreadState.closeElsewhere would, with its old time.
    Frame f = (Frame) a;
    if (f.flagClosedElsewhere(staleTime)) {
      java.lang.reflect.Field pending = ThreadState.class.getDeclaredField("attention");
      pending.setAccessible(true);
      pending.setInt(f.state, pending.getInt(f.state) + 1);
    }
    b.close(); // b's real, asynchronous completion, on this thread
    owner.submit(() -> r.region("tick", Kind.COMPUTE).close()).get();
    assertThat(countsByPath(r, r.collect(), r.timeMetric()))
        .containsOnly(Map.entry("a", 1L), Map.entry("b", 1L), Map.entry("tick", 1L));
  }
}
