package dev.profold.collector.ingest;

import com.google.rpc.Status;
import dev.profold.collector.telemetry.RejectReason;
import dev.profold.proto.v1.SourceIdentity;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The unary Export calls refused for now (retryable: the dictionary full, the collector overloaded
 * or shutting down), by source. While a source's refused delta is held, its later deltas are
 * refused too, until the refused one (or one before it) comes again: applied first, a later delta
 * would make the refused one's resend a DUPLICATE, and its data would be lost. A Push stream keeps
 * the same rule for its own deltas.
 *
 * <p>This keeps the order for a client that waits for each answer before its next call; calls of
 * one source made at the same time are not ordered by it (such a client should use Push). A hold is
 * forgotten after {@link #TTL_NANOS}, so that a client that gave the refused delta up is not
 * refused for good (the collector then counts the gap as missing deltas), and at most {@link #MAX}
 * sources are held at once (beyond, a refusal is not remembered). Thread-safe.
 */
final class ExportHolds {
  /**
   * How long a refused delta holds its source's later ones back: twice the longest retry delay the
   * collector asks for (a minute, when the dictionary is full), so a client that resends as asked
   * is held until its resend, and one that gave the delta up loses at most this much more.
   */
  static final long TTL_NANOS = TimeUnit.MINUTES.toNanos(2);

  /** Most sources held at once. */
  static final int MAX = 10_000;

  /** A source as the fold tells sources apart. */
  private record Key(String service, String instance, long incarnation) {
    static Key of(SourceIdentity s) {
      return new Key(s.getService(), s.getInstance(), s.getIncarnationId());
    }
  }

  /**
   * A refused delta covering sequences from {@code from}, refused for {@code reason} with {@code
   * status}, at {@code sinceNanos}.
   */
  record Hold(long from, RejectReason reason, Status status, long sinceNanos) {}

  private final ConcurrentHashMap<Key, Hold> holds = new ConcurrentHashMap<>();
  private final LongSupplier nanoTime;

  /** Holds timed by {@code nanoTime} ({@link System#nanoTime} in the collector). */
  ExportHolds(LongSupplier nanoTime) {
    this.nanoTime = nanoTime;
  }

  /**
   * Remembers that the delta of {@code source} covering sequences from {@code from} was refused for
   * now; of two refused deltas the earlier is held.
   */
  void refused(SourceIdentity source, long from, RejectReason reason, Status status) {
    long now = nanoTime.getAsLong();
    if (holds.size() >= MAX) {
      holds.values().removeIf(h -> expired(h, now));
      if (holds.size() >= MAX) {
        return;
      }
    }
    Hold fresh = new Hold(from, reason, status, now);
    holds.merge(
        Key.of(source),
        fresh,
        (held, again) ->
            expired(held, now) || Long.compareUnsigned(again.from(), held.from()) <= 0
                ? again
                : held);
  }

  /**
   * The hold that refuses a delta of {@code source} covering sequences from {@code from}, or null
   * when it may go on: nothing held, a hold expired, or the held delta (or one before it) sent
   * again, which ends the hold.
   */
  Hold holding(SourceIdentity source, long from) {
    Key key = Key.of(source);
    Hold held = holds.get(key);
    if (held == null) {
      return null;
    }
    if (expired(held, nanoTime.getAsLong()) || Long.compareUnsigned(from, held.from()) <= 0) {
      holds.remove(key, held);
      return null;
    }
    return held;
  }

  /** Sources held now (tests). */
  int size() {
    return holds.size();
  }

  private static boolean expired(Hold h, long now) {
    return now - h.sinceNanos() >= TTL_NANOS;
  }
}
