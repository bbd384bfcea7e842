package dev.profold.collector.e2e;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A planted workload for {@link AgentShortThreadsIT}: a batch job whose work runs in short-lived
 * threads ({@code short-N}, two at a time), each burning about 30 ms of CPU and ending, far within
 * one interval, so that no interval's end ever finds most of them alive. Each thread adds its own
 * CPU time, read as its last act, to a total; the program prints the total and the number of
 * threads once a second: {@code short <cpu-nanos> <threads>}. Runs until killed.
 */
public final class PlantedShortThreads {
  private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
  private static final AtomicLong CPU = new AtomicLong();

  private PlantedShortThreads() {}

  public static void main(String[] args) throws InterruptedException {
    System.out.println("planted short threads running");
    System.out.flush();
    long printed = System.nanoTime();
    for (long n = 0; ; n += 2) {
      Thread a = new Thread(PlantedShortThreads::work, "short-" + n % 100);
      Thread b = new Thread(PlantedShortThreads::work, "short-" + (n + 1) % 100);
      a.start();
      b.start();
      a.join();
      b.join();
      long now = System.nanoTime();
      if (now - printed >= 1_000_000_000L) {
        System.out.println("short " + CPU.get() + " " + (n + 2));
        System.out.flush();
        printed = now;
      }
    }
  }

  private static void work() {
    long until = MX.getCurrentThreadCpuTime() + 30_000_000L;
    long x = 0;
    while (MX.getCurrentThreadCpuTime() < until) {
      for (int i = 0; i < 10_000; i++) {
        x += i * 31L ^ x;
      }
    }
    CPU.addAndGet(MX.getCurrentThreadCpuTime() + (x == 42 ? 1 : 0));
  }
}
