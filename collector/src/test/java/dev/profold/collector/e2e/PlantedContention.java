package dev.profold.collector.e2e;

/**
 * A planted problem for {@link AgentJarIT}: four threads of pool {@code planted-worker-N} each do 1
 * ms of work of their own, then 20 ms under one monitor, so about three quarters of their time is
 * spent blocked in {@link #contended}. Runs until killed.
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
      spin(1_000_000L);
      contended();
    }
  }

  private static void spin(long nanos) {
    long until = System.nanoTime() + nanos;
    while (System.nanoTime() < until) {
      Thread.onSpinWait();
    }
  }

  static void contended() {
    synchronized (LOCK) {
      spin(20_000_000L);
    }
  }
}
