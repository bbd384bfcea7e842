package dev.profold.collector.ingest;

/**
 * A validated delta translated to global ids and laid out in primitive columns, ready to fold
 * without touching protobuf objects or the dictionary. Built by {@link StreamDecoder} on the
 * receiving thread, consumed once by the fold thread; immutable after construction by contract
 * (arrays are shared, not copied).
 *
 * <p>Entry {@code e} has key values {@code keyStart[e] .. keyStart[e+1]-1} (global attribute id in
 * {@code keyAttr}, value in {@code keyValue}: a global string or path id, an integer, the bits of a
 * double, or 0/1) and measurements {@code measStart[e] .. measStart[e+1]-1}. Measurement {@code
 * j}'s histogram buckets are {@code buckets[posFrom[j] .. posFrom[j]+posLen[j]-1]} for indices
 * {@code posOffset[j]...}, likewise for negatives.
 */
public final class DecodedDelta {
  public final SourceKey source;
  public final SourceInfo info;
  public final long sequence;
  public final long firstSequence;
  public final long startUnixNanos;
  public final long endUnixNanos;
  public final int entries;
  public final int[] keyStart;
  public final int[] keyAttr;
  public final long[] keyValue;
  public final int[] measStart;
  public final int[] measAttr;
  public final long[] count;
  public final double[] sum;
  public final double[] min;
  public final double[] max;
  public final double[] sumOfSquares;
  public final int[] scale;
  public final long[] zeroCount;
  public final int[] posFrom;
  public final int[] posLen;
  public final int[] negFrom;
  public final int[] negLen;
  public final int[] bucketIndex;
  public final long[] bucketCount;
  public final long clientCpuNanos;
  public final long clientEventsDropped;
  public final long clientBytesHeld;
  public final long clientContexts;
  public final long clientContextsLimit;
  public final long clientDictionaryBytes;
  public final long clientDictionaryBytesLimit;

  /** How the client's export went, as this delta reports it (counts since its previous delta). */
  public final dev.profold.sinks.snapshot.ClientExport clientExport;

  /** The client's misuse and limit counts of the interval, by kind (valid kinds only). */
  public final java.util.Map<String, Long> clientMisuse;

  public final java.util.List<GroupActivity> threadActivity;

  /** Of the interval, the time the client did not observe I/O waits; -1 when it does not say. */
  public final long ioUnobservedNanos;

  public final int serializedBytes;

  DecodedDelta(Builder b) {
    source = b.source;
    info = b.info;
    sequence = b.sequence;
    firstSequence = b.firstSequence;
    startUnixNanos = b.startUnixNanos;
    endUnixNanos = b.endUnixNanos;
    entries = b.entries;
    keyStart = b.keyStart;
    keyAttr = b.keyAttr;
    keyValue = b.keyValue;
    measStart = b.measStart;
    measAttr = b.measAttr;
    count = b.count;
    sum = b.sum;
    min = b.min;
    max = b.max;
    sumOfSquares = b.sumOfSquares;
    scale = b.scale;
    zeroCount = b.zeroCount;
    posFrom = b.posFrom;
    posLen = b.posLen;
    negFrom = b.negFrom;
    negLen = b.negLen;
    bucketIndex = b.bucketIndex;
    bucketCount = b.bucketCount;
    clientCpuNanos = b.clientCpuNanos;
    clientEventsDropped = b.clientEventsDropped;
    clientBytesHeld = b.clientBytesHeld;
    clientContexts = b.clientContexts;
    clientContextsLimit = b.clientContextsLimit;
    clientDictionaryBytes = b.clientDictionaryBytes;
    clientDictionaryBytesLimit = b.clientDictionaryBytesLimit;
    clientExport = b.clientExport;
    clientMisuse = b.clientMisuse;
    threadActivity = b.threadActivity;
    ioUnobservedNanos = b.ioUnobservedNanos;
    serializedBytes = b.serializedBytes;
  }

  private DecodedDelta(DecodedDelta d, long sequence) {
    source = d.source;
    info = d.info;
    this.sequence = sequence;
    firstSequence = 0;
    startUnixNanos = d.startUnixNanos;
    endUnixNanos = d.endUnixNanos;
    entries = d.entries;
    keyStart = d.keyStart;
    keyAttr = d.keyAttr;
    keyValue = d.keyValue;
    measStart = d.measStart;
    measAttr = d.measAttr;
    count = d.count;
    sum = d.sum;
    min = d.min;
    max = d.max;
    sumOfSquares = d.sumOfSquares;
    scale = d.scale;
    zeroCount = d.zeroCount;
    posFrom = d.posFrom;
    posLen = d.posLen;
    negFrom = d.negFrom;
    negLen = d.negLen;
    bucketIndex = d.bucketIndex;
    bucketCount = d.bucketCount;
    clientCpuNanos = d.clientCpuNanos;
    clientEventsDropped = d.clientEventsDropped;
    clientBytesHeld = d.clientBytesHeld;
    clientContexts = d.clientContexts;
    clientContextsLimit = d.clientContextsLimit;
    clientDictionaryBytes = d.clientDictionaryBytes;
    clientDictionaryBytesLimit = d.clientDictionaryBytesLimit;
    clientExport = d.clientExport;
    clientMisuse = d.clientMisuse;
    threadActivity = d.threadActivity;
    ioUnobservedNanos = d.ioUnobservedNanos;
    serializedBytes = d.serializedBytes;
  }

  /**
   * The same data under another sequence number (sharing the arrays), for replaying one decoded
   * delta many times in benchmarks and tests.
   */
  public DecodedDelta withSequence(long newSequence) {
    return new DecodedDelta(this, newSequence);
  }

  /** Number of measurement states in all entries. */
  public int measurements() {
    return measStart[entries];
  }

  /** First sequence number this delta covers. */
  public long coveredFrom() {
    return firstSequence == 0 ? sequence : firstSequence;
  }

  /** Mutable columns, sized once by the decoder. */
  static final class Builder {
    SourceKey source;
    SourceInfo info;
    long sequence;
    long firstSequence;
    long startUnixNanos;
    long endUnixNanos;
    int entries;
    int[] keyStart;
    int[] keyAttr;
    long[] keyValue;
    int[] measStart;
    int[] measAttr;
    long[] count;
    double[] sum;
    double[] min;
    double[] max;
    double[] sumOfSquares;
    int[] scale;
    long[] zeroCount;
    int[] posFrom;
    int[] posLen;
    int[] negFrom;
    int[] negLen;
    int[] bucketIndex;
    long[] bucketCount;
    long clientCpuNanos;
    long clientEventsDropped;
    long clientBytesHeld;
    long clientContexts;
    long clientContextsLimit;
    long clientDictionaryBytes;
    long clientDictionaryBytesLimit;
    dev.profold.sinks.snapshot.ClientExport clientExport =
        dev.profold.sinks.snapshot.ClientExport.NONE;
    java.util.Map<String, Long> clientMisuse = java.util.Map.of();
    java.util.List<GroupActivity> threadActivity = java.util.List.of();
    long ioUnobservedNanos = -1;
    int serializedBytes;

    void size(int entryCount, int keyValues, int measurementCount, int buckets) {
      entries = entryCount;
      keyStart = new int[entryCount + 1];
      keyAttr = new int[keyValues];
      keyValue = new long[keyValues];
      measStart = new int[entryCount + 1];
      measAttr = new int[measurementCount];
      count = new long[measurementCount];
      sum = new double[measurementCount];
      min = new double[measurementCount];
      max = new double[measurementCount];
      sumOfSquares = new double[measurementCount];
      scale = new int[measurementCount];
      zeroCount = new long[measurementCount];
      posFrom = new int[measurementCount];
      posLen = new int[measurementCount];
      negFrom = new int[measurementCount];
      negLen = new int[measurementCount];
      bucketIndex = new int[buckets];
      bucketCount = new long[buckets];
    }

    DecodedDelta build() {
      return new DecodedDelta(this);
    }
  }
}
