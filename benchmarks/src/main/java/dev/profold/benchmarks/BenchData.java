package dev.profold.benchmarks;

import dev.profold.proto.v1.AttributeDef;
import dev.profold.proto.v1.AttributeKind;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Dictionary;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.PathNode;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ValueType;
import dev.profold.reduce.Aggregate;
import dev.profold.reduce.WireStates;
import java.time.Instant;
import java.time.InstantSource;
import java.util.SplittableRandom;

/**
 * Deterministic inputs shared by the benchmarks: per-entry value sets and valid deltas built from
 * them through the protobuf builders.
 */
final class BenchData {
  /** Values summarised by one entry's state. */
  static final int VALUES_PER_ENTRY = 8;

  /** Fold window length: 10 s. */
  static final long INTERVAL_NANOS = 10_000_000_000L;

  /** Start of the current window of {@link #CLOCK}, in epoch seconds (a multiple of 10). */
  static final long WINDOW_START_SECONDS = 1_700_000_000L;

  /** The collector's clock: 5 s into the window that starts at {@link #WINDOW_START_SECONDS}. */
  static final InstantSource CLOCK =
      InstantSource.fixed(Instant.ofEpochSecond(WINDOW_START_SECONDS + 5));

  static final int REGION_ATTRIBUTE = 1;
  static final int TIME_ATTRIBUTE = 2;

  private BenchData() {}

  /**
   * The values (seconds) of entry {@code entry}: {@value #VALUES_PER_ENTRY} latencies spread over
   * about three octaves above a base of 1 to 5 ms, rounded to whole microseconds so that integer
   * histograms (HdrHistogram in microseconds) see exactly the same values.
   */
  static double[] values(int entry) {
    SplittableRandom random = new SplittableRandom(0x5EEDL * 31 + entry);
    double base = 0.001 * (1 + entry % 5);
    double[] v = new double[VALUES_PER_ENTRY];
    for (int i = 0; i < v.length; i++) {
      double seconds = base * Math.pow(2, 3 * random.nextDouble());
      v[i] = Math.round(seconds * 1e6) / 1e6;
    }
    return v;
  }

  /**
   * A dictionary defining the attributes the benchmarks' deltas use: {@code region} (a PATH
   * dimension, id {@value #REGION_ATTRIBUTE}) and {@code time} (a measurement in seconds, id
   * {@value #TIME_ATTRIBUTE}).
   */
  static Dictionary.Builder regionAndTime() {
    return Dictionary.newBuilder()
        .addAttributes(
            AttributeDef.newBuilder()
                .setId(REGION_ATTRIBUTE)
                .setName("region")
                .setType(ValueType.VALUE_TYPE_PATH)
                .setKind(AttributeKind.ATTRIBUTE_KIND_DIMENSION))
        .addAttributes(
            AttributeDef.newBuilder()
                .setId(TIME_ATTRIBUTE)
                .setName("time")
                .setType(ValueType.VALUE_TYPE_DOUBLE)
                .setKind(AttributeKind.ATTRIBUTE_KIND_MEASUREMENT)
                .setUnit("seconds"));
  }

  /**
   * A call frame's name of about 60 characters, like the agent's binary class and method names:
   * frame {@code level} of a call path, on its branch {@code branch}.
   */
  static String callFrame(int level, int branch) {
    return String.format(
        "com.example.shop.service.module%02d.OrderProcessingStep%04d.handleRequest", level, branch);
  }

  /** An aggregate that recorded the values of entry {@code entry}. */
  static Aggregate aggregate(int entry) {
    Aggregate a = new Aggregate();
    for (double v : values(entry)) {
      a.record(v);
    }
    return a;
  }

  /**
   * A valid delta of one stream: {@code entries} entries, entry {@code i} keyed by the flat region
   * path node {@code r<i>} under the root and carrying one "time" measurement (seconds) whose state
   * is {@link #aggregate(int) aggregate(i)}.
   *
   * @param first whether this is the stream's first delta: it then carries the source identity and
   *     the dictionary (strings, attributes, path nodes); later deltas reference them
   */
  static Delta delta(int entries, long sequence, boolean first) {
    long start = WINDOW_START_SECONDS * 1_000_000_000L;
    Delta.Builder d =
        Delta.newBuilder()
            .setSequence(sequence)
            .setIntervalStartUnixNanos(start)
            .setIntervalEndUnixNanos(start + 5_000_000_000L);
    if (first) {
      d.setSource(
          SourceIdentity.newBuilder()
              .setService("bench")
              .setInstance("bench-1")
              .setHost("bench-host")
              .setPid(4242)
              .setRuntimeVersion("17")
              .setSdkVersion("0.1.0")
              .setIncarnationId(0x1234_5678_9ABC_DEF1L)
              .setProcessStartUnixNanos(start - 3_600_000_000_000L));
      Dictionary.Builder dict = regionAndTime();
      for (int i = 0; i < entries; i++) {
        int id = i + 1;
        dict.putStrings(id, "r" + i);
        dict.addPathNodes(
            PathNode.newBuilder()
                .setId(id)
                .setAttributeId(REGION_ATTRIBUTE)
                .setNameId(id)
                .setKind(RegionKind.REGION_KIND_COMPUTE));
      }
      d.setDictionary(dict);
    }
    for (int i = 0; i < entries; i++) {
      d.addEntries(
          Entry.newBuilder()
              .addKey(
                  AttributeValue.newBuilder().setAttributeId(REGION_ATTRIBUTE).setPathNodeId(i + 1))
              .addMeasurements(
                  Measurement.newBuilder()
                      .setAttributeId(TIME_ATTRIBUTE)
                      .setState(WireStates.toProto(aggregate(i)))));
    }
    return d.build();
  }
}
