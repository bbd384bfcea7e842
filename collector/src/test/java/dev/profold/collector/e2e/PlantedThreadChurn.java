package dev.profold.collector.e2e;

import java.util.ArrayList;
import java.util.List;

/**
 * A planted problem for {@link AgentThreadChurnIT}: thread {@code churn-spawner} creates and starts
 * short-lived threads ({@code churn-N}, which do nothing) one after another, joining them 64 at a
 * time, so nearly all of its time goes to creating and starting threads. It measures that itself,
 * around {@code new Thread} and {@code start()}, and prints, once a second, the nanoseconds spent
 * there and the nanoseconds since it began: {@code churn <in-start> <wall>}. Runs until killed.
 */
public final class PlantedThreadChurn {
  private PlantedThreadChurn() {}

  public static void main(String[] args) throws InterruptedException {
    Thread spawner = new Thread(PlantedThreadChurn::spawn, "churn-spawner");
    spawner.start();
    System.out.println("planted thread churn running");
    System.out.flush();
    spawner.join();
  }

  private static void spawn() {
    List<Thread> batch = new ArrayList<>();
    long inStart = 0;
    long begin = System.nanoTime();
    long printed = begin;
    for (long n = 0; ; n++) {
      long before = System.nanoTime();
      Thread t = new Thread(PlantedThreadChurn::nothing, "churn-" + n % 100);
      t.start();
      long after = System.nanoTime();
      inStart += after - before;
      batch.add(t);
      if (batch.size() == 64) {
        for (Thread b : batch) {
          try {
            b.join();
          } catch (InterruptedException e) {
            return;
          }
        }
        batch.clear();
      }
      if (after - printed >= 1_000_000_000L) {
        System.out.println("churn " + inStart + " " + (after - begin));
        System.out.flush();
        printed = after;
      }
    }
  }

  private static void nothing() {}
}
