package dev.profold.collector.query.online;

import static dev.profold.collector.query.online.SnapshotFixtures.scheme;
import static dev.profold.collector.query.online.SnapshotFixtures.snapshot;
import static dev.profold.collector.query.online.SnapshotFixtures.time;
import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.query.OutputFormat;
import dev.profold.sinks.snapshot.CollectorSnapshot;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * An empty query text runs the scheme's own query as its kept records answer it: without the WHERE
 * the fold applied already, with the GROUP BY attributes shown.
 */
class OwnQueryTest {
  private static OnlineQuery.Answer run(String configured) throws Exception {
    CollectorSnapshot s =
        snapshot(
            scheme(
                "io_by_service",
                configured,
                List.of(
                    time("checkout", "handle/db.query", 0.25, 0.5),
                    time("search", "handle/db.query", 2.0)),
                List.of()));
    return new OnlineQuery(() -> s)
        .run(
            new OnlineQuery.Request("io_by_service", "", TimeRange.cumulative(), null),
            OutputFormat.TABLE);
  }

  @Test
  void theWhereTheFoldAppliedIsLeftOutAndTheGroupKeysAreShown() throws Exception {
    OnlineQuery.Answer a = run("SELECT sum(time) WHERE kind=io GROUP BY service ORDER BY service");

    assertThat(a.query())
        .isEqualTo("SELECT service,sum(time) GROUP BY service ORDER BY service ASC");
    assertThat(a.result().columns()).containsExactly("service", "sum#time");
    assertThat(a.result().rows())
        .containsExactly(
            Map.of("service", "checkout", "sum#time", 0.75),
            Map.of("service", "search", "sum#time", 2.0));
  }

  @Test
  void aSchemeGroupingByADottedAttributeAnswersItsOwnQuery() throws Exception {
    // The label is thread_group, the attribute thread.group: before, the records carried the
    // label's name, and the scheme's own query found no thread.group.
    String configured = "SELECT sum(time) GROUP BY service, thread.group";
    CollectorSnapshot s =
        snapshot(
            new dev.profold.sinks.snapshot.SchemeSnapshot(
                "by_group",
                List.of("service", "thread_group"),
                List.of(
                    new dev.profold.sinks.snapshot.SeriesSnapshot(
                        List.of("checkout", "workers"),
                        SnapshotFixtures.TIME,
                        SnapshotFixtures.state(3)),
                    new dev.profold.sinks.snapshot.SeriesSnapshot(
                        List.of("checkout", "io"),
                        SnapshotFixtures.TIME,
                        SnapshotFixtures.state(5))),
                List.of(),
                0,
                2,
                configured,
                10 * SnapshotFixtures.S,
                List.of(),
                List.of(),
                List.of("service", "thread.group")));
    OnlineQuery.Answer a =
        new OnlineQuery(() -> s)
            .run(
                new OnlineQuery.Request("by_group", "", TimeRange.cumulative(), null),
                OutputFormat.TABLE);
    assertThat(a.note()).isEmpty();
    assertThat(a.result().rows())
        .containsExactlyInAnyOrder(
            Map.of("service", "checkout", "thread.group", "workers", "sum#time", 3.0),
            Map.of("service", "checkout", "thread.group", "io", "sum#time", 5.0));
  }

  @Test
  void aQueryThatNeedsNoChangeRunsAsConfigured() throws Exception {
    String q = "SELECT service, sum(time) GROUP BY service ORDER BY service";
    assertThat(run(q).query()).isEqualTo(q);
    assertThat(OnlineQuery.ownQuery("SELECT * GROUP BY service"))
        .isEqualTo("SELECT * GROUP BY service");
    assertThat(OnlineQuery.ownQuery("AGGREGATE sum(time) GROUP BY service"))
        .isEqualTo("AGGREGATE sum(time) GROUP BY service");
  }
}
