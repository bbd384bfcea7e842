package dev.profold.collector.query.online;

import static dev.profold.collector.query.online.SnapshotFixtures.scheme;
import static dev.profold.collector.query.online.SnapshotFixtures.snapshot;
import static dev.profold.collector.query.online.SnapshotFixtures.time;
import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.query.OutputFormat;
import dev.profold.collector.query.Query;
import dev.profold.sinks.snapshot.CollectorSnapshot;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A query naming an attribute no record has still runs (CalQL takes it as absent), and its answer
 * says which attributes those are and which the records have, instead of empty columns alone.
 */
class UnknownAttributeNoteTest {
  private final CollectorSnapshot s =
      snapshot(
          scheme(
              "region",
              "",
              List.of(time("checkout", "handle/db.query", 0.25), time("search", "handle", 2.0)),
              List.of()));

  private OnlineQuery.Answer run(String query) throws Exception {
    return new OnlineQuery(() -> s)
        .run(
            new OnlineQuery.Request("region", query, TimeRange.cumulative(), null),
            OutputFormat.TABLE);
  }

  @Test
  void aMisspelledGroupKeyIsNamedWithTheAttributesTheRecordsHave() throws Exception {
    OnlineQuery.Answer a = run("SELECT servce, sum(time) GROUP BY servce");

    assertThat(a.note())
        .isEqualTo(
            "no record of scheme 'region' has attribute 'servce' (taken as absent: check the"
                + " spelling, or whether the scheme's GROUP BY keeps it); the records have: count,"
                + " instance, kind, path, service, time");
  }

  @Test
  void everyUnknownNameOfSelectWhereAndOperatorsIsNamedOnce() throws Exception {
    OnlineQuery.Answer a =
        run("SELECT tenant, sum(tme), quantile(time, 0.99) WHERE host=a GROUP BY tenant");

    assertThat(a.note()).contains("has attributes 'tenant', 'host', 'tme' (");
  }

  @Test
  void noNoteWhenEveryAttributeIsThereOrDefinedByLet() throws Exception {
    assertThat(run("SELECT service, sum(time) GROUP BY service").note()).isEmpty();
    assertThat(run("LET t=first(time) SELECT service, sum(t) GROUP BY service").note()).isEmpty();
    assertThat(run("SELECT count() GROUP BY prop:nested").note()).isEmpty();
    assertThat(run("SELECT count() GROUP BY PROP:NESTED").note())
        .as("the keyword in any case")
        .isEmpty();
  }

  @Test
  void theQueryListsWhatItReads() throws Exception {
    assertThat(
            Query.parse(
                    "LET t2=truncate(time, 10) SELECT a, ratio(b, c, 1000), sum(t2) WHERE d"
                        + " GROUP BY a, e, prop:nested")
                .attributesRead())
        .containsExactly("a", "d", "e", "b", "c", "time");
    assertThat(Query.parse("SELECT scale(NaN, 2), ratio(x, y, 1e3) WHERE z").attributesRead())
        .as("only number literals are left out")
        .containsExactly("z", "NaN", "x", "y");
  }

  @Test
  void letArithmeticOnTheSchemesStatesIsNamedInTheNote() throws Exception {
    OnlineQuery.Answer a =
        run("LET ms=scale(time, 1000) SELECT service, sum(ms), max(ms) GROUP BY service");

    // Before, the columns came out empty without a word: a scheme's records hold states.
    assertThat(a.note())
        .isEqualTo(
            "LET ms = scale(time,1000) computes on single values, and 'time' is a pre-aggregated"
                + " state (many values folded) in 2 records read, which it left without 'ms'; on"
                + " states scale an operator's result instead: SELECT scale(time, 1000) is 1000 x"
                + " sum(time)");
    assertThat(run("LET r=ratio(count, time, 2) SELECT sum(r)").note())
        .startsWith("LET r = ratio(count,time,2) computes on single values, and 'time' is a")
        .endsWith(
            "which it left without 'r'; on states take the ratio of sums instead: SELECT"
                + " ratio(count, time, 2) is 2 x sum(count) / sum(time)");
  }

  @Test
  void theNoteFollowsLetChainsAndNamesATargetThatKeptItsValue() throws Exception {
    // An earlier first(...) copies the state: the scale after it meets a state too.
    assertThat(run("LET t=first(time), ms=scale(t, 1000) SELECT sum(ms)").note())
        .startsWith("LET ms = scale(t,1000) computes on single values, and 't' is a")
        .contains("in 2 records read, which it left without 'ms'");
    // A target named as its input keeps the unscaled state: the sum is not in milliseconds.
    assertThat(run("LET time=scale(time, 1000) SELECT sum(time)").note())
        .contains("in 2 records read, where 'time' kept the value it had;");
    // Each definition meeting a state is named, with its own count.
    assertThat(run("let a=SCALE(time, 2), b=truncate(time) SELECT sum(a), sum(b)").note())
        .contains("LET a = SCALE(time,2) computes")
        .contains("; LET b = truncate(time) computes on single values, and 'time' is a")
        .doesNotContain("truncate(time) is");
    assertThat(run("LET ms=scale(count, 1000) SELECT sum(ms)").note())
        .as("a plain number is scaled: no note")
        .isEmpty();
  }
}
