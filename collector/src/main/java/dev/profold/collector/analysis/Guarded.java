package dev.profold.collector.analysis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the analysis of one service or thread group so that its failure costs only its own values: a
 * scrape or an alert evaluation reads every service's values at once, and one client's data must
 * not take the others' away. Values that are not finite (which {@link DerivedValue} rules out) are
 * left out the same way. Thread-safe.
 */
final class Guarded {
  private static final Logger log = LoggerFactory.getLogger(Guarded.class);
  private static final AtomicBoolean logged = new AtomicBoolean();
  private static final AtomicBoolean skippedLogged = new AtomicBoolean();

  private Guarded() {}

  /** Adds to {@code out} the finite values {@code analysis} adds, or none when it throws. */
  static void add(String what, Consumer<List<DerivedValue>> analysis, List<DerivedValue> out) {
    List<DerivedValue> own = new ArrayList<>();
    try {
      analysis.accept(own);
    } catch (RuntimeException e) {
      failed(what, e);
      return;
    }
    for (DerivedValue v : own) {
      if (Double.isFinite(v.value())) {
        out.add(v);
      }
    }
  }

  /** What {@code step} gives, or null when it throws. */
  static <T> T orNull(String what, Supplier<T> step) {
    try {
      return step.get();
    } catch (RuntimeException e) {
      failed(what, e);
      return null;
    }
  }

  /**
   * Says that the analysis of {@code what} is left out, and {@code why}: at WARN the first time in
   * this process, at DEBUG after (it would recur at every interval).
   */
  static void skipped(String what, String why) {
    if (skippedLogged.compareAndSet(false, true)) {
      log.warn(
          "the analysis of {} is left out: {} (logged once; later ones at debug level)", what, why);
    } else {
      log.debug("the analysis of {} is left out: {}", what, why);
    }
  }

  private static void failed(String what, RuntimeException e) {
    if (logged.compareAndSet(false, true)) {
      log.error(
          "the analysis of {} failed and its values are left out (logged once; later failures"
              + " at debug level): please report it as a bug",
          what,
          e);
    } else {
      log.debug("the analysis of {} failed", what, e);
    }
  }
}
