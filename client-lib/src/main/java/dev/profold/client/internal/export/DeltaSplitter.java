package dev.profold.client.internal.export;

import com.google.protobuf.CodedOutputStream;
import dev.profold.proto.v1.ClientOverhead;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import java.util.ArrayList;
import java.util.List;

/**
 * Splits a delta too large for one message into parts of the same interval (protocol §10: the
 * collector refuses a message over its size limit, and resending it cannot help).
 *
 * <p>The parts together carry exactly what the delta did: its entries, in order, each in one part;
 * the first part also carries the interval's counters (the client's CPU time, events dropped,
 * misuse counts) and its thread activity, which the collector adds up per delta. Every part carries
 * the interval, the thread aggregation and the bytes held (a gauge the collector takes from the
 * latest delta). The collector puts parts of one interval in the same window.
 *
 * <p>Stateless and thread-safe.
 */
final class DeltaSplitter {
  /**
   * Room left in each part for the fields the exporter sets after splitting: {@code sequence} and
   * {@code first_sequence}, each a tag and a varint of at most 10 bytes.
   */
  static final int NUMBERING_BYTES = 22;

  private DeltaSplitter() {}

  /**
   * {@code delta} as parts of at most {@code maxBytes} serialized bytes each once numbered, or
   * {@code delta} alone when it fits. A part holds at least one entry, so a single entry larger
   * than the bound makes a part larger than the bound (the exporter then refuses to send it).
   *
   * @param delta a delta without sequence numbers
   * @param maxBytes the bound of a numbered part
   */
  static List<Delta> split(Delta delta, long maxBytes) {
    if ((long) delta.getSerializedSize() + NUMBERING_BYTES <= maxBytes
        || delta.getEntriesCount() < 2) {
      return List.of(delta);
    }
    Delta first = delta.toBuilder().clearEntries().build();
    Delta.Builder rest =
        Delta.newBuilder()
            .setIntervalStartUnixNanos(delta.getIntervalStartUnixNanos())
            .setIntervalEndUnixNanos(delta.getIntervalEndUnixNanos())
            .setThreadAggregation(delta.getThreadAggregation());
    if (delta.getOverhead().getBytesHeld() != 0) {
      rest.setOverhead(
          ClientOverhead.newBuilder().setBytesHeld(delta.getOverhead().getBytesHeld()));
    }
    Delta continuation = rest.build();

    List<Delta> parts = new ArrayList<>();
    Delta.Builder part = first.toBuilder();
    long size = (long) first.getSerializedSize() + NUMBERING_BYTES;
    for (Entry e : delta.getEntriesList()) {
      int bytes = CodedOutputStream.computeMessageSize(Delta.ENTRIES_FIELD_NUMBER, e);
      if (part.getEntriesCount() > 0 && size + bytes > maxBytes) {
        parts.add(part.build());
        part = continuation.toBuilder();
        size = (long) continuation.getSerializedSize() + NUMBERING_BYTES;
      }
      part.addEntries(e);
      size += bytes;
    }
    parts.add(part.build());
    return parts;
  }
}
