package dev.profold.client.internal.export;

import java.lang.System.Logger.Level;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A log that says each kind of thing once, for the life of its owner, so that a fault that repeats
 * every interval does not flood the application's log. Thread-safe.
 */
final class OnceLog {
  private final System.Logger log;
  private final Set<String> logged = ConcurrentHashMap.newKeySet();

  OnceLog(System.Logger log) {
    this.log = log;
  }

  /** Logs {@code message}, marked as logged once, unless a message of {@code kind} was. */
  void log(String kind, Level level, String message) {
    if (logged.add(kind)) {
      log.log(level, message + " (logged once)");
    }
  }

  /** {@link #log}, with {@code thrown}'s stack trace. */
  void log(String kind, Level level, String message, Throwable thrown) {
    if (logged.add(kind)) {
      log.log(level, message + " (logged once)", thrown);
    }
  }
}
