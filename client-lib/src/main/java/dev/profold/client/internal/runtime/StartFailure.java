package dev.profold.client.internal.runtime;

import java.lang.System.Logger.Level;

/**
 * How an unexpected failure to start is told: one warning line with what went wrong, and the stack
 * trace only at DEBUG, for whoever reports it. The application never sees a stack trace for
 * Profold's sake.
 */
public final class StartFailure {
  private StartFailure() {}

  /**
   * Logs that {@code what} ("Profold", "Profold agent") could not start because of {@code e}.
   *
   * @param log the logger ({@code dev.profold.client}); its DEBUG level holds the stack trace
   */
  public static void log(System.Logger log, String what, Throwable e) {
    log.log(
        Level.WARNING,
        what
            + " could not start ("
            + e
            + "); the application runs on without it. For the stack trace, set the logger"
            + " dev.profold.client to DEBUG (java.util.logging: FINE)");
    log.log(Level.DEBUG, what + " could not start", e);
  }
}
