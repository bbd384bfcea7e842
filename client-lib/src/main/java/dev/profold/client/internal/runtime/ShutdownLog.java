package dev.profold.client.internal.runtime;

import java.lang.System.Logger.Level;

/**
 * Warnings at the JVM's exit. With the JDK's default logging (java.util.logging) they would be
 * lost: its own shutdown hook, running alongside Profold's, removes its handlers, and what Profold
 * has to say comes after sending the last interval. So when the JVM is shutting down and those
 * handlers are gone, the warning goes to standard error as well.
 */
final class ShutdownLog {
  private static final String JUL_PROVIDER = "sun.util.logging.internal.LoggingProviderImpl";

  private ShutdownLog() {}

  /**
   * Logs {@code message} at WARNING; also to standard error when the logger can no longer say it.
   */
  static void warn(System.Logger log, String message) {
    log.log(Level.WARNING, message);
    if (julSilencedByShutdown()) {
      System.err.println("WARNING: " + message);
    }
  }

  /**
   * True when System.Logger goes to java.util.logging, whose root logger has no handlers left, and
   * the JVM is shutting down (a configuration without handlers is otherwise taken as meant).
   */
  static boolean julSilencedByShutdown() {
    try {
      if (!JUL_PROVIDER.equals(System.LoggerFinder.getLoggerFinder().getClass().getName())
          || java.util.logging.Logger.getLogger("").getHandlers().length > 0) {
        return false;
      }
      Thread probe = new Thread(() -> {}, "profold-shutdown-probe");
      Runtime.getRuntime().addShutdownHook(probe); // refused once the JVM shuts down
      Runtime.getRuntime().removeShutdownHook(probe);
      return false;
    } catch (IllegalStateException e) {
      return true;
    } catch (LinkageError | SecurityException e) { // no java.logging, or not allowed to look
      return false;
    }
  }
}
