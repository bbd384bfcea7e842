package dev.profold.benchmarks;

import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.ingest.DecodedDelta;
import dev.profold.collector.ingest.InvalidDeltaException;
import dev.profold.collector.ingest.StreamDecoder;
import dev.profold.proto.v1.Delta;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@link StreamDecoder#decode} of a {@value #ENTRIES}-entry delta (already parsed from protobuf),
 * per entry:
 *
 * <ul>
 *   <li>{@link #firstDelta}: a stream's first delta (source identity plus a dictionary of {@value
 *       #ENTRIES} strings and path nodes) on a fresh decoder. The collector-wide dictionary is
 *       shared across invocations, as in a running collector, so after the first invocation its
 *       interning finds every definition already present (a client reconnecting).
 *   <li>{@link #laterDelta}: a later delta of the same stream, without source or dictionary,
 *       referencing the definitions the first delta made.
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class DecodeBenchmark {
  static final int ENTRIES = 1000;

  private GlobalDictionary dictionary;
  private Delta first;
  private int firstSize;
  private Delta later;
  private int laterSize;
  private StreamDecoder stream;

  @Setup(Level.Trial)
  public void setUp() throws InvalidDeltaException {
    // firstDelta's decoders are never released (what a stream's end costs is not measured here),
    // so the ids they map are never given back: the bound on them is set out of reach (a million
    // invocations, minutes of this benchmark).
    dictionary = new GlobalDictionary(10_000_000, Integer.MAX_VALUE);
    first = BenchData.delta(ENTRIES, 1, true);
    firstSize = first.getSerializedSize();
    later = BenchData.delta(ENTRIES, 2, false);
    laterSize = later.getSerializedSize();
    stream = new StreamDecoder(dictionary);
    stream.decode(first, firstSize);
    DecodedDelta check = stream.decode(later, laterSize);
    if (check.entries != ENTRIES || check.measurements() != ENTRIES) {
      throw new IllegalStateException("decoded " + check.entries + " entries");
    }
  }

  @Benchmark
  @OperationsPerInvocation(ENTRIES)
  public DecodedDelta firstDelta() throws InvalidDeltaException {
    return new StreamDecoder(dictionary).decode(first, firstSize);
  }

  @Benchmark
  @OperationsPerInvocation(ENTRIES)
  public DecodedDelta laterDelta() throws InvalidDeltaException {
    return stream.decode(later, laterSize);
  }
}
