package dev.profold.client.internal.activity;

import java.util.List;

/** Live threads a test sets, with the CPU clocks it gives them. Thread-safe (a volatile list). */
final class FakeThreads implements LiveThreads {
  private volatile List<LiveThread> live = List.of();

  @Override
  public List<LiveThread> now() {
    return live;
  }

  /** From now on, {@code threads} are the live ones. */
  FakeThreads set(LiveThread... threads) {
    return set(List.of(threads));
  }

  /** From now on, {@code threads} are the live ones. */
  FakeThreads set(List<LiveThread> threads) {
    live = List.copyOf(threads);
    return this;
  }
}
