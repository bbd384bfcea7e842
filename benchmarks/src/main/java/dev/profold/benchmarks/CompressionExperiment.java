package dev.profold.benchmarks;

import com.google.protobuf.CodedOutputStream;
import dev.profold.client.Kind;
import dev.profold.client.ThreadAggregation;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.threads.Cell;
import dev.profold.client.internal.threads.ContextView;
import dev.profold.client.internal.threads.EntryEncoder;
import dev.profold.client.internal.threads.ThreadAggregators;
import dev.profold.client.internal.threads.ThreadSnapshot;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ValueType;
import dev.profold.reduce.Aggregate;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Delta size per thread-aggregation strategy, after the compression experiment of the Score-P
 * thread-aggregation paper (seed 000: 100 call paths, 7 metrics, 2 to 2048 threads per process;
 * compression ratio = unaggregated size / aggregated size).
 *
 * <p>Synthetic interval of one process: a region tree of 10 top regions with 9 children each (100
 * paths; kinds mixed, 4 of every 9 children COMPUTE). The first top region and its children (10% of
 * the paths) are visited by the initial thread only; the other 90 paths by every thread, the
 * initial one included. Every visiting thread has a cell for each of 7 metrics on each path it
 * visits, and each cell holds 1 to 4 recorded values. All threads are in one group, so CALLTREE
 * finds 2 clusters (the initial thread; the workers), as the paper's OpenMP case.
 *
 * <p>Cell states are drawn (seeded, deterministic) from a pool of 64 variants per (path, metric)
 * and shared between threads: aggregators never modify their input, and sharing keeps the input of
 * 2048 threads (1.3 million cells) small. Each mode gets a fresh {@link DeltaEncoder} (a new
 * stream); sizes are protobuf serialized sizes of (a) the stream's first delta, with source
 * identity and dictionary, and (b) a later delta carrying the same entries, without them, which is
 * what every interval costs in steady state. A third figure strips the histograms from (b) to show
 * what the mergeable histogram states cost.
 *
 * <p>Run: {@code java -cp benchmarks/target/benchmarks.jar
 * dev.profold.benchmarks.CompressionExperiment [maxThreads]}.
 */
public final class CompressionExperiment {
  static final int TOP = 10;
  static final int CHILDREN = 9;
  static final int PATHS = TOP * (1 + CHILDREN);
  static final int VARIANTS = 64;
  static final String GROUP = "app";
  static final String[] METRIC_NAMES = {
    "time", "cpu_time", "gc_time", "alloc", "io", "calls", "lock_waits"
  };
  static final ValueType[] METRIC_TYPES = {
    ValueType.VALUE_TYPE_DOUBLE,
    ValueType.VALUE_TYPE_DOUBLE,
    ValueType.VALUE_TYPE_DOUBLE,
    ValueType.VALUE_TYPE_INT,
    ValueType.VALUE_TYPE_INT,
    ValueType.VALUE_TYPE_INT,
    ValueType.VALUE_TYPE_INT
  };
  static final String[] METRIC_UNITS = {"seconds", "seconds", "seconds", "bytes", "bytes", "", ""};
  static final Kind[] CHILD_KINDS = {
    Kind.COMPUTE,
    Kind.COMPUTE,
    Kind.SYNC,
    Kind.WAIT,
    Kind.IO,
    Kind.COMPUTE,
    Kind.RUNTIME,
    Kind.COMPUTE,
    Kind.THREAD_MGMT
  };
  static final double[] PAPER_DIVISOR = {1.0, 1.35, 4.2, 4.6, 2.3};

  private CompressionExperiment() {}

  /** Ids the encoder assigned; identical for every fresh encoder (definitions in one order). */
  static final class Ids {
    final int region;
    final int[] nodes;
    final Kind[] kinds;
    final boolean[] serial;
    final int[] metrics;

    Ids(int region, int[] nodes, Kind[] kinds, boolean[] serial, int[] metrics) {
      this.region = region;
      this.nodes = nodes;
      this.kinds = kinds;
      this.serial = serial;
      this.metrics = metrics;
    }
  }

  static Ids define(DeltaEncoder enc) {
    int region = enc.dimension("region", ValueType.VALUE_TYPE_PATH);
    int[] nodes = new int[PATHS];
    Kind[] kinds = new Kind[PATHS];
    boolean[] serial = new boolean[PATHS];
    int p = 0;
    for (int t = 0; t < TOP; t++) {
      int top = enc.pathNode(0, region, "phase" + t, RegionKind.REGION_KIND_COMPUTE);
      serial[p] = t == 0;
      kinds[p] = Kind.COMPUTE;
      nodes[p++] = top;
      for (int c = 0; c < CHILDREN; c++) {
        Kind k = CHILD_KINDS[c];
        serial[p] = t == 0;
        kinds[p] = k;
        nodes[p++] = enc.pathNode(top, region, "step" + c, RegionKind.valueOf("REGION_KIND_" + k));
      }
    }
    int[] metrics = new int[METRIC_NAMES.length];
    for (int m = 0; m < metrics.length; m++) {
      metrics[m] = enc.measurement(METRIC_NAMES[m], METRIC_TYPES[m], METRIC_UNITS[m]);
    }
    return new Ids(region, nodes, kinds, serial, metrics);
  }

  /** Context id = path node id; the key is the region path. */
  record Contexts(Ids ids) implements ContextView {
    @Override
    public Kind kind(int context) {
      for (int p = 0; p < PATHS; p++) {
        if (ids.nodes[p] == context) {
          return ids.kinds[p];
        }
      }
      return null;
    }

    @Override
    public int pathNode(int context) {
      return context;
    }

    /**
     * Not known here: KEY then ranks by all COMPUTE time, nested or not. The experiment measures
     * bytes, which do not depend on which threads KEY picks.
     */
    @Override
    public int parent(int context) {
      return -1;
    }

    @Override
    public boolean selfTimed(int context) {
      return false;
    }

    @Override
    public void addKey(int context, Entry.Builder entry) {
      entry.addKey(AttributeValue.newBuilder().setAttributeId(ids.region).setPathNodeId(context));
    }
  }

  /** One value of metric {@code m} on path {@code p}. */
  static double value(int m, int p, SplittableRandom r) {
    double base = 0.0005 * (1 + p % 13); // seconds, per path
    return switch (m) {
      case 0 -> round(base * (0.5 + r.nextDouble()));
      case 1 -> round(base * (0.2 + 0.6 * r.nextDouble()));
      case 2 -> r.nextInt(4) == 0 ? round(base * 0.1 * r.nextDouble()) : 0.0;
      case 3 -> 1024 * (1 + r.nextInt(512));
      case 4 -> r.nextInt(3) == 0 ? 4096 * (1 + r.nextInt(64)) : 0;
      case 5 -> 1 + r.nextInt(100);
      default -> r.nextInt(8);
    };
  }

  /** Whole microseconds, as a timer would deliver. */
  static double round(double seconds) {
    return Math.round(seconds * 1e6) / 1e6;
  }

  /** pool[p][m][v]: a cell state of path p, metric m, with 1 to 4 values. */
  static Aggregate[][][] pool() {
    SplittableRandom r = new SplittableRandom(0xC0FFEEL);
    Aggregate[][][] pool = new Aggregate[PATHS][METRIC_NAMES.length][VARIANTS];
    for (int p = 0; p < PATHS; p++) {
      for (int m = 0; m < METRIC_NAMES.length; m++) {
        for (int v = 0; v < VARIANTS; v++) {
          Aggregate a = new Aggregate();
          int n = 1 + r.nextInt(4);
          for (int i = 0; i < n; i++) {
            a.record(value(m, p, r));
          }
          pool[p][m][v] = a;
        }
      }
    }
    return pool;
  }

  /** The initial thread (index 0) and {@code threads - 1} workers of one interval. */
  static List<ThreadSnapshot> snapshots(int threads, Ids ids, Aggregate[][][] pool) {
    List<ThreadSnapshot> out = new ArrayList<>(threads);
    for (int i = 0; i < threads; i++) {
      SplittableRandom r = new SplittableRandom(1_000_003L * i + 17);
      boolean initial = i == 0;
      List<Cell> cells = new ArrayList<>();
      for (int p = 0; p < PATHS; p++) {
        if (ids.serial[p] && !initial) {
          continue;
        }
        for (int m = 0; m < METRIC_NAMES.length; m++) {
          cells.add(new Cell(ids.nodes[p], ids.metrics[m], pool[p][m][r.nextInt(VARIANTS)]));
        }
      }
      out.add(new ThreadSnapshot(100 + i, initial ? "main" : "worker-" + i, GROUP, initial, cells));
    }
    return out;
  }

  /** Sizes in bytes of one mode's deltas. */
  record Sizes(long first, long later, long laterMomentsOnly, int entries, int clusters) {}

  static SourceIdentity identity() {
    return SourceIdentity.newBuilder()
        .setService("experiment")
        .setInstance("experiment-7d9f8-abcde:8080")
        .setHost("node-17.example.internal")
        .setPid(4242)
        .setSdkVersion("profold-java/0.1.0")
        .setRuntimeVersion(System.getProperty("java.runtime.version", ""))
        .setIncarnationId(0x1234_5678_9ABC_DEF1L)
        .setProcessStartUnixNanos(1_700_000_000_000_000_000L)
        .build();
  }

  static Delta.Builder header(long sequence, ThreadAggregation mode) {
    long start = 1_700_000_000_000_000_000L + (sequence - 1) * 10_000_000_000L;
    return Delta.newBuilder()
        .setSequence(sequence)
        .setIntervalStartUnixNanos(start)
        .setIntervalEndUnixNanos(start + 10_000_000_000L)
        .setThreadAggregation(ThreadAggregators.toProto(mode));
  }

  static Sizes measure(ThreadAggregation mode, List<ThreadSnapshot> threads, Ids expected) {
    DeltaEncoder enc = new DeltaEncoder(identity());
    Ids ids = define(enc);
    if (!java.util.Arrays.equals(ids.nodes, expected.nodes)
        || !java.util.Arrays.equals(ids.metrics, expected.metrics)) {
      throw new IllegalStateException("encoder ids differ from the snapshots' ids");
    }
    Contexts contexts = new Contexts(ids);
    List<Entry> entries =
        new EntryEncoder(enc, contexts)
            .encode(ThreadAggregators.forMode(mode).aggregate(threads, contexts, ids.metrics[0]));
    Delta first = enc.prepare(header(1, mode).addAllEntries(entries)).build();
    Delta later = enc.prepare(header(2, mode).addAllEntries(entries)).build();
    if (later.hasDictionary() || later.hasSource()) {
      throw new IllegalStateException("a later delta carries no dictionary");
    }
    long laterSize = later.getSerializedSize();
    long stripped = laterSize;
    for (Entry e : entries) {
      stripped -= CodedOutputStream.computeMessageSize(Delta.ENTRIES_FIELD_NUMBER, e);
      stripped += CodedOutputStream.computeMessageSize(Delta.ENTRIES_FIELD_NUMBER, momentsOnly(e));
    }
    int clusters =
        mode == ThreadAggregation.CALLTREE
            ? ThreadAggregators.clusters(threads).get(GROUP).size()
            : 0;
    return new Sizes(first.getSerializedSize(), laterSize, stripped, entries.size(), clusters);
  }

  static Entry momentsOnly(Entry e) {
    Entry.Builder b = e.toBuilder();
    for (int i = 0; i < b.getMeasurementsCount(); i++) {
      Measurement.Builder m = b.getMeasurementsBuilder(i);
      m.setState(m.getState().toBuilder().clearHistogram());
    }
    return b.build();
  }

  /** Prints the tables; the optional argument caps the thread count (default 2048). */
  public static void main(String[] args) {
    int maxThreads = args.length > 0 ? Integer.parseInt(args[0]) : 2048;
    Ids ids = define(new DeltaEncoder(identity()));
    Aggregate[][][] pool = pool();
    ThreadAggregation[] modes = ThreadAggregation.values();
    List<Map<ThreadAggregation, Sizes>> rows = new ArrayList<>();
    List<Integer> ts = new ArrayList<>();
    for (int t = 2; t <= maxThreads; t *= 2) {
      List<ThreadSnapshot> threads = snapshots(t, ids, pool);
      Map<ThreadAggregation, Sizes> row = new EnumMap<>(ThreadAggregation.class);
      for (ThreadAggregation mode : modes) {
        row.put(mode, measure(mode, threads, ids));
      }
      rows.add(row);
      ts.add(t);
      System.err.printf(Locale.ROOT, "T=%d done%n", t);
    }
    System.out.printf(
        Locale.ROOT,
        "%d paths (%d initial-thread only), %d metrics, 1 group; bytes of protobuf-serialized"
            + " deltas%n%n",
        PATHS,
        1 + CHILDREN,
        METRIC_NAMES.length);
    table("Later delta (no identity, no dictionary): bytes, ratio NONE/mode", ts, rows, modes, 1);
    table("First delta of a stream (identity + dictionary): bytes, ratio", ts, rows, modes, 0);
    table("Later delta, histograms stripped (moments only): bytes, ratio", ts, rows, modes, 2);
    System.out.println(
        "Divisor d = T / ratio (ratio = T / d), later delta [first delta]; paper: SUM 1.35, SET"
            + " 4.2, KEY 4.6, CALLTREE 2.3");
    System.out.println();
    StringBuilder h = new StringBuilder("| T |");
    StringBuilder s = new StringBuilder("|---:|");
    for (int i = 1; i < modes.length; i++) {
      h.append(' ').append(modes[i]).append(" (paper ").append(PAPER_DIVISOR[i]).append(") |");
      s.append("---:|");
    }
    System.out.println(h);
    System.out.println(s);
    for (int r = 0; r < rows.size(); r++) {
      Map<ThreadAggregation, Sizes> row = rows.get(r);
      int t = ts.get(r);
      StringBuilder line = new StringBuilder("| " + t + " |");
      for (int i = 1; i < modes.length; i++) {
        double later = (double) row.get(ThreadAggregation.NONE).later() / row.get(modes[i]).later();
        double first = (double) row.get(ThreadAggregation.NONE).first() / row.get(modes[i]).first();
        line.append(String.format(Locale.ROOT, " %.2f [%.2f] |", t / later, t / first));
      }
      System.out.println(line);
    }
    System.out.println();
    System.out.print("CALLTREE clusters per row:");
    for (Map<ThreadAggregation, Sizes> row : rows) {
      System.out.print(" " + row.get(ThreadAggregation.CALLTREE).clusters());
    }
    System.out.println();
    Map<ThreadAggregation, Sizes> last = rows.get(rows.size() - 1);
    System.out.print("Wire entries per delta at T=" + ts.get(ts.size() - 1) + ":");
    for (ThreadAggregation m : modes) {
      System.out.print(" " + m + " " + last.get(m).entries());
    }
    System.out.println();
  }

  private static void table(
      String title,
      List<Integer> ts,
      List<Map<ThreadAggregation, Sizes>> rows,
      ThreadAggregation[] modes,
      int which) {
    System.out.println(title);
    System.out.println();
    StringBuilder h = new StringBuilder("| T |");
    StringBuilder s = new StringBuilder("|---:|");
    for (ThreadAggregation m : modes) {
      h.append(' ').append(m).append(" |");
      s.append("---:|");
    }
    System.out.println(h);
    System.out.println(s);
    for (int r = 0; r < rows.size(); r++) {
      Map<ThreadAggregation, Sizes> row = rows.get(r);
      long none = pick(row.get(ThreadAggregation.NONE), which);
      StringBuilder line = new StringBuilder("| " + ts.get(r) + " |");
      for (ThreadAggregation m : modes) {
        long bytes = pick(row.get(m), which);
        if (m == ThreadAggregation.NONE) {
          line.append(String.format(Locale.ROOT, " %,d |", bytes));
        } else {
          line.append(String.format(Locale.ROOT, " %,d (%.1f×) |", bytes, (double) none / bytes));
        }
      }
      System.out.println(line);
    }
    System.out.println();
  }

  private static long pick(Sizes s, int which) {
    return switch (which) {
      case 0 -> s.first();
      case 1 -> s.later();
      default -> s.laterMomentsOnly();
    };
  }
}
