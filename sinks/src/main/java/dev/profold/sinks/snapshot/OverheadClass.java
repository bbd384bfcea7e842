package dev.profold.sinks.snapshot;

import java.util.Locale;

/**
 * The classes a thread's time is split into (seed: overhead classes). Their values add up to the
 * threads' wall time. {@code CPU_WAIT} (runnable, waiting for a CPU) is not one of the seed's
 * classes: without it that time would count as idle, and a CPU-starved thread group would look
 * idle.
 */
public enum OverheadClass {
  COMPUTE,
  SYNC,
  WAIT,
  IO,
  RUNTIME,
  THREAD_MGMT,
  CPU_WAIT,
  IDLE;

  /** The label value: the name in lower case ({@code thread_mgmt}). */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The class whose {@link #label} is {@code label}.
   *
   * @throws IllegalArgumentException when no class has that label
   */
  public static OverheadClass ofLabel(String label) {
    return valueOf(label.toUpperCase(Locale.ROOT));
  }
}
