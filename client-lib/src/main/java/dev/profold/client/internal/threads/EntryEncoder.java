package dev.profold.client.internal.threads;

import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.proto.v1.AttributeDef;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.ValueType;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.WireStates;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns a thread aggregator's entries into the wire entries of a delta, defining in the {@link
 * DeltaEncoder} whatever ids they need.
 *
 * <p>An entry's key is its context's key ({@link ContextView#addKey}) followed by each label as a
 * STRING dimension. Its measurement is the entry's metric, or, for a {@code perThread} entry, the
 * companion measurement {@code <metric name>.per_thread} (same type and unit), whose state holds
 * one value per thread: that thread's total. Entries with the same key become one wire entry with
 * one measurement each, in input order; states of the same measurement under the same key are
 * merged (into a fresh aggregate).
 *
 * <p>Thread-safe: it holds no state of its own, and the delta encoder synchronizes.
 */
public final class EntryEncoder {
  /** Suffix of the companion measurement holding the distribution across threads (SET). */
  public static final String PER_THREAD_SUFFIX = ".per_thread";

  private final DeltaEncoder encoder;
  private final ContextView contexts;

  /** An encoder defining ids in {@code encoder} and keys through {@code contexts}. */
  public EntryEncoder(DeltaEncoder encoder, ContextView contexts) {
    this.encoder = encoder;
    this.contexts = contexts;
  }

  /**
   * The id of the companion measurement of {@code metric} for per-thread distributions: its name
   * and {@value #PER_THREAD_SUFFIX}, the name cut so that the whole is at most 128 characters (the
   * collector refuses longer names, and with them the delta): two measurement names alike in their
   * first 117 characters then share a companion.
   */
  public int perThreadMeasurement(int metric) {
    AttributeDef def = encoder.attribute(metric);
    String name = def.getName();
    int room = MAX_NAME - PER_THREAD_SUFFIX.length();
    if (name.length() > room) {
      name = name.substring(0, room);
    }
    return encoder.measurement(name + PER_THREAD_SUFFIX, def.getType(), def.getUnit());
  }

  /** The longest attribute name the collector takes. */
  private static final int MAX_NAME = 128;

  /** The wire entries of {@code entries}, one per distinct key, in order of first appearance. */
  public List<Entry> encode(List<AggregatedEntry> entries) {
    Map<String, Integer> dimensions = new HashMap<>();
    Map<Integer, Integer> companions = new HashMap<>();
    Map<List<AttributeValue>, Map<Integer, List<Aggregate>>> byKey = new LinkedHashMap<>();
    List<AttributeValue> key = null;
    int lastContext = 0;
    Map<String, String> lastLabels = null;
    for (AggregatedEntry e : entries) {
      if (key == null || e.context() != lastContext || !e.labels().equals(lastLabels)) {
        key = key(e, dimensions);
        lastContext = e.context();
        lastLabels = e.labels();
      }
      int measurement =
          e.perThread()
              ? companions.computeIfAbsent(e.metric(), this::perThreadMeasurement)
              : e.metric();
      byKey
          .computeIfAbsent(key, k -> new LinkedHashMap<>())
          .computeIfAbsent(measurement, m -> new ArrayList<>(1))
          .add(e.state());
    }
    List<Entry> out = new ArrayList<>(byKey.size());
    byKey.forEach(
        (k, measurements) -> {
          Entry.Builder b = Entry.newBuilder().addAllKey(k);
          measurements.forEach(
              (id, states) ->
                  b.addMeasurements(
                      Measurement.newBuilder()
                          .setAttributeId(id)
                          .setState(WireStates.toProto(merged(states)))));
          out.add(b.build());
        });
    return out;
  }

  private List<AttributeValue> key(AggregatedEntry e, Map<String, Integer> dimensions) {
    Entry.Builder b = Entry.newBuilder();
    contexts.addKey(e.context(), b);
    e.labels()
        .forEach(
            (name, value) ->
                b.addKey(
                    AttributeValue.newBuilder()
                        .setAttributeId(
                            dimensions.computeIfAbsent(
                                name, n -> encoder.dimension(n, ValueType.VALUE_TYPE_STRING)))
                        .setStringId(encoder.string(value))));
    return List.copyOf(b.getKeyList());
  }

  private static Aggregate merged(List<Aggregate> states) {
    if (states.size() == 1) {
      return states.get(0);
    }
    Aggregate m = new Aggregate();
    for (Aggregate s : states) {
      m.merge(s);
    }
    return m;
  }
}
