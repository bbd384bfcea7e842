package dev.profold.collector.query.online;

import dev.profold.reduce.Aggregate;
import dev.profold.sinks.snapshot.CollectorSnapshot;
import dev.profold.sinks.snapshot.IntervalSnapshot;
import dev.profold.sinks.snapshot.Measure;
import dev.profold.sinks.snapshot.SchemeSnapshot;
import dev.profold.sinks.snapshot.SeriesSnapshot;
import dev.profold.sinks.snapshot.StateSnapshot;
import java.util.List;

/** Snapshots built from raw values, for tests of online queries. */
final class SnapshotFixtures {
  static final long S = 1_000_000_000L;

  /** Unix nanos of 2024-01-01T00:00:00Z, a round start for retained intervals. */
  static final long T0 = 1_704_067_200L * S;

  static final List<String> LABELS = List.of("service", "instance", "path", "kind");
  static final Measure TIME = new Measure("time", "seconds");

  private SnapshotFixtures() {}

  /** The state of {@code values}, recorded as the fold records them (histogram included). */
  static StateSnapshot state(double... values) {
    Aggregate a = new Aggregate();
    for (double v : values) {
      a.record(v);
    }
    return StateSnapshot.of(a);
  }

  /** A series of the built-in scheme's labels with the state of {@code values}. */
  static SeriesSnapshot series(String service, String path, Measure m, double... values) {
    return new SeriesSnapshot(List.of(service, "i-1", path, "compute"), m, state(values));
  }

  static SeriesSnapshot time(String service, String path, double... values) {
    return series(service, path, TIME, values);
  }

  /** Interval number {@code k} (10 s each, from {@link #T0}) holding {@code series}. */
  static IntervalSnapshot interval(int k, SeriesSnapshot... series) {
    return new IntervalSnapshot(T0 + k * 10 * S, T0 + (k + 1) * 10 * S, List.of(series));
  }

  /** A scheme with these cumulative series and retained intervals. */
  static SchemeSnapshot scheme(
      String name, String query, List<SeriesSnapshot> cumulative, List<IntervalSnapshot> retained) {
    List<SeriesSnapshot> last =
        retained.isEmpty() ? List.of() : retained.get(retained.size() - 1).series();
    long lastEnd = retained.isEmpty() ? 0 : retained.get(retained.size() - 1).endUnixNanos();
    return new SchemeSnapshot(
        name,
        LABELS,
        cumulative,
        last,
        lastEnd,
        cumulative.size(),
        query,
        10 * S,
        retained,
        List.of());
  }

  static CollectorSnapshot snapshot(SchemeSnapshot... schemes) {
    return new CollectorSnapshot(List.of(schemes), List.of());
  }
}
