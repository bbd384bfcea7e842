package dev.profold.benchmarks;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingStream;

/**
 * Where JFR's CPU samples land when a task is small enough to be inlined into its executor: one
 * thread submits tasks of a few hundred nanoseconds (a chain of multiply-adds) to a pool of two
 * that runs them itself when its queue is full, for {@code seconds} seconds, under a JFR stream
 * sampling every 10 ms. Prints, for the pool's threads and for the submitter, the share of their
 * samples whose innermost frame is the task, is executor or queue code, or is elsewhere.
 *
 * <p>Run it with and without {@code -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints}:
 * without it the JIT records where compiled code came from only at safepoints, so samples inside
 * the inlined task name the executor frame around it (docs/agent.md).
 *
 * <p>{@code java [-XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints] -cp benchmarks.jar
 * dev.profold.benchmarks.SampleAttribution [seconds]}
 */
public final class SampleAttribution {
  static volatile long seed = System.nanoTime();
  static volatile long sink;

  private SampleAttribution() {}

  /** The task: 200 dependent multiply-adds, a few hundred nanoseconds. */
  static void task() {
    long x = seed;
    for (int i = 0; i < 200; i++) {
      x = x * 6364136223846793005L + 1442695040888963407L;
    }
    if (x == 42) {
      sink = x;
    }
  }

  public static void main(String[] args) throws Exception {
    int seconds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
    Map<String, int[]> counts = new TreeMap<>(); // thread kind -> {task, executor, other}
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor executor =
        new ThreadPoolExecutor(
            2,
            2,
            1,
            TimeUnit.MINUTES,
            new LinkedBlockingQueue<>(10_000),
            r -> {
              Thread t = new Thread(r, "pool-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            },
            new ThreadPoolExecutor.CallerRunsPolicy());
    Runnable task = SampleAttribution::task;
    try (RecordingStream stream = new RecordingStream()) {
      stream.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(10));
      stream.onEvent(
          "jdk.ExecutionSample",
          e -> {
            String thread = e.getThread("sampledThread").getJavaName();
            if (e.getStackTrace() == null || e.getStackTrace().getFrames().isEmpty()) {
              return;
            }
            String kind = thread.startsWith("pool-") ? "pool" : thread;
            if (!kind.equals("pool") && !kind.equals("submitter")) {
              return;
            }
            RecordedFrame top = e.getStackTrace().getFrames().get(0);
            String where = top.getMethod().getType().getName() + "." + top.getMethod().getName();
            int at =
                where.equals(SampleAttribution.class.getName() + ".task")
                    ? 0
                    : where.startsWith("java.util.concurrent.") ? 1 : 2;
            synchronized (counts) {
              counts.computeIfAbsent(kind, k -> new int[3])[at]++;
            }
          });
      stream.startAsync();
      long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
      Thread submitter =
          new Thread(
              () -> {
                while (System.nanoTime() < end) {
                  executor.execute(task);
                }
              },
              "submitter");
      submitter.start();
      submitter.join();
    }
    executor.shutdownNow();
    boolean exact =
        ManagementFactory.getRuntimeMXBean()
            .getInputArguments()
            .contains("-XX:+DebugNonSafepoints");
    System.out.printf(Locale.ROOT, "DebugNonSafepoints: %s, %d s%n", exact, seconds);
    System.out.printf(
        Locale.ROOT,
        "%-10s %8s %10s %10s %10s%n",
        "threads",
        "samples",
        "task",
        "executor",
        "other");
    counts.forEach(
        (kind, c) -> {
          double all = c[0] + c[1] + c[2];
          System.out.printf(
              Locale.ROOT,
              "%-10s %8d %9.1f%% %9.1f%% %9.1f%%%n",
              kind,
              (int) all,
              100 * c[0] / all,
              100 * c[1] / all,
              100 * c[2] / all);
        });
  }
}
