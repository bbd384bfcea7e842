package dev.profold.benchmarks;

import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ValueType;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One dictionary ageing round of the client's exporter ({@link DeltaEncoder#age}, with the buffer
 * scanned for references as the exporter does), at its worst: a default-sized dictionary (4 MiB)
 * filled to {@value #NODES} path nodes with 60-character names, all of them pinned (the recorder's
 * contexts hold every one), so that a round scans everything and frees nothing and the state stays
 * the same from one round to the next; {@value #BUFFERED} buffered deltas of {@value #ENTRIES}
 * entries. The exporter runs a round once per interval while the dictionary is over half its bound,
 * on its own thread.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class DictionaryAgeingBenchmark {
  static final int NODES = 40_000;
  static final int BUFFERED = 10;
  static final int ENTRIES = 1000;

  private DeltaEncoder encoder;
  private final List<Delta> buffer = new ArrayList<>();

  @Setup(Level.Trial)
  public void setUp() {
    encoder = new DeltaEncoder(SourceIdentity.newBuilder().setService("bench").build());
    int region = encoder.dimension("region", ValueType.VALUE_TYPE_PATH);
    int[] nodes = new int[NODES];
    SplittableRandom random = new SplittableRandom(42);
    for (int i = 0; i < NODES; i++) {
      int parent = i < 100 ? 0 : nodes[random.nextInt(i)];
      String name = String.format("com.example.service.Handler%08d.method%027d", i, i);
      nodes[i] = encoder.pathNode(parent, region, name, RegionKind.REGION_KIND_COMPUTE);
    }
    BitSet all = new BitSet();
    for (int n : nodes) {
      all.set(n);
    }
    encoder.addPinSource(ids -> ids.or(all));
    if (!encoder.ageingDue() || !encoder.takeLimitCounts().isEmpty()) {
      throw new IllegalStateException("the dictionary must be over half its bound, not full");
    }
    for (int d = 0; d < BUFFERED; d++) {
      Delta.Builder delta = Delta.newBuilder().setSequence(d + 1);
      for (int e = 0; e < ENTRIES; e++) {
        delta.addEntries(
            Entry.newBuilder()
                .addKey(
                    AttributeValue.newBuilder()
                        .setAttributeId(region)
                        .setPathNodeId(nodes[random.nextInt(NODES)])));
      }
      buffer.add(delta.build());
    }
  }

  @Benchmark
  public int ageingRound() {
    BitSet strings = new BitSet();
    BitSet paths = new BitSet();
    for (Delta d : buffer) {
      DeltaEncoder.references(d, strings, paths);
    }
    encoder.pin(paths);
    int freed = encoder.age(strings, paths);
    if (freed != 0) {
      throw new IllegalStateException("a round freed " + freed + "; the state must not change");
    }
    return freed;
  }
}
