package dev.profold.client.internal.jfr;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.Kind;
import dev.profold.client.internal.activity.JvmThreads;
import dev.profold.client.internal.activity.ThreadActivity;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.record.Recorder;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ThreadGroupActivity;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Planted problems in this JVM, profiled by a real JFR stream into a recorder whose tables the test
 * collects once per one-second interval: the planted class must dominate the planted thread group's
 * recorded time, at the planted method, within two intervals of the group's first data, and the
 * planted class must lead the group's thread time (its {@link ThreadActivity}) over the three
 * intervals after that, within 20% of the blocked time the threads measured themselves (see {@link
 * #steadyShare}). JFR is asynchronous, so the waits are bounded by generous deadlines; nothing is
 * asserted about timing.
 */
class JfrProfilerTest {
  private static final Duration INTERVAL = Duration.ofSeconds(1);
  private static final Duration DEADLINE = Duration.ofSeconds(90);
  private static final Object LOCK = new Object();

  private final DeltaEncoder encoder =
      new DeltaEncoder(
          SourceIdentity.newBuilder().setService("s").setInstance("i").setIncarnationId(1).build());
  private final Recorder recorder = new Recorder(encoder, 4096);
  private final ThreadActivity activity = new ThreadActivity(new JvmThreads());
  private long intervalStart;
  private final AtomicBoolean stop = new AtomicBoolean();
  private final List<Thread> workload = new ArrayList<>();
  private final CountDownLatch never = new CountDownLatch(1);
  private JfrProfiler profiler;

  /** 10 ms samples and 1 ms thresholds, everything on. */
  private static JfrSettings settings() {
    Duration ms1 = Duration.ofMillis(1);
    return JfrSettings.defaults()
        .withSamplePeriod(Duration.ofMillis(10))
        .withThresholds(ms1, ms1, ms1);
  }

  private void startProfiler(JfrSettings settings) throws InterruptedException {
    profiler = JfrProfiler.start(recorder, activity, settings);
    assertThat(profiler.awaitRunning(DEADLINE)).as("JFR stream running").isTrue();
  }

  @BeforeEach
  void start() throws Exception {
    BLOCKED.set(0);
    startProfiler(settings());
    intervalStart = epochNanos();
    activity.close(intervalStart, intervalStart); // the threads' CPU time so far: the baseline
  }

  @AfterEach
  void stop() throws Exception {
    stop.set(true);
    for (Thread t : workload) {
      t.join(10_000);
    }
    profiler.close();
  }

  private void spawn(String name, Runnable body) {
    Thread t =
        new Thread(
            () -> {
              while (!stop.get()) {
                body.run();
              }
            },
            name);
    t.setDaemon(true);
    workload.add(t);
    t.start();
  }

  private static long epochNanos() {
    java.time.Instant t = java.time.Instant.now();
    return t.getEpochSecond() * 1_000_000_000L + t.getNano();
  }

  /**
   * One interval's time of the group, by kind, the time of each path of {@code kind}, and the
   * group's thread time split (null when the group had no live thread at the interval's end).
   */
  private record Interval(
      Map<Kind, Double> byKind, Map<String, Double> pathsOfKind, ThreadGroupActivity threads) {
    /** The share of the group's thread time in class {@code kind}. */
    double share(Kind kind) {
      if (threads == null || threads.getWallNanos() == 0) {
        return 0;
      }
      long v =
          switch (kind) {
            case COMPUTE -> threads.getComputeNanos();
            case SYNC -> threads.getSyncNanos();
            case WAIT -> threads.getWaitNanos();
            case IO -> threads.getIoNanos();
            case RUNTIME -> threads.getRuntimeNanos();
            case THREAD_MGMT -> threads.getThreadMgmtNanos();
          };
      return (double) v / threads.getWallNanos();
    }

    double total() {
      return byKind.values().stream().mapToDouble(Double::doubleValue).sum();
    }

    String topPath() {
      return pathsOfKind.entrySet().stream()
          .max(Map.Entry.comparingByValue())
          .map(Map.Entry::getKey)
          .orElse("");
    }
  }

  private Interval nextInterval(String group, Kind kind) throws InterruptedException {
    assertThat(never.await(INTERVAL.toMillis(), TimeUnit.MILLISECONDS)).isFalse(); // the interval
    Map<Kind, Double> byKind = new EnumMap<>(Kind.class);
    Map<String, Double> paths = new java.util.HashMap<>();
    for (Rows.Row r : Rows.of(encoder, recorder, recorder.collect())) {
      if (r.group().equals(group) && r.metric().equals("time")) {
        byKind.merge(r.kind(), r.sum(), Double::sum);
        if (r.kind() == kind) {
          paths.merge(r.path(), r.sum(), Double::sum);
        }
      }
    }
    long end = epochNanos();
    ThreadGroupActivity threads = null;
    for (ThreadGroupActivity a : activity.close(intervalStart, end)) {
      if (a.getThreadGroup().equals(group)) {
        threads = a;
      }
    }
    intervalStart = end;
    return new Interval(byKind, paths, threads);
  }

  /**
   * Collects intervals until the group has data, then returns the first of the next two intervals
   * (that one included) in which {@code kind} has more than half of the group's time, or the last
   * of them if none has.
   */
  private Interval awaitDominance(String group, Kind kind) throws InterruptedException {
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    Interval i = nextInterval(group, kind);
    while (i.total() == 0 && System.nanoTime() < deadline) {
      i = nextInterval(group, kind);
    }
    assertThat(i.total()).as("the group recorded something before the deadline").isPositive();
    if (i.byKind().getOrDefault(kind, 0.0) > i.total() / 2) {
      return i;
    }
    return nextInterval(group, kind);
  }

  /** Nanoseconds the planted threads spent blocked, measured by themselves. */
  static final java.util.concurrent.atomic.AtomicLong BLOCKED =
      new java.util.concurrent.atomic.AtomicLong();

  /** An estimated share, the measured truth, and whether the class led the others but idle. */
  private record Share(double estimate, double truth, boolean leads) {}

  /**
   * The group's share of thread time in class {@code kind} over the next three intervals, the truth
   * over the same time ({@link #BLOCKED} over {@code threads} threads' wall time), and whether
   * {@code kind} led every other class but idle. A wait is reported when it ends, and JFR delivers
   * it up to about a second later, so one interval's split can lag; three even it out. The truth,
   * not a fixed share, is the reference: on a loaded machine a runnable thread waiting for a CPU is
   * in cpu_wait (or idle, where the OS does not say), and the planted waits shrink or grow with the
   * load.
   */
  private Share steadyShare(String group, Kind kind, int threads) throws InterruptedException {
    long blocked0 = BLOCKED.get();
    long t0 = System.nanoTime();
    double part = 0;
    double wall = 0;
    boolean leads = true;
    for (int k = 0; k < 3; k++) {
      Interval i = nextInterval(group, kind);
      double w = i.threads() == null ? 0 : i.threads().getWallNanos();
      part += i.share(kind) * w;
      wall += w;
      for (Kind other : Kind.values()) {
        leads &= i.share(other) <= i.share(kind);
      }
    }
    double truth = (BLOCKED.get() - blocked0) / (threads * (double) (System.nanoTime() - t0));
    return new Share(wall == 0 ? 0 : part / wall, truth, leads);
  }

  private static void assertShare(Share s, Kind kind) {
    assertThat(s.leads()).as("%s leads the classes but idle: %s", kind, s).isTrue();
    assertThat(s.estimate())
        .as("%s share of the group's thread time against the measured %.3f", kind, s.truth())
        .isBetween(s.truth() * 0.8, s.truth() * 1.2);
  }

  static void contendedMethod() {
    long outside = System.nanoTime() + 500_000; // a little work of its own
    while (System.nanoTime() < outside) {
      Thread.onSpinWait();
    }
    long before = System.nanoTime();
    synchronized (LOCK) { // the planted problem: 2 ms of every thread's work under one lock
      BLOCKED.addAndGet(System.nanoTime() - before);
      long until = System.nanoTime() + 2_000_000;
      while (System.nanoTime() < until) {
        Thread.onSpinWait();
      }
    }
  }

  /**
   * A thread start the agent's listener failed to report is a start not recorded: the next delta
   * reports it as an event dropped.
   */
  @Test
  void threadStartsTheListenerFailedToReportAreReportedAsEventsDropped() throws Exception {
    profiler.close();
    ThreadStarts starts = new ThreadStarts();
    profiler = JfrProfiler.start(recorder, activity, settings(), starts);
    assertThat(profiler.awaitRunning(DEADLINE)).isTrue();
    recorder.takeDropped(); // what came before
    starts.timingFailed();
    starts.timingFailed();
    assertThat(profiler.nextFlushes(2).await(DEADLINE.toSeconds(), TimeUnit.SECONDS)).isTrue();
    assertThat(recorder.takeDropped()).isEqualTo(2);
  }

  @Test
  void exactSampleAttributionIsWhatTheJvmWasStartedWith() {
    boolean flag =
        java.lang.management.ManagementFactory.getRuntimeMXBean()
            .getInputArguments()
            .contains("-XX:+DebugNonSafepoints");
    assertThat(JfrProfiler.exactSampleAttribution()).isEqualTo(flag);
  }

  @Test
  void lockContentionOnOneMonitorIsSyncAtTheContendedMethod() throws Exception {
    for (int i = 0; i < 4; i++) {
      spawn("contended-" + i, JfrProfilerTest::contendedMethod);
    }
    Interval i = awaitDominance("contended-*", Kind.SYNC);
    assertThat(i.byKind().getOrDefault(Kind.SYNC, 0.0))
        .as("SYNC time of contended-* (all: %s)", i.byKind())
        .isGreaterThan(i.total() / 2);
    assertThat(i.topPath()).endsWith("/" + JfrProfilerTest.class.getName() + ".contendedMethod");
    assertShare(steadyShare("contended-*", Kind.SYNC, 4), Kind.SYNC);
  }

  /**
   * Threads stuck on a monitor another thread holds for seconds (a deadlock would hold it for
   * ever): JFR reports their block only when it ends, so without looking at the threads they would
   * show as idle all along. Sync must lead while the lock is held, and the whole episode must count
   * once: the block's report, when it comes, adds only what was not counted while it lasted. After
   * the lock, the threads sleep (wait), so the sync counted is the blocks'.
   */
  @Test
  void threadsStuckOnAHeldMonitorAreSyncWhileItIsHeldAndTheBlockCountsOnce() throws Exception {
    Object monitor = new Object();
    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Thread holder =
        new Thread(
            () -> {
              synchronized (monitor) {
                held.countDown();
                try {
                  release.await();
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              }
            },
            "holder");
    holder.setDaemon(true);
    holder.start();
    held.await();
    AtomicLong blocked = new AtomicLong();
    for (int k = 0; k < 2; k++) {
      Thread t =
          new Thread(
              () -> {
                long before = System.nanoTime();
                synchronized (monitor) {
                  blocked.addAndGet(System.nanoTime() - before);
                }
                while (!stop.get()) {
                  LockSupport.parkNanos(50_000_000); // done: waits, not sync
                }
              },
              "stuck-" + k);
      t.setDaemon(true);
      workload.add(t);
      t.start();
    }
    double sync = 0;
    try {
      List<Double> shares = new ArrayList<>();
      for (int k = 0; k < 4; k++) {
        Interval i = nextInterval("stuck-*", Kind.SYNC);
        shares.add(i.share(Kind.SYNC));
        sync += i.threads() == null ? 0 : i.threads().getSyncNanos();
      }
      assertThat(shares.subList(2, 4))
          .as("sync shares of stuck-* while the lock is held (before the fix: 0): %s", shares)
          .allSatisfy(x -> assertThat(x).isGreaterThan(0.9));
    } finally {
      release.countDown();
    }
    for (int k = 0; k < 3; k++) { // the blocks' reports arrive, and what did not fit is carried
      Interval i = nextInterval("stuck-*", Kind.SYNC);
      sync += i.threads() == null ? 0 : i.threads().getSyncNanos();
    }
    assertThat(sync)
        .as("sync counted for the episode against %.2f s blocked", blocked.get() / 1e9)
        .isBetween(blocked.get() * 0.85, blocked.get() * 1.05);
  }

  static void readMethod(InputStream in) {
    long before = System.nanoTime();
    try {
      int b = in.read();
      BLOCKED.addAndGet(System.nanoTime() - before);
      if (b < 0) {
        LockSupport.parkNanos(1_000_000); // the writer has gone: the test is ending
      }
    } catch (java.io.IOException e) {
      LockSupport.parkNanos(1_000_000);
    }
  }

  /**
   * Advances the I/O gate's clock by {@code step} and waits for two batches, until the events are
   * {@code on} (an I/O event of the test JVM's own in the same batch can keep them on once).
   */
  private void advanceUntilIoEvents(AtomicLong clock, Duration step, boolean on)
      throws InterruptedException {
    for (int k = 0; k < 5 && profiler.ioEventsOn() != on; k++) {
      clock.addAndGet(step.toNanos());
      assertThat(profiler.nextFlushes(2).await(DEADLINE.toSeconds(), TimeUnit.SECONDS)).isTrue();
    }
    assertThat(profiler.ioEventsOn()).as("I/O events on").isEqualTo(on);
  }

  @Test
  void ioEventsQuietForTheirQuietTimeAreTurnedOffAndProbedAgain() throws Exception {
    profiler.close();
    AtomicLong clock = new AtomicLong();
    Duration quiet = JfrSettings.defaults().ioQuiet();
    AtomicBoolean look = new AtomicBoolean(true);
    profiler =
        JfrProfiler.start(
            recorder,
            activity,
            settings(),
            ThreadStarts.NONE,
            clock::get,
            () -> look.get() && BlockingIo.anyThreadIn(name -> name.startsWith("reader-")));
    assertThat(profiler.awaitRunning(DEADLINE)).as("JFR stream running").isTrue();
    assertThat(profiler.ioEventsOn()).as("I/O events on at start").isTrue();
    assertThat(activity.takeIoUnobservedNanos(Long.MAX_VALUE)).as("unobserved while on").isZero();
    advanceUntilIoEvents(clock, quiet, false);

    nextInterval("reader-*", Kind.IO); // a fresh start for the readers' intervals
    List<java.io.Closeable> sockets = plantSlowPeers();
    try {
      for (int k = 0; k < 2; k++) {
        long blocked0 = BLOCKED.get();
        long t0 = System.nanoTime();
        Interval i = nextInterval("reader-*", Kind.IO);
        double blocked = (BLOCKED.get() - blocked0) / (2.0 * (System.nanoTime() - t0));
        assertThat(blocked).as("the readers were blocked in reads").isGreaterThan(0.5);
        assertThat(i.byKind()).as("records of reader-* while off").doesNotContainKey(Kind.IO);
      }
      advanceUntilIoEvents(clock, quiet, true); // the first off period is the quiet time
      assertThat(activity.takeIoUnobservedNanos(Long.MAX_VALUE))
          .as("unobserved: the off period, reported with the thread activity")
          .isEqualTo(quiet.toNanos());
      Interval i = awaitDominance("reader-*", Kind.IO);
      assertThat(i.byKind().getOrDefault(Kind.IO, 0.0))
          .as("IO time of reader-* once probed (all: %s)", i.byKind())
          .isGreaterThan(i.total() / 2);
      look.set(false); // from now on only the events decide
      clock.addAndGet(quiet.toNanos() - 1); // the readers' events keep them on
      assertThat(profiler.nextFlushes(2).await(DEADLINE.toSeconds(), TimeUnit.SECONDS)).isTrue();
      clock.addAndGet(quiet.toNanos() - 1);
      assertThat(profiler.nextFlushes(2).await(DEADLINE.toSeconds(), TimeUnit.SECONDS)).isTrue();
      assertThat(profiler.ioEventsOn()).as("on while events come").isTrue();
    } finally {
      close(sockets);
    }
  }

  /**
   * Two reader threads ({@code reader-*}) blocked in socket reads on slow peers (a byte every 5
   * ms); returns what to close, the server socket last.
   */
  private List<java.io.Closeable> plantSlowPeers() throws java.io.IOException {
    ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    List<java.io.Closeable> sockets = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
      Socket accepted = server.accept();
      sockets.add(client);
      sockets.add(accepted);
      OutputStream out = accepted.getOutputStream();
      spawn(
          "paced-writer-" + i,
          () -> {
            LockSupport.parkNanos(5_000_000); // the planted latency: a slow peer
            try {
              out.write(1);
            } catch (java.io.IOException e) {
              stop.set(true);
            }
          });
      InputStream in = client.getInputStream();
      spawn("reader-" + i, () -> readMethod(in));
    }
    sockets.add(server);
    return sockets;
  }

  private void close(List<java.io.Closeable> sockets) throws java.io.IOException {
    stop.set(true);
    for (java.io.Closeable s : sockets) {
      s.close();
    }
  }

  @Test
  void blockingSocketReadsAreIoAtTheReadingMethod() throws Exception {
    List<java.io.Closeable> sockets = plantSlowPeers();
    try {
      Interval i = awaitDominance("reader-*", Kind.IO);
      assertThat(i.byKind().getOrDefault(Kind.IO, 0.0))
          .as("IO time of reader-* (all: %s)", i.byKind())
          .isGreaterThan(i.total() / 2);
      // The read is the path's leaf or has the JDK's socket frames below it: JDKs from 22 on
      // leave their own I/O frames out of socket and file events' stacks (seen on 25).
      assertThat(i.topPath().split("/"))
          .as("frames of %s", i.topPath())
          .contains(JfrProfilerTest.class.getName() + ".readMethod");
      assertShare(steadyShare("reader-*", Kind.IO, 2), Kind.IO);
    } finally {
      close(sockets);
    }
  }

  @Test
  void withIoOffTheSameReadsAreIdleNotIo() throws Exception {
    profiler.close();
    long beforeStart = System.nanoTime();
    startProfiler(settings().withSources(true, true, true, true, false));
    long afterStart = System.nanoTime();
    nextInterval("reader-*", Kind.IO); // a fresh start for the readers' intervals
    List<java.io.Closeable> sockets = plantSlowPeers();
    try {
      long deadline = System.nanoTime() + DEADLINE.toNanos();
      Interval first = nextInterval("reader-*", Kind.IO);
      while (first.threads() == null && System.nanoTime() < deadline) {
        first = nextInterval("reader-*", Kind.IO);
      }
      assertThat(first.threads()).as("the readers' thread time").isNotNull();
      for (int k = 0; k < 3; k++) {
        long blocked0 = BLOCKED.get();
        long t0 = System.nanoTime();
        Interval i = nextInterval("reader-*", Kind.IO);
        double blocked = (BLOCKED.get() - blocked0) / (2.0 * (System.nanoTime() - t0));
        assertThat(blocked)
            .as("the readers were blocked in reads most of the time")
            .isGreaterThan(0.5);
        assertThat(i.byKind()).as("records of reader-*").doesNotContainKey(Kind.IO);
        assertThat(i.threads().getIoNanos()).as("IO nanos of reader-*").isZero();
        assertThat(i.threads().getIdleNanos())
            .as("idle nanos of reader-* (%s)", i.threads())
            .isGreaterThan(i.threads().getWallNanos() / 2);
      }
      long t1 = System.nanoTime();
      long unobserved = activity.takeIoUnobservedNanos(Long.MAX_VALUE);
      long t2 = System.nanoTime();
      assertThat(unobserved)
          .as("all of the time unobserved")
          .isBetween(t1 - afterStart, t2 - beforeStart);
    } finally {
      close(sockets);
    }
  }

  static void waitMethod(java.util.concurrent.BlockingQueue<Integer> queue) {
    long before = System.nanoTime();
    try {
      queue.take();
      BLOCKED.addAndGet(System.nanoTime() - before);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Test
  void consumersOfASlowQueueAreWaitAtTheWaitingMethod() throws Exception {
    java.util.concurrent.BlockingQueue<Integer> queue =
        new java.util.concurrent.LinkedBlockingQueue<>();
    spawn(
        "slow-producer",
        () -> {
          LockSupport.parkNanos(5_000_000); // the planted problem: work arrives slowly
          queue.add(1);
        });
    for (int i = 0; i < 3; i++) {
      spawn("consumer-" + i, () -> waitMethod(queue));
    }
    try {
      Interval i = awaitDominance("consumer-*", Kind.WAIT);
      assertThat(i.byKind().getOrDefault(Kind.WAIT, 0.0))
          .as("WAIT time of consumer-* (all: %s)", i.byKind())
          .isGreaterThan(i.total() / 2);
      assertThat(i.topPath()).contains("/" + JfrProfilerTest.class.getName() + ".waitMethod/");
      assertShare(steadyShare("consumer-*", Kind.WAIT, 3), Kind.WAIT);
    } finally {
      stop.set(true);
      for (int k = 0; k < 3; k++) {
        queue.add(0); // wake the consumers so that they see the stop
      }
    }
  }

  static volatile byte[] sink;

  static void churnMethod() {
    for (int k = 0; k < 64; k++) {
      sink = new byte[16 * 1024];
    }
  }

  @Test
  void allocationChurnIsAllocatedBytesAtTheAllocatingMethod() throws Exception {
    spawn("churner", JfrProfilerTest::churnMethod);
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    Map<String, Double> bytesByPath = new java.util.HashMap<>();
    while (bytesByPath.isEmpty() && System.nanoTime() < deadline) {
      assertThat(never.await(INTERVAL.toMillis(), TimeUnit.MILLISECONDS)).isFalse();
      for (Rows.Row r : Rows.of(encoder, recorder, recorder.collect())) {
        if (r.group().equals("churner") && r.metric().equals(JfrSink.ALLOCATION_MEASUREMENT)) {
          bytesByPath.merge(r.path(), r.sum(), Double::sum);
        }
      }
    }
    assertThat(bytesByPath).as("allocation samples of the churner").isNotEmpty();
    String top =
        bytesByPath.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
    assertThat(top).endsWith("/" + JfrProfilerTest.class.getName() + ".churnMethod");
    assertThat(bytesByPath.get(top)).as("bytes at the churning method").isGreaterThan(1 << 20);
  }

  static void spawnMethod() {
    Thread t = new Thread(() -> {}, "short-lived");
    t.start();
    try {
      t.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Test
  void threadChurnIsThreadManagementAtTheStartingMethod() throws Exception {
    spawn("spawner", JfrProfilerTest::spawnMethod);
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    long starts = 0;
    String path = "";
    while (starts < 100 && System.nanoTime() < deadline) {
      assertThat(never.await(INTERVAL.toMillis(), TimeUnit.MILLISECONDS)).isFalse();
      for (Rows.Row r : Rows.of(encoder, recorder, recorder.collect())) {
        if (r.group().equals("spawner")
            && r.kind() == Kind.THREAD_MGMT
            && r.event().equals(EventMapper.THREAD_START)) {
          starts += r.count();
          path = r.path();
        }
      }
    }
    assertThat(starts).as("thread starts seen from the spawner").isGreaterThanOrEqualTo(100);
    // JFR's stack of a thread start ends at the caller of Thread.start.
    assertThat(path).endsWith("/" + JfrProfilerTest.class.getName() + ".spawnMethod");
  }

  @Test
  void threadsThatEndRightAfterStartingAnotherLeaveNoTableBehind() throws Exception {
    // JFR writes a thread's jdk.ThreadStart when it first runs, charged to the thread that started
    // it; that one has usually ended by then here, and its jdk.ThreadEnd was delivered first.
    int parents = 2_000;
    java.util.Queue<Thread> children = new java.util.concurrent.ConcurrentLinkedQueue<>();
    java.util.Set<Long> ended = new java.util.HashSet<>();
    for (int i = 0; i < parents; i++) {
      Thread parent =
          new Thread(
              () -> {
                Thread child = new Thread(() -> {}, "child");
                children.add(child);
                child.start();
              },
              "parent-" + i);
      parent.start();
      parent.join();
      ended.add(parent.getId());
    }
    for (Thread child : children) {
      child.join();
      ended.add(child.getId());
    }
    // Every event of these threads comes before the last of their ThreadEnds.
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    long ends = 0;
    while (ends < 2L * parents && System.nanoTime() < deadline) {
      assertThat(profiler.nextFlushes(1).await(DEADLINE.toMillis(), TimeUnit.MILLISECONDS))
          .isTrue();
      for (Rows.Row r : Rows.of(encoder, recorder, recorder.collect())) {
        if ((r.group().equals("parent-*") || r.group().equals("child"))
            && r.event().equals(EventMapper.THREAD_END)) {
          ends += r.count();
        }
      }
    }
    assertThat(ends).as("thread ends delivered").isEqualTo(2L * parents);
    assertThat(profiler.threadsWithTables())
        .as("tables of ended threads")
        .doesNotContainAnyElementsOf(ended);
  }

  /** Spins until this thread has used {@code nanos} more CPU time. */
  static void spinCpu(long nanos) {
    java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
    long until = mx.getCurrentThreadCpuTime() + nanos;
    while (mx.getCurrentThreadCpuTime() < until) {
      Thread.onSpinWait();
    }
  }

  static void imbalancedWorker(int k, java.util.concurrent.CyclicBarrier round) {
    spinCpu(k == 0 ? 40_000_000 : 10_000_000); // the planted problem: worker 0 gets 4x the work
    try {
      round.await(); // the others wait here for worker 0
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (java.util.concurrent.BrokenBarrierException e) {
      LockSupport.parkNanos(1_000_000); // the test is ending: it broke the barrier
    }
  }

  /**
   * Four workers do rounds of statically split work, worker 0 four times as much as the others,
   * meeting at a barrier after each round. Per round the CPU times are 40, 10, 10 and 10 ms: the
   * imbalance max - avg is 22.5 ms, 56% of the slowest thread's time; the fast threads wait at the
   * barrier.
   */
  @Test
  void anImbalancedPoolShowsItsCpuSpreadAndWaitsAtTheBarrier() throws Exception {
    java.util.concurrent.CyclicBarrier round = new java.util.concurrent.CyclicBarrier(4);
    for (int k = 0; k < 4; k++) {
      int worker = k;
      spawn("imbalanced-" + k, () -> imbalancedWorker(worker, round));
    }
    try {
      Interval i = awaitDominance("imbalanced-*", Kind.COMPUTE);
      ThreadGroupActivity a = i.threads();
      long deadline = System.nanoTime() + DEADLINE.toNanos();
      while (a == null || a.getCpuMaxNanos() == 0) {
        assertThat(System.nanoTime() - deadline)
            .as("the pool's CPU spread showed before the deadline")
            .isNegative();
        i = nextInterval("imbalanced-*", Kind.WAIT);
        a = i.threads();
      }
      // One interval more: the first may have started mid-round.
      i = nextInterval("imbalanced-*", Kind.WAIT);
      a = i.threads();
      assertThat(a.getThreads()).isEqualTo(4);
      double avg = (double) a.getCpuSumNanos() / a.getThreads();
      double imbalance = (a.getCpuMaxNanos() - avg) / a.getCpuMaxNanos();
      assertThat(imbalance)
          .as("(max - avg) / max of per-thread CPU time (%s)", a)
          .isBetween(0.5625 * 0.8, 0.5625 * 1.2);
      assertThat((double) a.getCpuMaxNanos() / a.getCpuMinNanos())
          .as("slowest / fastest thread's CPU time (%s)", a)
          .isBetween(4 * 0.8, 4 * 1.2);
      assertThat(i.topPath())
          .as("where the fast threads wait")
          .contains("/" + JfrProfilerTest.class.getName() + ".imbalancedWorker/");
      assertThat(i.share(Kind.WAIT)).as("WAIT share (%s)", a).isGreaterThan(0.2);
    } finally {
      stop.set(true);
      round.reset(); // breaks the barrier: the workers see the stop
    }
  }

  @Test
  void aRecordingStoppedFromOutsideIsSaidAndIoCountsAsUnobserved() throws Exception {
    activity.takeIoUnobservedNanos(Long.MAX_VALUE); // what the start left
    // The application (or jcmd JFR.stop) stops every recording, the agent's included.
    for (jdk.jfr.Recording r : jdk.jfr.FlightRecorder.getFlightRecorder().getRecordings()) {
      r.stop();
    }
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    while (profiler.streaming() && System.nanoTime() < deadline) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10)); // a poll tick
    }
    assertThat(profiler.streaming()).isFalse();
    long before = System.nanoTime();
    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // time that goes unobserved
    long elapsed = System.nanoTime() - before;
    // Before: 0, as if every I/O wait had been seen, while no event arrived any more.
    assertThat(activity.takeIoUnobservedNanos(Long.MAX_VALUE)).isGreaterThanOrEqualTo(elapsed);
  }
}
