package dev.profold.client;

import dev.profold.client.internal.runtime.ProfoldRuntime;

/**
 * A region name and kind, resolved once: {@code static final RegionHandle QUERY =
 * Profold.regionHandle("db.query", Kind.IO);} then {@code try (Region r = QUERY.enter()) {...}}
 * opens the same region as {@code Profold.region("db.query", Kind.IO)} without looking the name up
 * on every call. Works before Profold starts (it opens the no-op region then) and picks up a later
 * start. Thread-safe: one handle serves every thread.
 */
public final class RegionHandle {
  private final String name;
  private final Kind kind;
  private volatile Resolved resolved;

  private record Resolved(ProfoldRuntime runtime, int event) {}

  RegionHandle(String name, Kind kind) {
    this.name = name;
    this.kind = kind;
  }

  /** Opens this region on the calling thread; close it there, as any {@link Region}. */
  public Region enter() {
    ProfoldRuntime r = Profold.runtime();
    if (r == null) {
      return Profold.noop();
    }
    Resolved x = resolved;
    if (x == null || x.runtime() != r) {
      x = new Resolved(r, r.recorder().regionEvent(name, kind));
      resolved = x;
    }
    return r.recorder().region(x.event());
  }

  public String name() {
    return name;
  }

  public Kind kind() {
    return kind;
  }
}
