package dev.profold.client.internal.jfr;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.Kind;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.record.Recorder;
import dev.profold.proto.v1.SourceIdentity;
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
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Planted problems in this JVM, profiled by a real JFR stream into a recorder whose tables the test
 * collects once per one-second interval: the planted class must dominate the planted thread group's
 * recorded time, at the planted method, within two intervals of the group's first data. JFR is
 * asynchronous, so the waits are bounded by generous deadlines; nothing is asserted about timing.
 */
class JfrProfilerTest {
  private static final Duration INTERVAL = Duration.ofSeconds(1);
  private static final Duration DEADLINE = Duration.ofSeconds(90);
  private static final Object LOCK = new Object();

  private final DeltaEncoder encoder =
      new DeltaEncoder(
          SourceIdentity.newBuilder().setService("s").setInstance("i").setIncarnationId(1).build());
  private final Recorder recorder = new Recorder(encoder, 4096);
  private final AtomicBoolean stop = new AtomicBoolean();
  private final List<Thread> workload = new ArrayList<>();
  private final CountDownLatch never = new CountDownLatch(1);
  private JfrProfiler profiler;

  @BeforeEach
  void start() throws Exception {
    Duration ms1 = Duration.ofMillis(1);
    profiler =
        JfrProfiler.start(
            recorder,
            JfrSettings.defaults()
                .withSamplePeriod(Duration.ofMillis(10))
                .withThresholds(ms1, ms1, ms1));
    assertThat(profiler.awaitRunning(DEADLINE)).as("JFR stream running").isTrue();
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

  /** One interval's time of the group, by kind, and the time of each path of {@code kind}. */
  private record Interval(Map<Kind, Double> byKind, Map<String, Double> pathsOfKind) {
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
    return new Interval(byKind, paths);
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

  static void contendedMethod() {
    synchronized (LOCK) {
      long until = System.nanoTime() + 2_000_000;
      while (System.nanoTime() < until) {
        Thread.onSpinWait();
      }
    }
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
  }

  static void readMethod(InputStream in) {
    try {
      if (in.read() < 0) {
        LockSupport.parkNanos(1_000_000); // the writer has gone: the test is ending
      }
    } catch (java.io.IOException e) {
      LockSupport.parkNanos(1_000_000);
    }
  }

  @Test
  void blockingSocketReadsAreIoAtTheReadingMethod() throws Exception {
    ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    List<Socket> sockets = new ArrayList<>();
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
    try {
      Interval i = awaitDominance("reader-*", Kind.IO);
      assertThat(i.byKind().getOrDefault(Kind.IO, 0.0))
          .as("IO time of reader-* (all: %s)", i.byKind())
          .isGreaterThan(i.total() / 2);
      assertThat(i.topPath()).contains("/" + JfrProfilerTest.class.getName() + ".readMethod/");
    } finally {
      stop.set(true);
      for (Socket s : sockets) {
        s.close();
      }
      server.close();
    }
  }

  static void waitMethod(java.util.concurrent.BlockingQueue<Integer> queue) {
    try {
      queue.take();
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
}
