package dev.profold.benchmarks;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What a program that starts and ends threads as fast as it can pays for a profiler: one thread
 * starts short threads that do nothing, joining them 64 at a time, for {@code seconds} after a
 * warm-up of {@code warmup} seconds, and prints the starts per second, the collections and their
 * time, and the heap in use after a final collection (what the profiler holds until its next
 * flush). Run it bare, with JFR, and with the agent ({@code -javaagent:profold-agent.jar=...}),
 * side by side.
 *
 * <p>Usage: {@code java [-javaagent:...] -cp benchmarks.jar dev.profold.benchmarks.ThreadChurn
 * [seconds] [warmup]} (defaults 8 and 4).
 */
public final class ThreadChurn {
  private ThreadChurn() {}

  public static void main(String[] args) throws InterruptedException {
    long seconds = args.length > 0 ? Long.parseLong(args[0]) : 8;
    long warmup = args.length > 1 ? Long.parseLong(args[1]) : 4;
    churn(warmup);
    long gcCount = gcCount();
    long gcMillis = gcMillis();
    long t0 = System.nanoTime();
    long starts = churn(seconds);
    double elapsed = (System.nanoTime() - t0) * 1e-9;
    long collections = gcCount() - gcCount;
    long collectionMillis = gcMillis() - gcMillis;
    System.gc();
    MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
    System.out.printf(
        Locale.ROOT,
        "thread churn: %.0f starts/s, %d collections (%d ms) in %.1f s, heap after GC %.1f MB%n",
        starts / elapsed,
        collections,
        collectionMillis,
        elapsed,
        heap.getUsed() / 1e6);
  }

  /** Starts and joins threads for {@code seconds}; returns how many. */
  private static long churn(long seconds) throws InterruptedException {
    List<Thread> batch = new ArrayList<>(64);
    long end = System.nanoTime() + seconds * 1_000_000_000L;
    long n = 0;
    while (System.nanoTime() < end) {
      Thread t = new Thread(ThreadChurn::nothing, "churn-" + n % 100);
      t.start();
      n++;
      batch.add(t);
      if (batch.size() == 64) {
        for (Thread b : batch) {
          b.join();
        }
        batch.clear();
      }
    }
    for (Thread b : batch) {
      b.join();
    }
    return n;
  }

  private static void nothing() {}

  private static long gcCount() {
    long n = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      n += Math.max(0, gc.getCollectionCount());
    }
    return n;
  }

  private static long gcMillis() {
    long n = 0;
    for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
      n += Math.max(0, gc.getCollectionTime());
    }
    return n;
  }
}
