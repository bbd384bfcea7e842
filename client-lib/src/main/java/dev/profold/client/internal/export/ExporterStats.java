package dev.profold.client.internal.export;

import java.util.Map;
import java.util.Optional;

/**
 * A point-in-time copy of an {@link Exporter}'s counters (cumulative since it was created), for the
 * client's self-telemetry. Immutable. Counters are read one by one, so a snapshot taken while the
 * exporter works may be off by the events in progress.
 *
 * <p>Units: "deltas" are the deltas passed to {@link Exporter#submit}, except that a delta split
 * into several messages counts once per part in {@code dropped} (each part is a delta on the wire);
 * "messages" are Push messages, resends included (one merged delta is one message).
 *
 * @param submitted deltas passed to {@link Exporter#submit}
 * @param sent messages sent, resends after a reconnect included
 * @param acked messages acknowledged APPLIED or DUPLICATE
 * @param duplicates of the acked messages, those acknowledged DUPLICATE (resends the collector had
 *     already applied)
 * @param rejected REJECTED acks by status code name ({@code "INVALID_ARGUMENT"}, ...), retryable
 *     ones included; permanently rejected messages are dropped, retryable ones resent
 * @param merged deltas folded into an older never-sent delta to make room in the buffer
 * @param split deltas sent as several messages because they were larger than half the message limit
 * @param dropped deltas given up without being acknowledged: they did not fit in the buffer even
 *     after merging, were submitted after {@link Exporter#close}, or would have made a message
 *     larger than the collector accepts. Permanent rejections are not included (see {@code
 *     rejected}), nor is a delta the buffer dropped while it was in flight and whose ack then came
 *     (it is counted when its stream ends first)
 * @param eventsLost events recorded in the dropped deltas (per entry, the largest measurement
 *     count, summed), plus the events those deltas reported as dropped in their overhead
 * @param reconnects streams opened after an earlier one failed
 * @param rotations streams the exporter ended, once drained, to open a new one that re-sends only
 *     the definitions still in use, so that the collector can free the others ({@link
 *     ExporterConfig#rotateAfterBytes()}); the streams opened after them are not reconnects
 * @param bufferedDeltas messages held until acknowledged
 * @param bufferedBytes serialized bytes of the held messages (source and dictionary not counted)
 * @param internalErrors unexpected failures inside the exporter (bugs); each is logged once per
 *     kind
 * @param lastError the last stream failure or rejection, empty if none
 */
public record ExporterStats(
    long submitted,
    long sent,
    long acked,
    long duplicates,
    Map<String, Long> rejected,
    long merged,
    long split,
    long dropped,
    long eventsLost,
    long reconnects,
    long rotations,
    long bufferedDeltas,
    long bufferedBytes,
    long internalErrors,
    Optional<String> lastError) {

  /** Copies the map. */
  public ExporterStats {
    rejected = Map.copyOf(rejected);
  }

  /** REJECTED acks with the given status code name, 0 if none. */
  public long rejected(String codeName) {
    return rejected.getOrDefault(codeName, 0L);
  }
}
