package dev.profold.collector.fold;

import static dev.profold.proto.v1.RegionKind.REGION_KIND_COMPUTE;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_IO;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_WAIT;
import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.ingest.StreamDecoder;
import dev.profold.collector.telemetry.CollectorMetrics;
import dev.profold.collector.testing.Deltas;
import dev.profold.collector.testing.MutableClock;
import dev.profold.sinks.snapshot.SchemeSnapshot;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import dev.profold.sinks.snapshot.SourceSnapshot;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * No loss, no double counting: for random arrivals of deltas from a few sources (any order, with
 * retries of the same sequence number and merged deltas), every cumulative series holds exactly the
 * entries of the deltas the engine reported as APPLIED, and a delta is applied exactly when a
 * simple model of the sequence rules says so.
 *
 * <p>Same setup as {@link FoldEngineTest}: a {@link MutableClock} standing still inside one 10 s
 * window, so every delta lands in the same window; dyadic values so sums are exact.
 */
class FoldEnginePropertyTest {
  static final long SECOND = 1_000_000_000L;
  static final long INTERVAL = 10 * SECOND;
  static final long T0 = 1_700_000_000L * SECOND;
  static final String[] PATHS = {"", "main", "main/db.query", "main/lock"};
  static final String[] KINDS = {"", "compute", "io", "wait"};

  /**
   * One arrival: source {@code source} sends sequence {@code seq}; a positive {@code span} makes it
   * a merged delta covering {@code [max(1, seq - span), seq]}.
   */
  record Send(int source, long seq, int span) {
    long firstSeq() {
      return span == 0 ? 0 : Math.max(1, seq - span);
    }

    long coveredFrom() {
      return span == 0 ? seq : firstSeq();
    }
  }

  /** One entry: region index into {@link #PATHS} (0 = no region) and its values. */
  record Item(int region, double[] values) {}

  @Provide
  Arbitrary<List<Send>> arrivals() {
    Arbitrary<Send> send =
        Combinators.combine(
                Arbitraries.integers().between(0, 2),
                Arbitraries.longs().between(1, 10),
                Arbitraries.integers().between(0, 3).map(s -> s == 3 ? 2 : 0))
            .as(Send::new);
    return send.list().ofMinSize(1).ofMaxSize(40);
  }

  /**
   * The content of a delta is a function of (seed, source, seq, span), so a retry of the same delta
   * carries the same entries.
   */
  static List<Item> content(long seed, Send s) {
    Random r = new Random(seed ^ (s.source() * 1_000_003L + s.seq() * 7919L + s.span() * 31L));
    List<Item> items = new ArrayList<>();
    List<Integer> regions = new ArrayList<>(List.of(0, 1, 2, 3));
    Collections.shuffle(regions, r);
    int n = 1 + r.nextInt(3);
    for (int i = 0; i < n; i++) {
      double[] values = new double[1 + r.nextInt(4)];
      for (int k = 0; k < values.length; k++) {
        values[k] = (1 + r.nextInt(64)) / 16.0;
      }
      items.add(new Item(regions.get(i), values));
    }
    return items;
  }

  /** Expected totals of one series: count and exact sum. */
  record Totals(long count, double sum) {
    Totals plus(double[] values) {
      double s = sum;
      for (double v : values) {
        s += v;
      }
      return new Totals(count + values.length, s);
    }
  }

  @Property(tries = 300)
  void cumulativeHoldsExactlyTheAppliedDeltas(
      @ForAll("arrivals") List<Send> arrivals, @ForAll long seed) {
    MutableClock clock = MutableClock.atNanos(T0 + SECOND);
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    GlobalDictionary dictionary = new GlobalDictionary(10_000);
    FoldEngine engine =
        new FoldEngine(
            new FoldConfig(INTERVAL, 5, 1000), dictionary, clock, new CollectorMetrics(registry));
    // One Push stream per source: definitions only on the first delta of each stream.
    StreamDecoder[] streams = new StreamDecoder[3];

    long[] lastApplied = new long[3];
    long[] missing = new long[3];
    boolean[] seen = new boolean[3];
    Map<List<String>, Totals> expected = new HashMap<>();
    int applied = 0;
    int duplicates = 0;
    int rejected = 0;

    for (Send s : arrivals) {
      Deltas.Builder b;
      if (streams[s.source()] == null) {
        streams[s.source()] = new StreamDecoder(dictionary);
        b =
            Deltas.source("svc", "i-" + s.source())
                .region(1, "main", REGION_KIND_COMPUTE)
                .region(2, 1, "db.query", REGION_KIND_IO)
                .region(3, 1, "lock", REGION_KIND_WAIT);
      } else {
        b = Deltas.next();
      }
      b.seq(s.seq()).firstSeq(s.firstSeq()).interval(T0, T0 + INTERVAL);
      List<Item> items = content(seed, s);
      for (Item it : items) {
        if (it.region() == 0) {
          b.entryWithoutKey(it.values());
        } else {
          b.entry(it.region(), it.values());
        }
      }

      FoldResult result = engine.apply(b.decode(streams[s.source()]));

      // The model of the sequence rules. First contact: earlier sequences are not a gap.
      if (!seen[s.source()]) {
        seen[s.source()] = true;
        lastApplied[s.source()] = s.coveredFrom() - 1;
      }
      long last = lastApplied[s.source()];
      FoldResult.Outcome want;
      if (s.seq() <= last) {
        want = FoldResult.Outcome.DUPLICATE;
        duplicates++;
      } else if (s.coveredFrom() <= last) {
        want = FoldResult.Outcome.REJECTED;
        rejected++;
      } else {
        want = FoldResult.Outcome.APPLIED;
        applied++;
        missing[s.source()] += s.coveredFrom() - last - 1;
        lastApplied[s.source()] = s.seq();
        for (Item it : items) {
          List<String> labels =
              List.of("svc", "i-" + s.source(), PATHS[it.region()], KINDS[it.region()]);
          expected.put(labels, expected.getOrDefault(labels, new Totals(0, 0)).plus(it.values()));
        }
      }
      assertThat(result.outcome()).as("%s after last applied %d", s, last).isEqualTo(want);
    }

    SchemeSnapshot scheme = engine.snapshot().schemes().get(0);
    Map<List<String>, Totals> actual = new HashMap<>();
    for (SeriesSnapshot series : scheme.cumulative()) {
      assertThat(actual.put(series.labelValues(), totals(series))).isNull();
    }
    assertThat(actual).isEqualTo(expected);
    for (SeriesSnapshot series : scheme.cumulative()) {
      assertThat(series.state().histogramTotal()).isEqualTo(series.state().count());
    }

    for (SourceSnapshot src : engine.snapshot().sources()) {
      int i = Integer.parseInt(src.instance().substring(2));
      assertThat(src.lastSequence()).isEqualTo(lastApplied[i]);
      assertThat(src.missingDeltas()).isEqualTo(missing[i]);
    }
    assertThat(registry.get("profold.deltas.applied").counter().count()).isEqualTo(applied);
    assertThat(registry.get("profold.deltas.duplicate").counter().count()).isEqualTo(duplicates);
    assertThat(registry.get("profold.sequence.gaps").counter().count())
        .isEqualTo((double) (missing[0] + missing[1] + missing[2]));
    assertThat(applied + duplicates + rejected).isEqualTo(arrivals.size());

    // Everything landed in one window: once it closes, it holds exactly the cumulative totals.
    clock.advanceNanos(2 * INTERVAL);
    engine.advance();
    Map<List<String>, Totals> window = new HashMap<>();
    for (SeriesSnapshot series : engine.snapshot().schemes().get(0).lastInterval()) {
      window.put(series.labelValues(), totals(series));
    }
    assertThat(window).isEqualTo(expected);
  }

  private static Totals totals(SeriesSnapshot s) {
    return new Totals(s.state().count(), s.state().sum());
  }
}
