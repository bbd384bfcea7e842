package dev.profold.collector.e2e;

import java.util.logging.LogManager;

/**
 * Chooses its own LogManager in {@code main}, as JBoss Modules and WildFly do, and prints the class
 * of the LogManager it got, then waits to be killed.
 */
public final class LogManagerProbe {
  private LogManagerProbe() {}

  /** The probe's own LogManager. */
  public static final class Own extends LogManager {}

  public static void main(String[] args) throws Exception {
    System.setProperty("java.util.logging.manager", Own.class.getName());
    System.out.println(LogManager.getLogManager().getClass().getSimpleName());
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }
}
