package dev.profold.benchmarks;

import dev.profold.client.Kind;
import dev.profold.client.Profold;
import dev.profold.client.ProfoldConfig;
import dev.profold.client.Region;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * What the client library holds for one-request virtual threads (Java 21 and later; the class
 * compiles for 17 and finds the virtual-thread executor reflectively). Starts Profold with a
 * 10-minute interval (so no flush happens during the run) and an unreachable collector, runs {@code
 * tasks} virtual threads, at most {@code concurrency} at a time, each opening two nested regions
 * and sleeping 1 ms inside them, and prints the wall time and the heap still held after a GC once
 * they all ended: what the library keeps between two flushes.
 *
 * <p>Usage: {@code java -cp benchmarks.jar dev.profold.benchmarks.VirtualThreadMemory [tasks]
 * [concurrency]} with a JDK 21 or later (defaults 100000 and 1000).
 */
public final class VirtualThreadMemory {
  private VirtualThreadMemory() {}

  @SuppressWarnings("try") // the regions are opened for their timing only
  public static void main(String[] args) throws Exception {
    int tasks = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
    int concurrency = args.length > 1 ? Integer.parseInt(args[1]) : 1000;
    ExecutorService virtual;
    try {
      virtual =
          (ExecutorService)
              Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
    } catch (NoSuchMethodException e) {
      System.err.println("needs Java 21 or later (virtual threads); this is " + Runtime.version());
      System.exit(2);
      return;
    }
    Profold.start(
        ProfoldConfig.builder()
            .endpoint("127.0.0.1:1")
            .service("vt-memory")
            .interval(Duration.ofMinutes(10))
            .build());
    Runtime rt = Runtime.getRuntime();
    System.gc();
    long before = rt.totalMemory() - rt.freeMemory();
    Semaphore gate = new Semaphore(concurrency);
    long start = System.nanoTime();
    for (int i = 0; i < tasks; i++) {
      virtual.execute(
          () -> {
            gate.acquireUninterruptibly();
            try (Region handle = Profold.region("handle", Kind.COMPUTE);
                Region query = Profold.region("db.query", Kind.IO)) {
              Thread.sleep(1);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            } finally {
              gate.release();
            }
          });
    }
    virtual.shutdown();
    if (!virtual.awaitTermination(10, TimeUnit.MINUTES)) {
      throw new IllegalStateException("tasks did not finish within 10 minutes");
    }
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    System.gc();
    long held = rt.totalMemory() - rt.freeMemory() - before;
    System.out.printf(
        Locale.ROOT,
        "%d virtual threads, %d at a time: %d ms, heap held after GC %.1f MB (%.0f B per thread)%n",
        tasks,
        concurrency,
        millis,
        held / 1e6,
        held / (double) tasks);
    Profold.shutdown(Duration.ofMillis(100));
  }
}
