package dev.profold.collector.e2e;

/**
 * A planted problem for {@link AgentJarIT}: four threads of pool {@code planted-worker-N} take
 * turns holding one monitor for 20 ms, so most of their time is spent blocked in {@link
 * #contended}. Runs until killed.
 */
public final class PlantedContention {
  private static final Object LOCK = new Object();

  private PlantedContention() {}

  public static void main(String[] args) throws InterruptedException {
    for (int i = 0; i < 4; i++) {
      Thread t = new Thread(PlantedContention::work, "planted-worker-" + i);
      t.setDaemon(false);
      t.start();
    }
    System.out.println("planted contention running");
    System.out.flush();
    Thread.currentThread().join();
  }

  private static void work() {
    while (true) {
      contended();
    }
  }

  static void contended() {
    synchronized (LOCK) {
      long until = System.nanoTime() + 20_000_000L;
      while (System.nanoTime() < until) {
        Thread.onSpinWait();
      }
    }
  }
}
