package dev.profold.sinks.snapshot;

import java.util.Locale;

/**
 * The classes a thread's time is split into (seed: overhead classes), in wire order. Their values
 * add up to the threads' wall time.
 */
public enum OverheadClass {
  COMPUTE,
  SYNC,
  WAIT,
  IO,
  RUNTIME,
  THREAD_MGMT,
  IDLE;

  /** The label value: the name in lower case ({@code thread_mgmt}). */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }
}
