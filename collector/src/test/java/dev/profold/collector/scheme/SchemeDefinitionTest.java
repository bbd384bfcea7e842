package dev.profold.collector.scheme;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class SchemeDefinitionTest {
  static SchemeDefinition compile(String name, String query) throws SchemeException {
    return SchemeDefinition.compile(name, query, Duration.ofSeconds(10), 100, 10);
  }

  @Test
  void groupingAttributesBecomeLabelsWithDotsAsUnderscores() throws Exception {
    SchemeDefinition d =
        compile("threads", "SELECT sum(time) WHERE kind=sync GROUP BY service, thread.group");
    assertThat(d.groupBy()).containsExactly("service", "thread.group");
    assertThat(d.labelNames()).containsExactly("service", "thread_group");
    assertThat(d.whereAttributes()).containsExactly("kind");
    assertThat(d.perInstance()).isFalse();
    assertThat(compile("x", "SELECT sum(time) GROUP BY prop:nested").groupBy())
        .containsExactly("region");
    assertThat(compile("y", "SELECT service, count()").groupBy()).containsExactly("service");
    assertThat(SchemeDefinition.builtIn(Duration.ofSeconds(1), 5).perInstance()).isTrue();
  }

  @Test
  void refusesWhatCannotBecomeMetrics() {
    assertThatThrownBy(() -> compile("x", "SELECT count() GROUP BY a.b, a_b"))
        .hasMessage(
            "scheme 'x': GROUP BY attributes 'a.b' and 'a_b' both become label 'a_b'; group by"
                + " one of them");
    assertThatThrownBy(() -> compile("x", "SELECT count() GROUP BY le"))
        .hasMessageContaining("GROUP BY attribute 'le' cannot be a Prometheus label name");
    // Before: accepted, and the attribute's values replaced the archived records' bounds.
    assertThatThrownBy(() -> compile("x", "SELECT count() GROUP BY service, interval.start"))
        .hasMessage(
            "scheme 'x': GROUP BY attribute 'interval.start' has the name of the interval bounds"
                + " (interval.start, interval.end) that archived records and queries use; group"
                + " by another attribute");
    assertThatThrownBy(() -> compile("x", "SELECT sum(time), interval.end"))
        .hasMessageContaining("GROUP BY attribute 'interval.end' has the name");
    assertThatThrownBy(() -> compile("9x", "SELECT count()"))
        .hasMessageContaining("scheme name '9x' must be lower-case letters");
    assertThatThrownBy(() -> compile("source", "SELECT count()"))
        .hasMessageContaining("scheme 'source': the name is taken");
    assertThatThrownBy(() -> compile("x", "SELECT count( GROUP BY a"))
        .hasMessageStartingWith("scheme 'x': query at column ");
    assertThatThrownBy(
            () -> SchemeDefinition.compile("x", "SELECT count()", Duration.ofMillis(10), 1, 1))
        .hasMessageContaining("interval must be at least 100ms");
  }

  @Test
  void namesWhoseMetricsCouldMeetTheCollectorsOwnAreRefused() throws Exception {
    // A scheme 'archive' with a measurement intervals_written would expose a histogram
    // profold_archive_intervals_written next to the counter of that name, failing every scrape.
    assertThatThrownBy(() -> compile("archive", "SELECT count()"))
        .hasMessage(
            "scheme 'archive': the name is taken by the collector's own metrics"
                + " (profold_archive_intervals_dropped_total,"
                + " profold_archive_intervals_written_total): the scheme's metrics are named"
                + " profold_archive_<measurement>..., and one named like these would fail every"
                + " /metrics scrape; rename the scheme, for example to 'archive_scheme'");
    assertThatThrownBy(() -> compile("thread", "SELECT count()"))
        .hasMessageContaining("(profold_thread_groups_evicted_total)")
        .hasMessageEndingWith("for example to 'thread_scheme'");
    assertThatThrownBy(() -> compile("deltas", "SELECT count()"))
        .hasMessageContaining(
            "(profold_deltas_applied_total, profold_deltas_duplicate_total,"
                + " profold_deltas_received_total and 1 more)");
    // every prefix of a name counts, unit and type suffixes too
    for (String name :
        new String[] {
          "thread_groups", "deltas_received", "ingest_received_bytes", "fold_latency_seconds"
        }) {
      assertThatThrownBy(() -> compile(name, "SELECT count()"))
          .as(name)
          .hasMessageContaining("the name is taken by the collector's own metrics (profold_");
    }
    assertThatThrownBy(() -> compile("client", "SELECT count()"))
        .hasMessage(
            "scheme 'client': the name is taken by the collector's own metrics (profold_client_...);"
                + " rename the scheme, for example to 'client_scheme'");
    // names that merely look alike are fine
    for (String name :
        new String[] {"archive_scheme", "threads", "thread_pools", "region", "alerts", "folds"}) {
      assertThat(compile(name, "SELECT count()").name()).isEqualTo(name);
    }
  }

  @Test
  void sameAsComparesTheDefinitionNotTheObject() throws Exception {
    SchemeDefinition a = compile("a", "SELECT sum(time) GROUP BY path");
    assertThat(a.sameAs(compile("a", "SELECT sum(time) GROUP BY path"))).isTrue();
    assertThat(a.sameAs(compile("a", "SELECT max(time) GROUP BY path"))).isFalse();
    assertThat(
            a.sameAs(
                SchemeDefinition.compile(
                    "a", "SELECT sum(time) GROUP BY path", Duration.ofSeconds(10), 100, 11)))
        .isFalse();
  }
}
