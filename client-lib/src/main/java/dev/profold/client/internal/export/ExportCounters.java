package dev.profold.client.internal.export;

import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * An {@link Exporter}'s counters and gauges, and what the deltas it dropped carried, to be reported
 * again. Thread-safe: written on the exporter's thread (submitted and the losses also by the
 * threads that submit), read by any thread; {@link #takeReport} by one thread at a time.
 *
 * <p>The plain counters are fields, each counting what {@link ExporterStats} says of the field of
 * the same name.
 */
final class ExportCounters {
  final AtomicLong submitted = new AtomicLong();
  final AtomicLong sent = new AtomicLong();
  final AtomicLong acked = new AtomicLong();
  final AtomicLong duplicates = new AtomicLong();
  final AtomicLong merged = new AtomicLong();
  final AtomicLong split = new AtomicLong();
  final AtomicLong reconnects = new AtomicLong();
  final AtomicLong rotations = new AtomicLong();
  final AtomicLong internalErrors = new AtomicLong();

  private final Map<String, AtomicLong> rejected = new ConcurrentHashMap<>();
  private final AtomicLong dropped = new AtomicLong();
  private final AtomicLong eventsLost = new AtomicLong();
  private final AtomicLong bufferedDeltas = new AtomicLong();
  private final AtomicLong bufferedBytes = new AtomicLong();
  private final AtomicReference<String> lastError = new AtomicReference<>();

  // What dropped deltas carried, not reported again yet.
  private final Map<String, Long> lostMisuse = new ConcurrentHashMap<>();
  private final AtomicLong lostReconnects = new AtomicLong();
  private final AtomicLong lostMerges = new AtomicLong();

  // Up to the last report; the reporting thread's.
  private long reportedReconnects;
  private long reportedMerges;

  /** Counts a REJECTED ack with status code {@code code} (its name). */
  void rejected(String code) {
    rejected.computeIfAbsent(code, k -> new AtomicLong()).incrementAndGet();
  }

  /** Counts a loss: its deltas dropped, its events lost, and what it carried to report again. */
  void lost(Loss loss) {
    dropped.addAndGet(loss.deltas());
    eventsLost.addAndGet(loss.events());
    loss.misuse().forEach((kind, n) -> lostMisuse.merge(kind, n, Long::sum));
    lostReconnects.addAndGet(loss.reconnects());
    lostMerges.addAndGet(loss.merges());
  }

  /** Sets the buffer's gauges. */
  void buffered(int deltas, long bytes) {
    bufferedDeltas.set(deltas);
    bufferedBytes.set(bytes);
  }

  /** Sets the last error, one line for the stats and the log. */
  void lastError(String text) {
    lastError.set(text);
  }

  /** The last error set, or null. */
  String lastError() {
    return lastError.get();
  }

  /** The current counters. */
  ExporterStats stats() {
    Map<String, Long> byCode = new TreeMap<>();
    rejected.forEach((code, n) -> byCode.put(code, n.get()));
    return new ExporterStats(
        submitted.get(),
        sent.get(),
        acked.get(),
        duplicates.get(),
        byCode,
        merged.get(),
        split.get(),
        dropped.get(),
        eventsLost.get(),
        reconnects.get(),
        rotations.get(),
        bufferedDeltas.get(),
        bufferedBytes.get(),
        internalErrors.get(),
        Optional.ofNullable(lastError.get()));
  }

  /** See {@link Exporter#takeReport}; {@code bufferLimitBytes} is the buffer's bound. */
  ExportReport takeReport(long bufferLimitBytes) {
    long r = reconnects.get();
    long m = merged.get();
    ExportReport out =
        new ExportReport(
            r - reportedReconnects + lostReconnects.getAndSet(0),
            m - reportedMerges + lostMerges.getAndSet(0),
            bufferedBytes.get(),
            bufferLimitBytes);
    reportedReconnects = r;
    reportedMerges = m;
    return out;
  }

  /** See {@link Exporter#takeLostMisuse}. */
  Map<String, Long> takeLostMisuse() {
    Map<String, Long> out = new TreeMap<>();
    for (String kind : Set.copyOf(lostMisuse.keySet())) {
      Long n = lostMisuse.remove(kind);
      if (n != null) {
        out.put(kind, n);
      }
    }
    return out;
  }
}
