package dev.profold.collector.testing;

import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.ingest.DecodedDelta;
import dev.profold.collector.ingest.InvalidDeltaException;
import dev.profold.collector.ingest.StreamDecoder;
import dev.profold.proto.v1.AttributeDef;
import dev.profold.proto.v1.AttributeKind;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.ClientOverhead;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Dictionary;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.MetricState;
import dev.profold.proto.v1.PathNode;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ThreadGroupActivity;
import dev.profold.proto.v1.ValueType;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.WireStates;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds valid {@link Delta} messages for tests.
 *
 * <pre>{@code
 * Delta d =
 *     Deltas.source("checkout", "i-1")
 *         .incarnation(7)
 *         .seq(1)
 *         .interval(startNanos, endNanos)
 *         .region(1, "main", COMPUTE)
 *         .region(2, 1, "db.query", IO)
 *         .entry(2, 0.25, 0.5) // region main/db.query, time values 0.25 s and 0.5 s
 *         .build();
 * }</pre>
 *
 * <p><b>Fixed client ids.</b> Unless {@link Builder#withoutBaseAttributes()} is called, every
 * delta's dictionary defines attribute {@link #REGION} ({@code "region"}, PATH dimension) and
 * {@link #TIME} ({@code "time"}, DOUBLE measurement, unit {@code "seconds"}). Re-sending these
 * identical definitions on every delta of a stream is allowed by the protocol.
 *
 * <p><b>Region names.</b> {@link Builder#region(int, int, String, RegionKind)} defines path node
 * {@code id} <em>and</em> string {@code id} holding its name (string id = node id), so the same
 * node id always maps to the same string id across the deltas of a stream. Use string ids of {@link
 * #FREE_STRING_IDS} and above for strings of your own.
 *
 * <p><b>States.</b> {@link #state(double...)} records raw values into an {@link Aggregate} and
 * converts it with {@link WireStates#toProto(Aggregate)}, so count, sum, min, max, sum of squares
 * and histogram are always consistent. Use dyadic values (0.25, 0.5, 1.5, ...) when a test needs
 * exact sums.
 *
 * <p>The builder is mutable and {@link Builder#build()} does not consume it: call {@code
 * seq(2).build()} again to get the next delta with the same content, or {@link
 * Builder#clearEntries()} first. {@link Builder#copy()} forks it.
 */
public final class Deltas {
  /** Client id of the {@code "region"} PATH dimension attribute. */
  public static final int REGION = 1;

  /** Client id of the {@code "time"} DOUBLE measurement attribute (unit {@code "seconds"}). */
  public static final int TIME = 2;

  /** First string id the builder never uses on its own. */
  public static final int FREE_STRING_IDS = 1000;

  /** Default incarnation id. */
  public static final long DEFAULT_INCARNATION = 1;

  /** Default process start: 2023-11-14T22:13:20Z in unix nanoseconds. */
  public static final long DEFAULT_PROCESS_START = 1_700_000_000_000_000_000L;

  /** Default interval start: 10 s after {@link #DEFAULT_PROCESS_START}; intervals last 10 s. */
  public static final long DEFAULT_START = DEFAULT_PROCESS_START + 10_000_000_000L;

  private Deltas() {}

  /** A builder for a delta of {@code service}/{@code instance} (source identity included). */
  public static Builder source(String service, String instance) {
    return new Builder(
        SourceIdentity.newBuilder()
            .setService(service)
            .setInstance(instance)
            .setIncarnationId(DEFAULT_INCARNATION)
            .setProcessStartUnixNanos(DEFAULT_PROCESS_START));
  }

  /**
   * A builder for a later delta on a Push stream: no source identity and no base attribute
   * definitions (they were sent by an earlier delta of the stream).
   */
  public static Builder next() {
    return new Builder(null).withoutBaseAttributes();
  }

  /** An aggregate of {@code values}. */
  public static Aggregate aggregate(double... values) {
    Aggregate a = new Aggregate();
    for (double v : values) {
      a.record(v);
    }
    return a;
  }

  /** The wire state of {@code values} (with a consistent histogram). */
  public static MetricState state(double... values) {
    return WireStates.toProto(aggregate(values));
  }

  /** A measurement of attribute {@link #TIME} holding {@code values}. */
  public static Measurement time(double... values) {
    return measurement(TIME, values);
  }

  /** A measurement of attribute {@code attributeId} holding {@code values}. */
  public static Measurement measurement(int attributeId, double... values) {
    return Measurement.newBuilder().setAttributeId(attributeId).setState(state(values)).build();
  }

  /** Key value: path node {@code nodeId} of attribute {@link #REGION}. */
  public static AttributeValue regionKey(int nodeId) {
    return AttributeValue.newBuilder().setAttributeId(REGION).setPathNodeId(nodeId).build();
  }

  /** An attribute definition. */
  public static AttributeDef attributeDef(
      int id, String name, ValueType type, AttributeKind kind, String unit) {
    return AttributeDef.newBuilder()
        .setId(id)
        .setName(name)
        .setType(type)
        .setKind(kind)
        .setUnit(unit)
        .build();
  }

  /** A path node definition. */
  public static PathNode pathNode(
      int id, int parentId, int attributeId, int nameId, RegionKind kind) {
    return PathNode.newBuilder()
        .setId(id)
        .setParentId(parentId)
        .setAttributeId(attributeId)
        .setNameId(nameId)
        .setKind(kind)
        .build();
  }

  /** Decodes {@code delta} with a fresh {@link StreamDecoder}, failing the test if invalid. */
  public static DecodedDelta decode(Delta delta, GlobalDictionary dictionary) {
    return decode(delta, new StreamDecoder(dictionary));
  }

  /** Decodes {@code delta} with {@code decoder}, failing the test if invalid. */
  public static DecodedDelta decode(Delta delta, StreamDecoder decoder) {
    try {
      return decoder.decode(delta, delta.getSerializedSize());
    } catch (InvalidDeltaException e) {
      throw new AssertionError("test delta is invalid: " + e.getMessage(), e);
    }
  }

  /** Mutable delta builder; see {@link Deltas}. */
  public static final class Builder {
    private final SourceIdentity.Builder source; // null: omitted
    private boolean sendSource;
    private boolean baseAttributes = true;
    private boolean sendDictionary = true;
    private long sequence = 1;
    private long firstSequence;
    private long start = DEFAULT_START;
    private long end = DEFAULT_START + 10_000_000_000L;
    private final Dictionary.Builder dictionary = Dictionary.newBuilder();
    private final List<Entry> entries = new ArrayList<>();
    private ClientOverhead overhead;
    private final List<ThreadGroupActivity> activity = new ArrayList<>();
    private long ioUnobserved = -1; // -1: not set

    private Builder(SourceIdentity.Builder source) {
      this.source = source;
      this.sendSource = source != null;
    }

    /** An independent copy of this builder. */
    public Builder copy() {
      Builder b = new Builder(source == null ? null : source.clone());
      b.sendSource = sendSource;
      b.baseAttributes = baseAttributes;
      b.sendDictionary = sendDictionary;
      b.sequence = sequence;
      b.firstSequence = firstSequence;
      b.start = start;
      b.end = end;
      b.dictionary.mergeFrom(dictionary.build());
      b.entries.addAll(entries);
      b.overhead = overhead;
      b.activity.addAll(activity);
      b.ioUnobserved = ioUnobserved;
      return b;
    }

    private SourceIdentity.Builder src() {
      if (source == null) {
        throw new IllegalStateException("this builder has no source; use Deltas.source(...)");
      }
      return source;
    }

    public Builder incarnation(long incarnationId) {
      src().setIncarnationId(incarnationId);
      return this;
    }

    public Builder processStart(long unixNanos) {
      src().setProcessStartUnixNanos(unixNanos);
      return this;
    }

    public Builder host(String host) {
      src().setHost(host);
      return this;
    }

    public Builder label(String key, String value) {
      src().putLabels(key, value);
      return this;
    }

    /** Direct access to the source identity for anything else (or for breaking it). */
    public SourceIdentity.Builder sourceBuilder() {
      return src();
    }

    /** Leaves {@code source} out of the delta (a later delta of a Push stream). */
    public Builder withoutSource() {
      sendSource = false;
      return this;
    }

    /** Does not add the {@link #REGION} and {@link #TIME} definitions to the dictionary. */
    public Builder withoutBaseAttributes() {
      baseAttributes = false;
      return this;
    }

    /** Leaves the dictionary out entirely (base attributes and everything added). */
    public Builder withoutDictionary() {
      sendDictionary = false;
      return this;
    }

    public Builder seq(long sequence) {
      this.sequence = sequence;
      return this;
    }

    /** Makes this a merged delta covering {@code [firstSequence, seq]}. */
    public Builder firstSeq(long firstSequence) {
      this.firstSequence = firstSequence;
      return this;
    }

    /** Interval {@code [startNanos, endNanos)} in unix epoch nanoseconds. */
    public Builder interval(long startNanos, long endNanos) {
      this.start = startNanos;
      this.end = endNanos;
      return this;
    }

    public Builder overhead(long cpuNanos, long eventsDropped, long bytesHeld) {
      return overhead(cpuNanos, eventsDropped, bytesHeld, java.util.Map.of());
    }

    /** As {@link #overhead(long, long, long)}, with the client's misuse counts by kind. */
    public Builder overhead(
        long cpuNanos, long eventsDropped, long bytesHeld, java.util.Map<String, Long> misuse) {
      this.overhead =
          ClientOverhead.newBuilder()
              .setCpuNanos(cpuNanos)
              .setEventsDropped(eventsDropped)
              .setBytesHeld(bytesHeld)
              .putAllMisuse(misuse)
              .build();
      return this;
    }

    /**
     * Sets the export fields of the overhead (kept with {@link #overhead}'s if called after it):
     * reconnects and merged deltas since the client's previous delta, buffered bytes and the
     * buffer's bound.
     */
    public Builder export(long reconnects, long merged, long bufferedBytes, long limitBytes) {
      ClientOverhead base = overhead == null ? ClientOverhead.getDefaultInstance() : overhead;
      this.overhead =
          base.toBuilder()
              .setExportReconnects(reconnects)
              .setExportDeltasMerged(merged)
              .setExportBufferedBytes(bufferedBytes)
              .setExportBufferLimitBytes(limitBytes)
              .build();
      return this;
    }

    /** Sets the part of the interval during which the client did not observe I/O waits. */
    public Builder ioUnobserved(long nanos) {
      this.ioUnobserved = nanos;
      return this;
    }

    /** Adds a thread group's activity as given. */
    public Builder threads(ThreadGroupActivity a) {
      activity.add(a);
      return this;
    }

    /**
     * Adds thread group {@code group} with {@code threads} threads that each lived the whole
     * interval: the given class times (compute, sync, wait, io, runtime, thread_mgmt, and
     * optionally cpu_wait, which is part of idle) and idle the remainder; CPU spread min / sum /
     * max.
     */
    public Builder threads(
        String group, int threads, long[] classNanos, long cpuMin, long cpuSum, long cpuMax) {
      long wall = threads * (end - start);
      long used = 0;
      for (int k = 0; k < 6; k++) {
        used += classNanos[k];
      }
      return threads(
          ThreadGroupActivity.newBuilder()
              .setThreadGroup(group)
              .setThreads(threads)
              .setWallNanos(wall)
              .setComputeNanos(classNanos[0])
              .setSyncNanos(classNanos[1])
              .setWaitNanos(classNanos[2])
              .setIoNanos(classNanos[3])
              .setRuntimeNanos(classNanos[4])
              .setThreadMgmtNanos(classNanos[5])
              .setCpuWaitNanos(classNanos.length > 6 ? classNanos[6] : 0)
              .setIdleNanos(wall - used)
              .setCpuMinNanos(cpuMin)
              .setCpuSumNanos(cpuSum)
              .setCpuMaxNanos(cpuMax)
              .build());
    }

    /** Defines top-level region node {@code id} named {@code name} (string id {@code id}). */
    public Builder region(int id, String name, RegionKind kind) {
      return region(id, 0, name, kind);
    }

    /**
     * Defines region node {@code id} under {@code parentId} (0: top level) named {@code name}; the
     * name goes into string {@code id}.
     */
    public Builder region(int id, int parentId, String name, RegionKind kind) {
      dictionary.putStrings(id, name);
      dictionary.addPathNodes(Deltas.pathNode(id, parentId, REGION, id, kind));
      return this;
    }

    /** Adds a string definition. */
    public Builder string(int id, String value) {
      dictionary.putStrings(id, value);
      return this;
    }

    /** Adds an attribute definition (after the base ones). */
    public Builder attribute(int id, String name, ValueType type, AttributeKind kind, String unit) {
      return attribute(attributeDef(id, name, type, kind, unit));
    }

    /** Adds an attribute definition (after the base ones). */
    public Builder attribute(AttributeDef def) {
      dictionary.addAttributes(def);
      return this;
    }

    /** Adds a path node definition as is. */
    public Builder pathNode(PathNode node) {
      dictionary.addPathNodes(node);
      return this;
    }

    /** Direct access to the dictionary additions (after the base attributes). */
    public Dictionary.Builder dictionaryBuilder() {
      return dictionary;
    }

    /** An entry keyed by region node {@code regionId} with a {@link #TIME} state of values. */
    public Builder entry(int regionId, double... values) {
      return entry(Entry.newBuilder().addKey(regionKey(regionId)).addMeasurements(time(values)));
    }

    /** An entry with an empty key (the source as a whole) and a {@link #TIME} state of values. */
    public Builder entryWithoutKey(double... values) {
      return entry(Entry.newBuilder().addMeasurements(time(values)));
    }

    public Builder entry(Entry.Builder entry) {
      return entry(entry.build());
    }

    public Builder entry(Entry entry) {
      entries.add(entry);
      return this;
    }

    public Builder clearEntries() {
      entries.clear();
      return this;
    }

    /** The dictionary as it would be sent (base attributes first). */
    public Dictionary dictionary() {
      Dictionary.Builder d = Dictionary.newBuilder();
      if (baseAttributes) {
        d.addAttributes(
            attributeDef(
                REGION,
                "region",
                ValueType.VALUE_TYPE_PATH,
                AttributeKind.ATTRIBUTE_KIND_DIMENSION,
                ""));
        d.addAttributes(
            attributeDef(
                TIME,
                "time",
                ValueType.VALUE_TYPE_DOUBLE,
                AttributeKind.ATTRIBUTE_KIND_MEASUREMENT,
                "seconds"));
      }
      return d.mergeFrom(dictionary.build()).build();
    }

    public Delta build() {
      Delta.Builder d =
          Delta.newBuilder()
              .setSequence(sequence)
              .setFirstSequence(firstSequence)
              .setIntervalStartUnixNanos(start)
              .setIntervalEndUnixNanos(end)
              .addAllEntries(entries);
      if (sendSource) {
        d.setSource(source);
      }
      if (sendDictionary) {
        Dictionary dict = dictionary();
        if (!dict.equals(Dictionary.getDefaultInstance())) {
          d.setDictionary(dict);
        }
      }
      if (overhead != null) {
        d.setOverhead(overhead);
      }
      d.addAllThreadActivity(activity);
      if (ioUnobserved >= 0) {
        d.setIoObservation(
            dev.profold.proto.v1.IoObservation.newBuilder().setUnobservedNanos(ioUnobserved));
      }
      return d.build();
    }

    /** Builds and decodes with a fresh {@link StreamDecoder} on {@code dictionary}. */
    public DecodedDelta decode(GlobalDictionary dictionary) {
      return Deltas.decode(build(), dictionary);
    }

    /** Builds and decodes with {@code decoder}. */
    public DecodedDelta decode(StreamDecoder decoder) {
      return Deltas.decode(build(), decoder);
    }
  }
}
