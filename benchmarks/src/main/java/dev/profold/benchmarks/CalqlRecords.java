package dev.profold.benchmarks;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Deterministic records shaped like profile records, for the offline CalQL benchmarks: record
 * {@code i} depends on {@code i} only (a SplitMix64 hash of it), so the same index gives the same
 * record in every run, on every machine, in memory or as a JSON Lines line.
 *
 * <p>Attributes, in this order (one flat JSON object per line, as docs/calql.md describes):
 *
 * <ul>
 *   <li>{@code service}: one of 10 service names, uniform;
 *   <li>{@code region}: a nested path, one of {@value #PATHS}: {@code main/<top>} for 10 top
 *       regions and {@code main/<top>/<child>} for 9 children of each, uniform;
 *   <li>{@code thread.group}: one of 4 names, uniform;
 *   <li>{@code thread.id}: integer 1 to 64;
 *   <li>{@code kind}: the region kind, a function of the region (6 values, as the client's {@code
 *       Kind}: top regions COMPUTE, children cycling through COMPUTE, COMPUTE, SYNC, WAIT, IO,
 *       COMPUTE, RUNTIME, COMPUTE, THREAD_MGMT);
 *   <li>{@code time}: seconds, whole microseconds, log-uniform from 1 µs to about 1 s (written as a
 *       plain decimal with six digits after the point);
 *   <li>{@code bytes}: integer, log-uniform from 1 to about 16 MiB;
 *   <li>{@code calls}: integer 1 to 16.
 * </ul>
 *
 * <p>{@link #line} and {@link #record} agree: parsing the line with the query package's JSON reader
 * gives a map equal to the record. Thread-safe (stateless).
 */
public final class CalqlRecords {
  static final int PATHS = 100;

  private static final String[] SERVICES = {
    "checkout", "cart", "catalog", "search", "payments",
    "shipping", "accounts", "ads", "recommend", "gateway"
  };
  private static final String[] TOPS = {
    "http.request", "grpc.call", "db.query", "cache.lookup", "render",
    "batch.job", "kafka.consume", "auth", "serialize", "scheduler.tick"
  };
  private static final String[] CHILDREN = {
    "parse", "validate", "lock", "await", "read", "compute", "gc", "encode", "spawn"
  };
  private static final String[] CHILD_KINDS = {
    "COMPUTE", "COMPUTE", "SYNC", "WAIT", "IO", "COMPUTE", "RUNTIME", "COMPUTE", "THREAD_MGMT"
  };
  private static final String[] GROUPS = {"main", "http-worker", "db-pool", "scheduler"};

  private static final long SEED = 0x5DEECE66DL;

  private CalqlRecords() {}

  /** SplitMix64 finaliser of {@code SEED + i * golden gamma}. */
  private static long hash(long i) {
    long z = SEED + (i + 1) * 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** The fields of record {@code i}, drawn from two hashes. */
  private record Fields(
      int service, int path, int group, long threadId, long micros, long bytes, long calls) {

    static Fields of(long i) {
      long a = hash(2 * i);
      long b = hash(2 * i + 1);
      int service = (int) Long.remainderUnsigned(a, SERVICES.length);
      int path = (int) Long.remainderUnsigned(a >>> 8, PATHS);
      int group = (int) ((a >>> 16) & 3);
      long threadId = 1 + ((a >>> 20) & 63);
      long calls = 1 + ((a >>> 26) & 15);
      int timeExponent = (int) Long.remainderUnsigned(a >>> 32, 20);
      long micros = (1L << timeExponent) + ((b & 0xFFFFF) & ((1L << timeExponent) - 1));
      int bytesExponent = (int) Long.remainderUnsigned(b >>> 20, 24);
      long bytes = (1L << bytesExponent) + ((b >>> 40) & ((1L << bytesExponent) - 1));
      return new Fields(service, path, group, threadId, micros, bytes, calls);
    }

    int top() {
      return path / 10;
    }

    /** 0 for the top region itself, else 1 + the child's index. */
    int child() {
      return path % 10;
    }

    String kind() {
      return child() == 0 ? "COMPUTE" : CHILD_KINDS[child() - 1];
    }

    List<String> region() {
      return child() == 0
          ? List.of("main", TOPS[top()])
          : List.of("main", TOPS[top()], CHILDREN[child() - 1]);
    }
  }

  /** Record {@code i} as the JSON reader gives it: Long integers, Double time, path as a list. */
  public static Map<String, Object> record(long i) {
    Fields f = Fields.of(i);
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("service", SERVICES[f.service()]);
    r.put("region", f.region());
    r.put("thread.group", GROUPS[f.group()]);
    r.put("thread.id", f.threadId());
    r.put("kind", f.kind());
    r.put("time", f.micros() / 1e6);
    r.put("bytes", f.bytes());
    r.put("calls", f.calls());
    return r;
  }

  /** Appends record {@code i} as one JSON object and a newline. */
  public static void line(long i, StringBuilder out) {
    Fields f = Fields.of(i);
    out.append("{\"service\":\"").append(SERVICES[f.service()]).append("\",\"region\":[");
    List<String> region = f.region();
    for (int k = 0; k < region.size(); k++) {
      out.append(k == 0 ? "\"" : ",\"").append(region.get(k)).append('"');
    }
    out.append("],\"thread.group\":\"").append(GROUPS[f.group()]);
    out.append("\",\"thread.id\":").append(f.threadId());
    out.append(",\"kind\":\"").append(f.kind());
    out.append("\",\"time\":").append(f.micros() / 1_000_000).append('.');
    String frac = Long.toString(f.micros() % 1_000_000);
    out.append("000000", 0, 6 - frac.length()).append(frac);
    out.append(",\"bytes\":").append(f.bytes());
    out.append(",\"calls\":").append(f.calls()).append("}\n");
  }

  /** Records {@code 0 .. count-1} as JSON Lines text. */
  public static String lines(int count) {
    StringBuilder sb = new StringBuilder(count * 180);
    for (int i = 0; i < count; i++) {
      line(i, sb);
    }
    return sb.toString();
  }

  /** Writes records {@code 0 .. count-1} to {@code out} as JSON Lines. */
  public static void write(long count, Writer out) throws IOException {
    StringBuilder sb = new StringBuilder(1 << 17);
    for (long i = 0; i < count; i++) {
      line(i, sb);
      if (sb.length() > (1 << 16)) {
        out.append(sb);
        sb.setLength(0);
      }
    }
    out.append(sb);
  }

  /**
   * Writes a JSON Lines file: {@code CalqlRecords COUNT FILE}, for example {@code 10000000
   * records.jsonl}.
   */
  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      System.err.println("usage: CalqlRecords COUNT FILE");
      System.exit(2);
    }
    long count = Long.parseLong(args[0]);
    try (BufferedWriter w = Files.newBufferedWriter(Path.of(args[1]), StandardCharsets.UTF_8)) {
      write(count, w);
    }
  }
}
