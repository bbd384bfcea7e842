package dev.profold.collector.e2e;

import jdk.jfr.Configuration;
import jdk.jfr.Recording;

/**
 * A planted workload for {@link AgentSampledCpuIT}: two threads ({@code busy-N}) computing in Java
 * code without pause beside a second recording of the JVM at JFR's {@code profile} settings, whose
 * 10 ms samples the agent's stream receives too (it asks for 20 ms). Prints its ready line once
 * both run; runs until killed.
 */
public final class PlantedBusyThreads {
  static final int THREADS = 2;
  private static volatile long sink;

  private PlantedBusyThreads() {}

  public static void main(String[] args) throws Exception {
    Recording other = new Recording(Configuration.getConfiguration("profile"));
    other.setToDisk(false);
    other.start();
    for (int i = 0; i < THREADS; i++) {
      Thread t = new Thread(PlantedBusyThreads::spin, "busy-" + i);
      t.setDaemon(true);
      t.start();
    }
    System.out.println("planted busy threads running");
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }

  private static void spin() {
    long x = 0;
    while (true) {
      x = step(x);
      if (x == 42) {
        sink = x;
      }
    }
  }

  private static long step(long x) {
    for (int i = 0; i < 10_000; i++) {
      x += i * 31L ^ x;
    }
    return x;
  }
}
