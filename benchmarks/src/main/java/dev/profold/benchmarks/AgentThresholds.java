package dev.profold.benchmarks;

import dev.profold.client.internal.activity.JvmThreads;
import dev.profold.client.internal.activity.ThreadActivity;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.jfr.JfrProfiler;
import dev.profold.client.internal.jfr.JfrSettings;
import dev.profold.client.internal.record.Recorder;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ThreadGroupActivity;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * What the agent's blocking thresholds cost in accuracy and buy in overhead. For each threshold,
 * two planted workloads run with a real JFR stream into a recorder and a {@link ThreadActivity}
 * over one long interval, and the blocked time the agent reports (the SYNC or WAIT class) is
 * compared with the truth the workload measures itself around every blocking call:
 *
 * <ul>
 *   <li>lock: four threads each do 0.2 ms of work of their own, then hold one monitor for a time
 *       drawn from an exponential distribution (mean 1 ms), so waits range from microseconds to
 *       tens of milliseconds;
 *   <li>queue: three consumers take from a queue a producer feeds after exponential delays (mean 2
 *       ms).
 * </ul>
 *
 * Reported per threshold and workload: captured share of the true blocked time, JFR events the
 * agent recorded per second, CPU time of the agent's consumer thread per second, and the workload's
 * own throughput (operations per second) as a proxy for what the events cost the application. A
 * plain {@code main}: {@code java -cp benchmarks.jar dev.profold.benchmarks.AgentThresholds
 * [seconds per run]}.
 */
public final class AgentThresholds {
  private static final Object LOCK = new Object();
  private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

  private AgentThresholds() {}

  /** One run's figures. */
  record Run(
      String workload,
      Duration threshold,
      double trueBlockedSeconds,
      double reportedSeconds,
      double events,
      double consumerCpuSeconds,
      double operations,
      double seconds) {
    String row() {
      return String.format(
          Locale.ROOT,
          "| %s | %s | %.2f | %.2f | %.0f%% | %.0f | %.1f | %.0f |",
          workload,
          threshold.toNanos() == 0 ? "0" : threshold.toMillis() + " ms",
          trueBlockedSeconds,
          reportedSeconds,
          100 * reportedSeconds / trueBlockedSeconds,
          events / seconds,
          1000 * consumerCpuSeconds / seconds,
          operations / seconds);
    }
  }

  public static void main(String[] args) throws Exception {
    int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
    List<Duration> thresholds =
        List.of(
            Duration.ZERO,
            Duration.ofMillis(1),
            Duration.ofMillis(5),
            Duration.ofMillis(10),
            Duration.ofMillis(20));
    System.out.println(
        "| workload | threshold | true blocked (thread-s) | reported (thread-s) | captured |"
            + " events/s | agent consumer CPU (ms/s) | workload ops/s |");
    System.out.println("|---|---|---|---|---|---|---|---|");
    for (String workload : List.of("lock", "queue")) {
      for (Duration t : thresholds) {
        System.out.println(run(workload, t, seconds).row());
      }
    }
    System.out.printf(
        Locale.ROOT,
        "%n%s, %d cores, %d s per run%n",
        Runtime.version(),
        Runtime.getRuntime().availableProcessors(),
        seconds);
  }

  private static long epochNanos() {
    Instant t = Instant.now();
    return t.getEpochSecond() * 1_000_000_000L + t.getNano();
  }

  static Run run(String workload, Duration threshold, int seconds) throws Exception {
    DeltaEncoder encoder =
        new DeltaEncoder(
            SourceIdentity.newBuilder()
                .setService("b")
                .setInstance("b")
                .setIncarnationId(1)
                .build());
    Recorder recorder = new Recorder(encoder, 1 << 16);
    ThreadActivity activity = new ThreadActivity(new JvmThreads());
    JfrProfiler profiler =
        JfrProfiler.start(
            recorder,
            activity,
            JfrSettings.defaults().withThresholds(threshold, threshold, threshold));
    if (!profiler.awaitRunning(Duration.ofSeconds(30))) {
      throw new IllegalStateException("JFR did not start");
    }
    AtomicBoolean stop = new AtomicBoolean();
    AtomicBoolean pause = new AtomicBoolean();
    AtomicLong blockedNanos = new AtomicLong();
    AtomicLong operations = new AtomicLong();
    List<Thread> threads = new ArrayList<>();
    LinkedBlockingQueue<Integer> queue = new LinkedBlockingQueue<>();
    String group = workload.equals("lock") ? "bench-lock-*" : "bench-consumer-*";
    for (int i = 0; i < (workload.equals("lock") ? 4 : 3); i++) {
      SplittableRandom random = new SplittableRandom(42 + i);
      Runnable body =
          workload.equals("lock")
              ? () -> lockCycle(random, blockedNanos, operations)
              : () -> take(queue, blockedNanos, operations);
      threads.add(
          new Thread(
              () -> {
                while (!stop.get()) {
                  if (pause.get()) {
                    spin(1_000_000); // alive, on CPU, recording nothing
                  } else {
                    body.run();
                  }
                }
              },
              group.replace("*", Integer.toString(i))));
    }
    if (workload.equals("queue")) {
      SplittableRandom random = new SplittableRandom(7);
      threads.add(
          new Thread(
              () -> {
                while (!pause.get()) {
                  LockSupport.parkNanos((long) (-Math.log(1 - random.nextDouble()) * 2_000_000));
                  queue.add(1);
                }
              },
              "bench-producer"));
    }
    long start = epochNanos();
    activity.close(start, start);
    long consumerCpu0 = consumerCpu();
    long events0 = profiler.eventsRecorded();
    threads.forEach(Thread::start);
    TimeUnit.SECONDS.sleep(seconds);
    // Stop blocking but keep the threads alive (the activity counts live threads), and let JFR
    // deliver what happened before (it flushes about once a second).
    pause.set(true);
    double truth = blockedNanos.get() / 1e9;
    for (int k = 0; k < 10; k++) {
      queue.add(0);
    }
    TimeUnit.MILLISECONDS.sleep(2500);
    long end = epochNanos();
    double consumer = (consumerCpu() - consumerCpu0) / 1e9;
    double events = profiler.eventsRecorded() - events0;
    List<ThreadGroupActivity> groups = activity.close(start, end);
    stop.set(true);
    for (Thread t : threads) {
      t.join();
    }
    profiler.close();
    double reported = 0;
    for (ThreadGroupActivity g : groups) {
      if (g.getThreadGroup().equals(group)) {
        reported = (workload.equals("lock") ? g.getSyncNanos() : g.getWaitNanos()) / 1e9;
      }
    }
    return new Run(
        workload, threshold, truth, reported, events, consumer, operations.get(), seconds);
  }

  private static long consumerCpu() {
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      if (t.getName().equals("profold-jfr")) {
        return Math.max(0, MX.getThreadCpuTime(t.getId()));
      }
    }
    return 0;
  }

  private static void spin(long nanos) {
    long until = System.nanoTime() + nanos;
    while (System.nanoTime() < until) {
      Thread.onSpinWait();
    }
  }

  private static void lockCycle(SplittableRandom random, AtomicLong blocked, AtomicLong ops) {
    spin(200_000);
    long hold = (long) (-Math.log(1 - random.nextDouble()) * 1_000_000);
    long before = System.nanoTime();
    synchronized (LOCK) {
      blocked.addAndGet(System.nanoTime() - before);
      spin(hold);
    }
    ops.incrementAndGet();
  }

  private static void take(LinkedBlockingQueue<Integer> queue, AtomicLong blocked, AtomicLong ops) {
    long before = System.nanoTime();
    try {
      queue.take();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    blocked.addAndGet(System.nanoTime() - before);
    ops.incrementAndGet();
  }
}
