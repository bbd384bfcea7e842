package dev.profold.collector.e2e;

/**
 * A planted workload for {@link AgentCpuWaitIT}: three threads per available processor ({@code
 * crowd-N}) computing in Java code without pause, so each is on a CPU about a third of the time and
 * waits on the run queue the rest. Each sleeps 30 ms first, so that a JFR event tells the agent its
 * OS thread id at once. Prints its ready line once they run; runs until killed.
 */
public final class PlantedCrowdedCpus {
  static final int PER_CPU = 3;
  private static volatile long sink;

  private PlantedCrowdedCpus() {}

  public static void main(String[] args) throws Exception {
    int threads = PER_CPU * Runtime.getRuntime().availableProcessors();
    for (int i = 0; i < threads; i++) {
      Thread t = new Thread(PlantedCrowdedCpus::spin, "crowd-" + i);
      t.setDaemon(true);
      t.start();
    }
    System.out.println("planted crowded cpus running");
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }

  private static void spin() {
    try {
      // A sleep above the agent's wait threshold: its JFR event names the thread's OS thread id
      // within the first batch, however many threads there are to sample.
      Thread.sleep(30);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    long x = 0;
    while (true) {
      for (int i = 0; i < 10_000; i++) {
        x += i * 31L ^ x;
      }
      if (x == 42) {
        sink = x;
      }
    }
  }
}
