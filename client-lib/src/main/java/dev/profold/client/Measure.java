package dev.profold.client;

import dev.profold.client.internal.runtime.ProfoldRuntime;

/**
 * A named measurement, resolved once: {@code static final Measure PAYLOAD =
 * Profold.measure("payload", "bytes");} then {@code PAYLOAD.record(n)} adds a value in the calling
 * thread's current context (region path and scoped attributes). Works before Profold starts (it
 * does nothing then) and picks up a later start. Thread-safe.
 */
public final class Measure {
  private final String name;
  private final String unit;
  private volatile Resolved resolved;

  private record Resolved(ProfoldRuntime runtime, int id) {}

  Measure(String name, String unit) {
    this.name = name;
    this.unit = unit;
  }

  /** Adds {@code value} (in this measure's unit) to the current context. */
  public void record(double value) {
    ProfoldRuntime r = Profold.runtime();
    if (r == null) {
      return;
    }
    Resolved x = resolved;
    if (x == null || x.runtime() != r) {
      x = new Resolved(r, r.recorder().metric(name, unit));
      resolved = x;
    }
    r.recorder().record(x.id(), value);
  }

  public String name() {
    return name;
  }

  /** The unit, empty for none (or when null was given, which recording counts as misuse). */
  public String unit() {
    return unit == null ? "" : unit;
  }
}
