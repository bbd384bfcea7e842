package dev.profold.benchmarks;

import dev.profold.collector.query.JsonRecords;
import dev.profold.collector.query.PartialResult;
import dev.profold.collector.query.QueryEvaluator;
import dev.profold.collector.query.QueryException;
import dev.profold.collector.query.QueryResult;
import dev.profold.collector.query.RecordFormatException;
import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The offline CalQL engine over {@value #RECORDS} generated records ({@link CalqlRecords}), one
 * whole query per invocation, single thread; the score is per record.
 *
 * <ul>
 *   <li>{@link #evaluate}: parse excluded. {@link QueryEvaluator#newPartial}, {@value #RECORDS}
 *       {@link PartialResult#add} calls cycling over {@link #distinct} distinct records already in
 *       memory as {@link JsonRecords} produced them, then {@link QueryEvaluator#finish}.
 *   <li>{@link #parseAndEvaluate}: parse included. The same, but the records come from JSON Lines
 *       text through {@link JsonRecords#read}, the reader {@code profold query} uses. The text is
 *       the {@link #distinct} distinct lines held in memory and served over and over by a {@link
 *       Reader}, so no file system or UTF-8 decoding is measured.
 *   <li>{@link #parseOnly}: {@link JsonRecords#read} of the same text into a blackhole, to split
 *       the parse-included cost.
 * </ul>
 *
 * <p>The query has two GROUP BY attributes (60 groups: 10 services × 6 kinds) and four operators.
 * Setup checks that the generator's lines parse to its records and that both paths give the same
 * result.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class CalqlQueryBenchmark {
  static final String QUERY =
      "SELECT service, kind, count(), sum(time), avg(time), max(time) GROUP BY service, kind";
  static final int RECORDS = 10_000_000;

  /**
   * Distinct records, reused {@code RECORDS / distinct} times; must divide {@value #RECORDS}. At
   * 100,000 (about 100 MB of records) a record is out of cache when it comes round again, at 1,000
   * (about 1 MB) it stays in cache, as a record just parsed does.
   */
  @Param({"100000"})
  int distinct;

  private QueryEvaluator evaluator;
  private List<Map<String, Object>> records;
  private char[] text;
  private int passes;

  @Setup(Level.Trial)
  public void setUp() throws IOException, RecordFormatException, QueryException {
    evaluator = QueryEvaluator.of(QUERY);
    if (RECORDS % distinct != 0) {
      throw new IllegalArgumentException("distinct must divide " + RECORDS + ": " + distinct);
    }
    passes = RECORDS / distinct;
    String lines = CalqlRecords.lines(distinct);
    text = lines.toCharArray();
    List<Map<String, Object>> parsed = new ArrayList<>(distinct);
    JsonRecords.read(new StringReader(lines), "generated", parsed::add);
    if (parsed.size() != distinct) {
      throw new IllegalStateException("parsed " + parsed.size() + " records");
    }
    for (int i = 0; i < distinct; i++) {
      if (!parsed.get(i).equals(CalqlRecords.record(i))) {
        throw new IllegalStateException("line " + i + " does not parse to record " + i);
      }
    }
    records = List.copyOf(parsed);
    QueryResult a = evaluate();
    QueryResult b = parseAndEvaluate();
    if (a.rows().size() != 60 || !a.rows().equals(b.rows())) {
      throw new IllegalStateException("results differ or not 60 groups: " + a.rows().size());
    }
  }

  @Benchmark
  @OperationsPerInvocation(RECORDS)
  public QueryResult evaluate() {
    PartialResult p = evaluator.newPartial();
    for (int pass = 0; pass < passes; pass++) {
      for (Map<String, Object> r : records) {
        p.add(r);
      }
    }
    return evaluator.finish(p);
  }

  @Benchmark
  @OperationsPerInvocation(RECORDS)
  public QueryResult parseAndEvaluate() throws IOException, RecordFormatException {
    PartialResult p = evaluator.newPartial();
    JsonRecords.read(new RepeatingReader(text, passes), "generated", p::add);
    return evaluator.finish(p);
  }

  @Benchmark
  @OperationsPerInvocation(RECORDS)
  public void parseOnly(Blackhole bh) throws IOException, RecordFormatException {
    JsonRecords.read(new RepeatingReader(text, passes), "generated", bh::consume);
  }

  /** Serves {@code text} {@code times} times over. Not thread-safe. */
  static final class RepeatingReader extends Reader {
    private final char[] text;
    private int remaining;
    private int pos;

    RepeatingReader(char[] text, int times) {
      this.text = text;
      this.remaining = times;
    }

    @Override
    public int read(char[] buf, int off, int len) {
      if (len == 0) {
        return 0;
      }
      if (pos == text.length) {
        if (--remaining <= 0) {
          return -1;
        }
        pos = 0;
      }
      int n = Math.min(len, text.length - pos);
      System.arraycopy(text, pos, buf, off, n);
      pos += n;
      return n;
    }

    @Override
    public void close() {}
  }
}
