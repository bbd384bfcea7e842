package dev.profold.collector.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.ProfoldConfig;
import dev.profold.client.internal.jfr.JfrProfiler;
import dev.profold.client.internal.jfr.JfrSettings;
import dev.profold.client.internal.runtime.ProfoldRuntime;
import dev.profold.collector.alert.Alert;
import dev.profold.collector.alert.AlertState;
import dev.profold.collector.config.CollectorConfig;
import dev.profold.collector.config.ConfigLoader;
import dev.profold.collector.server.CollectorServer;
import dev.profold.collector.testing.ThreadSeconds;
import dev.profold.collector.testing.ThreadsScheme;
import java.io.StringReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Planted problems end to end: a real workload in this JVM, profiled by the agent's JFR stream into
 * a Profold client that pushes over gRPC to a real collector with alert rules (1 s intervals). For
 * each, the right alert must fire, naming the class, the thread group and the call path, and its
 * estimate of the loss must be within 20% of what the workload measured itself. JFR is
 * asynchronous, so waits are bounded by deadlines; nothing is asserted about timing.
 */
class PlantedAlertsTest {
  private static final Duration DEADLINE = Duration.ofSeconds(90);
  private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
  private static final Object LOCK = new Object();

  private static final String CONFIG =
      """
      grpc_port: 0
      http_port: 0
      interval: 1s
      schemes:
        - name: region
        # Keeps the thread group, so that an alert's top paths are its thread group's own.
        - name: threads
          query: THREADS_QUERY
      alerts:
        rules:
          - name: LockContention
            expr: service_thread_class_ratio{class="sync"} > 0.3
            for: 2
            annotations:
              summary: "{{ $labels.thread_group }} of {{ $labels.service }}: {{ $value | percent }} of thread time blocked on locks"
              paths: "{{ $context.top_paths }}"
          - name: ImbalancedPool
            expr: thread_cpu_imbalance_ratio{thread_group!~"profold.*"} > 0.1
            for: 2
            annotations:
              spread: "{{ $context.cpu_spread }}"
          - name: ThreadManagement
            expr: service_thread_class_ratio{class="thread_mgmt"} > 0.2
            for: 2
            annotations:
              paths: "{{ $context.top_paths }}"
          - name: SlowBackend
            expr: service_thread_class_ratio{class="io"} > 0.5
            for: 2
            annotations:
              paths: "{{ $context.top_paths }}"
              unobserved: "{{ $context.io_unobserved | percent }}"
      """
          .replace("THREADS_QUERY", ThreadsScheme.QUERY);

  private final AtomicBoolean stop = new AtomicBoolean();
  private final List<Thread> workload = new ArrayList<>();
  private CollectorServer server;
  private ProfoldRuntime runtime;
  private JfrProfiler profiler;

  @BeforeEach
  void startCollector() throws Exception {
    CollectorConfig c = ConfigLoader.parse(new StringReader(CONFIG), "collector.yaml");
    server = new CollectorServer(c, InstantSource.system());
    server.start();
  }

  @AfterEach
  void stopEverything() throws Exception {
    stop.set(true);
    for (Thread t : workload) {
      t.interrupt();
      t.join(10_000);
    }
    if (profiler != null) {
      profiler.close();
    }
    if (runtime != null) {
      runtime.shutdown(Duration.ofSeconds(5));
    }
    server.stop();
  }

  private void profile(String service) throws Exception {
    runtime =
        ProfoldRuntime.start(
            ProfoldConfig.builder()
                .endpoint("127.0.0.1:" + server.grpcPort())
                .service(service)
                .instance(service + "-1")
                .interval(Duration.ofSeconds(1))
                .build());
    Duration ms1 = Duration.ofMillis(1);
    profiler =
        JfrProfiler.start(
            runtime.recorder(),
            runtime.activity(),
            JfrSettings.defaults()
                .withSamplePeriod(Duration.ofMillis(10))
                .withThresholds(ms1, ms1, ms1));
    assertThat(profiler.awaitRunning(DEADLINE)).as("JFR stream running").isTrue();
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

  /** Waits until rule {@code rule} fires for labels including {@code labels}. */
  private Alert awaitFiring(String rule, Map<String, String> labels) throws InterruptedException {
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    while (System.nanoTime() < deadline) {
      Optional<Alert> a =
          server.alerts().alerts().stream()
              .filter(x -> x.rule().equals(rule) && x.state() == AlertState.FIRING)
              .filter(x -> x.labels().entrySet().containsAll(labels.entrySet()))
              .findFirst();
      if (a.isPresent()) {
        return a.get();
      }
      TimeUnit.MILLISECONDS.sleep(200); // a poll tick
    }
    throw new AssertionError(
        rule
            + labels
            + " did not fire within "
            + DEADLINE
            + "; alerts: "
            + server.alerts().alerts());
  }

  /** The mean of the firing alert's value over its next {@code n} evaluations. */
  private double steadyValue(String rule, Map<String, String> labels, int n)
      throws InterruptedException {
    return steadyValue(rule, labels, n, false);
  }

  /**
   * The mean of the firing alert's value over {@code n} evaluations, the current value first;
   * without it when {@code skipCurrent}.
   */
  private double steadyValue(String rule, Map<String, String> labels, int n, boolean skipCurrent)
      throws InterruptedException {
    List<Double> seen = new ArrayList<>();
    double last = Double.NaN;
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    while (seen.size() < n && System.nanoTime() < deadline) {
      double v = awaitFiring(rule, labels).value();
      if (v != last) {
        seen.add(v);
        last = v;
      }
      TimeUnit.MILLISECONDS.sleep(50); // a poll tick
    }
    assertThat(seen).as("evaluations of %s%s", rule, labels).hasSize(n);
    return seen.stream()
        .skip(skipCurrent ? 1 : 0)
        .mapToDouble(Double::doubleValue)
        .average()
        .orElseThrow();
  }

  /**
   * Waits for the firing alert's next evaluation, runs {@code atBoundary}, and returns the mean of
   * its values over the {@code n} evaluations after that: the intervals that closed after {@code
   * atBoundary} ran, so a truth measured from then on covers the same seconds.
   */
  private double valuesAfterBoundary(
      String rule, Map<String, String> labels, int n, Runnable atBoundary)
      throws InterruptedException {
    double first = awaitFiring(rule, labels).value();
    long deadline = System.nanoTime() + DEADLINE.toNanos();
    while (awaitFiring(rule, labels).value() == first && System.nanoTime() < deadline) {
      TimeUnit.MILLISECONDS.sleep(20); // a poll tick
    }
    atBoundary.run();
    return steadyValue(rule, labels, n + 1, true);
  }

  /** Prints an alert's estimate next to the truth measured over the same time; within 20%. */
  private static void assertNearTruth(String what, double estimate, double truth, Alert a) {
    System.out.printf(
        java.util.Locale.ROOT,
        "planted %s: estimated %.3f, measured %.3f%n",
        what,
        estimate,
        truth);
    assertThat(estimate)
        .as("%s: estimated, against %.3f measured; %s", what, truth, a)
        .isBetween(truth * 0.8, truth * 1.2);
  }

  private static void spin(long nanos) {
    long until = System.nanoTime() + nanos;
    while (System.nanoTime() < until) {
      Thread.onSpinWait();
    }
  }

  static void reserve(AtomicLong blocked) {
    spin(500_000); // work of its own
    long before = System.nanoTime();
    synchronized (LOCK) { // the planted problem: 2 ms of every request under one lock
      blocked.addAndGet(System.nanoTime() - before);
      spin(2_000_000);
    }
  }

  @Test
  void lockContentionInOneServiceFiresNamingTheClassPoolAndPath() throws Exception {
    profile("inventory");
    AtomicLong blocked = new AtomicLong();
    for (int i = 0; i < 4; i++) {
      spawn("reserve-" + i, () -> reserve(blocked));
    }
    Alert a = awaitFiring("LockContention", Map.of("service", "inventory"));
    // The estimate over the next three intervals against the truth over the same time.
    long from = System.nanoTime();
    long blockedFrom = blocked.get();
    double estimate = steadyValue("LockContention", Map.of("service", "inventory"), 3);
    double truth = (blocked.get() - blockedFrom) / (4.0 * (System.nanoTime() - from));

    assertThat(a.labels())
        .containsEntry("thread_group", "reserve-*")
        .containsEntry("class", "sync");
    assertThat(a.annotations().get("paths"))
        .as("the top call path")
        .contains(PlantedAlertsTest.class.getName() + ".reserve");
    assertNearTruth("lock contention: blocked share", estimate, truth, a);
  }

  /**
   * One request of a {@code fetch-*} thread: half a millisecond of its own work, then a request
   * byte to a backend that answers 5 ms later, read back with a blocking socket read.
   */
  private void fetch(Socket backend, AtomicLong blocked) {
    spin(500_000);
    try {
      backend.getOutputStream().write(1);
      long before = System.nanoTime();
      int answer = backend.getInputStream().read(); // the planted problem: a slow backend
      blocked.addAndGet(System.nanoTime() - before);
      if (answer < 0) {
        throw new java.io.EOFException("the backend closed the connection");
      }
    } catch (java.io.IOException e) {
      if (!stop.get()) {
        throw new java.io.UncheckedIOException(e);
      }
    }
  }

  /** The backend side of one connection: each request byte answered after 5 ms. */
  private void serveSlowly(Socket accepted) {
    try {
      if (accepted.getInputStream().read() < 0) {
        stop.set(true);
        return;
      }
      LockSupport.parkNanos(5_000_000);
      accepted.getOutputStream().write(1);
    } catch (java.io.IOException e) {
      stop.set(true);
    }
  }

  @Test
  void aSlowBackendFiresAsIoNamingThePoolAndTheReadingMethod() throws Exception {
    profile("frontend");
    AtomicLong blocked = new AtomicLong();
    List<Socket> sockets = new ArrayList<>();
    try (ServerSocket backend = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      for (int i = 0; i < 3; i++) {
        Socket client = new Socket(InetAddress.getLoopbackAddress(), backend.getLocalPort());
        Socket accepted = backend.accept();
        sockets.add(client);
        sockets.add(accepted);
        spawn("backend-" + i, () -> serveSlowly(accepted));
        spawn("fetch-" + i, () -> fetch(client, blocked));
      }
      Map<String, String> labels = Map.of("thread_group", "fetch-*");
      Alert a = awaitFiring("SlowBackend", labels);
      assertThat(a.labels()).containsEntry("service", "frontend").containsEntry("class", "io");
      assertThat(a.annotations().get("paths"))
          .as("the top call paths")
          .contains(PlantedAlertsTest.class.getName() + ".fetch");
      assertThat(a.annotations().get("unobserved"))
          .as("the I/O events were on throughout (the gate finds I/O waits), and the alert says so")
          .isEqualTo("0%");
      // The estimate over the next three intervals against the truth over the same time, from
      // the counters (see the thread management test).
      long[] at = new long[2]; // wall, nanoseconds blocked
      Map<String, Double> before = new HashMap<>();
      valuesAfterBoundary(
          "SlowBackend",
          labels,
          3,
          () -> {
            at[0] = System.nanoTime();
            at[1] = blocked.get();
            before.putAll(classSeconds("frontend", "fetch-*"));
          });
      double truth = (blocked.get() - at[1]) / (3.0 * (System.nanoTime() - at[0]));
      double estimate = ThreadSeconds.share(before, classSeconds("frontend", "fetch-*"), "io");
      assertNearTruth(
          "slow backend: fetch-*'s io share against its time blocked", estimate, truth, a);
    } finally {
      stop.set(true);
      for (Socket s : sockets) {
        s.close();
      }
    }
  }

  /**
   * One side of a transfer that takes {@code first}, then {@code second}: run with the locks the
   * other way round on another thread, the two deadlock (interruptibly, so the test can end it).
   */
  static void transfer(ReentrantLock first, ReentrantLock second, CyclicBarrier bothHoldOne) {
    try {
      first.lockInterruptibly();
      try {
        bothHoldOne.await();
        second.lockInterruptibly(); // the planted problem: never returns
        second.unlock();
      } finally {
        first.unlock();
      }
    } catch (InterruptedException | java.util.concurrent.BrokenBarrierException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * A deadlock reports no event while it lasts (a block is reported when it ends, and this one does
   * not): the agent's look at the threads at each interval's end must find the two threads stuck,
   * so that the lock alert fires during the incident rather than never.
   */
  @Test
  void aDeadlockFiresAsLockContentionWhileItLasts() throws Exception {
    profile("ledger");
    ReentrantLock accounts = new ReentrantLock();
    ReentrantLock journal = new ReentrantLock();
    CyclicBarrier bothHoldOne = new CyclicBarrier(2);
    spawn("transfer-1", () -> transfer(accounts, journal, bothHoldOne));
    spawn("transfer-2", () -> transfer(journal, accounts, bothHoldOne));
    Alert a = awaitFiring("LockContention", Map.of("service", "ledger"));
    assertThat(a.labels())
        .containsEntry("thread_group", "transfer-*")
        .containsEntry("class", "sync");
    assertThat(a.value())
        .as("share of the deadlocked threads' time in sync; %s", a)
        .isGreaterThan(0.9);
  }

  static void imbalancedRound(int k, CyclicBarrier round) {
    long until = MX.getCurrentThreadCpuTime() + (k == 0 ? 40_000_000 : 10_000_000);
    while (MX.getCurrentThreadCpuTime() < until) {
      Thread.onSpinWait();
    }
    try {
      round.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (java.util.concurrent.BrokenBarrierException e) {
      LockSupport.parkNanos(1_000_000); // the test is ending
    }
  }

  /** Seconds per class the collector has counted for a thread group of a service, from /metrics. */
  private Map<String, Double> classSeconds(String service, String group) {
    Map<String, Double> out = ThreadSeconds.of(server.meters().scrape(), service, group);
    assertThat(out).as("thread seconds of %s in %s", group, service).containsKey("thread_mgmt");
    return out;
  }

  private static final Pattern CPU =
      Pattern.compile(
          "profold_thread_cpu_seconds\\{instance=\"reports-1\",service=\"reports\","
              + "stat=\"(min|avg|max)\",thread_group=\"imbalanced-\\*\"\\} ([0-9.eE+-]+)");

  @Test
  void anImbalancedPoolFiresWithTheImbalanceOfThePlantedWork() throws Exception {
    profile("reports");
    CyclicBarrier round = new CyclicBarrier(4);
    for (int k = 0; k < 4; k++) {
      int worker = k;
      spawn("imbalanced-" + k, () -> imbalancedRound(worker, round));
    }
    try {
      Alert a = awaitFiring("ImbalancedPool", Map.of("thread_group", "imbalanced-*"));
      assertThat(a.labels()).containsEntry("service", "reports");
      assertThat(a.annotations().get("spread")).contains("4 threads");
      // The planted loss: per round the slowest thread uses 40 ms, the average 17.5 ms.
      Map<String, Double> cpu = new java.util.HashMap<>();
      Matcher m = CPU.matcher(server.meters().scrape());
      while (m.find()) {
        cpu.put(m.group(1), Double.parseDouble(m.group(2)));
      }
      double estimated = (cpu.get("max") - cpu.get("avg")) / cpu.get("max");
      System.out.printf(
          java.util.Locale.ROOT,
          "planted imbalance: estimated (max - avg) / max %.3f, planted 0.5625 (%s)%n",
          estimated,
          cpu);
      assertThat(estimated)
          .as("(max - avg) / max of per-thread CPU time: %s", cpu)
          .isBetween(0.5625 * 0.8, 0.5625 * 1.2);
    } finally {
      stop.set(true);
      round.reset();
    }
  }

  static volatile long sink;
  // Read afresh by every task (volatile: no hoisting out of a loop), never written again.
  static volatile long seed = System.nanoTime();

  /**
   * A task far too small for its executor: a chain of four multiply-adds, a few nanoseconds. It
   * writes nothing shared (the store never happens), so its cost does not depend on which thread
   * runs it.
   */
  static void tinyTask() {
    long x = seed;
    for (int i = 0; i < 4; i++) {
      x = x * 6364136223846793005L + 1442695040888963407L;
    }
    if (x == 42) {
      sink = x;
    }
  }

  /**
   * A thread submits tasks of a few nanoseconds, one by one, to a fixed pool of two: every
   * hand-over ({@code execute}, queueing, contending for the queue's lock, waking a worker) costs
   * many times the task. The submitter runs no task itself, so the truth is plain: all of its CPU
   * time goes to handing tasks over. When the queue holds more than 10,000 tasks it sleeps a
   * millisecond (off CPU), so the queue's memory stays bounded.
   */
  @Test
  void tasksTooSmallForTheirExecutorFireAsThreadManagement() throws Exception {
    profile("ingest");
    AtomicInteger workers = new AtomicInteger();
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            2,
            2,
            1,
            TimeUnit.MINUTES,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, "tiny-" + workers.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    Runnable task = PlantedAlertsTest::tinyTask;
    Thread submitter =
        new Thread(
            () -> {
              long n = 0;
              while (!stop.get()) {
                pool.execute(task);
                if (++n % 1024 == 0 && pool.getQueue().size() > 10_000) {
                  LockSupport.parkNanos(1_000_000); // back-pressure: the queue's memory
                }
              }
            },
            "submitter");
    submitter.setDaemon(true);
    workload.add(submitter);
    submitter.start();
    try {
      Alert a = awaitFiring("ThreadManagement", Map.of("thread_group", "submitter"));
      assertThat(a.labels()).containsEntry("service", "ingest");
      assertThat(a.annotations().get("paths"))
          .as("the top call paths")
          .contains("java.util.concurrent.ThreadPoolExecutor.execute");
      // The estimate over the next six intervals against the truth over the same time. Read from
      // the counters, not the alert's values: when the machine is loaded, a client's interval can
      // arrive late and be replaced before any evaluation sees it, so the values an alert saw are
      // not a fair sample of the window; the counters miss nothing.
      long[] at = new long[2]; // wall, CPU
      Map<String, Double> before = new HashMap<>();
      double alertMean =
          valuesAfterBoundary(
              "ThreadManagement",
              Map.of("thread_group", "submitter"),
              6,
              () -> {
                at[0] = System.nanoTime();
                at[1] = MX.getThreadCpuTime(submitter.getId());
                before.putAll(classSeconds("ingest", "submitter"));
              });
      long wall = System.nanoTime() - at[0];
      double truth = (MX.getThreadCpuTime(submitter.getId()) - at[1]) / (double) wall;
      double estimate =
          ThreadSeconds.share(before, classSeconds("ingest", "submitter"), "thread_mgmt");
      assertNearTruth(
          String.format(
              java.util.Locale.ROOT,
              "thread management: submitter's thread_mgmt share (alert values %.3f) against its"
                  + " CPU share",
              alertMean),
          estimate,
          truth,
          a);
    } finally {
      stop.set(true);
      pool.shutdownNow();
    }
  }
}
