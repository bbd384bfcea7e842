package dev.profold.client.internal.export;

import com.google.protobuf.CodedOutputStream;
import dev.profold.proto.v1.ClientOverhead;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.IoObservation;
import java.util.ArrayList;
import java.util.List;

/**
 * Splits a delta too large for one message into parts of the same interval (protocol §10: the
 * collector refuses a message over its size limit, and resending it cannot help).
 *
 * <p>The parts together carry exactly what the delta did: its entries, in order, each in one part;
 * the first part also carries the interval's counters (the client's CPU time, events dropped,
 * misuse counts), its thread activity and its io_observation, which the collector adds up per
 * delta. Every part carries the interval, the thread aggregation and the gauges (bytes held,
 * contexts and their limit), which the collector takes from the latest delta. The collector puts
 * parts of one interval in the same window.
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
   * Never-sent deltas split again and numbered anew.
   *
   * @param deltas the parts, numbered from the first delta's first sequence on, in order
   * @param addedSequences how many more sequence numbers they take than the deltas they replace
   * @param split how many of the deltas were split
   */
  record Renumbered(List<Delta> deltas, long addedSequences, int split) {}

  /**
   * Splits {@code neverSent} (consecutive buffered deltas, oldest first, none of them ever sent) to
   * {@code maxBytes} and numbers the parts from the first delta's first sequence on. A delta that
   * stands for several sequences (merged) keeps them: its parts take one each, its last part the
   * rest (as a merged delta); more numbers are taken only for parts beyond its sequences. So every
   * submitted delta stays counted once, and the sequences stay contiguous.
   */
  static Renumbered renumber(List<Delta> neverSent, long maxBytes) {
    List<Delta> out = new ArrayList<>();
    long shift = 0; // how far the numbers moved up so far
    int split = 0;
    for (Delta d : neverSent) {
      List<Delta> parts =
          split(d.toBuilder().clearSequence().clearFirstSequence().build(), maxBytes);
      long first = DeltaBuffer.firstCovered(d) + shift;
      long last = Math.max(d.getSequence() + shift, first + parts.size() - 1);
      shift = last - d.getSequence();
      if (parts.size() > 1) {
        split++;
      }
      for (int i = 0; i < parts.size(); i++) {
        Delta.Builder part = parts.get(i).toBuilder().setSequence(first + i);
        if (i == parts.size() - 1 && first + i < last) {
          part.setSequence(last).setFirstSequence(first + i);
        }
        out.add(part.build());
      }
    }
    return new Renumbered(out, shift, split);
  }

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
    ClientOverhead gauges = DeltaBuffer.gauges(delta.getOverhead());
    if (!gauges.equals(ClientOverhead.getDefaultInstance())) {
      rest.setOverhead(gauges);
    }
    if (delta.hasIoObservation()) {
      // The first part carries the time I/O went unobserved; the others say none, since a delta
      // that does not say counts as unobserved throughout when merged (DeltaBuffer): a later part
      // merged after an outage would otherwise add its whole interval.
      rest.setIoObservation(IoObservation.newBuilder().setUnobservedNanos(0));
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
