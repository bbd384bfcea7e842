package dev.profold.client.internal;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * What Profold logs while a piece of a test runs: its {@code System.Logger}s go to
 * java.util.logging in tests, so a handler on the logger's name sees every message.
 */
public final class LogCapture {
  private LogCapture() {}

  /**
   * The messages at WARNING or above that logger {@code name} (or one below it) logs while {@code
   * body} runs, in order.
   */
  public static List<String> warnings(String name, Runnable body) {
    List<String> out = new CopyOnWriteArrayList<>();
    Handler h =
        new Handler() {
          @Override
          public void publish(LogRecord r) {
            if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
              out.add(r.getMessage());
            }
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        };
    Logger logger = Logger.getLogger(name);
    logger.addHandler(h);
    try {
      body.run();
    } finally {
      logger.removeHandler(h);
    }
    return out;
  }
}
