package dev.profold.collector.query;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Shared inputs and helpers of the CalQL tests. */
final class CalqlFixtures {
  private CalqlFixtures() {}

  /** The eight records of the golden cases (calql-golden.md). */
  static final String GOLDEN_JSONL =
      """
      {"function":["main"],"mpi.rank":0,"loop.iteration":0,"time.duration":100}
      {"function":["main","foo"],"mpi.rank":0,"loop.iteration":0,"time.duration":251}
      {"function":["main","foo","bar"],"mpi.rank":0,"loop.iteration":0,"time.duration":50}
      {"function":["main","foo"],"mpi.rank":1,"loop.iteration":3,"time.duration":251}
      {"function":["main","foo"],"mpi.rank":2,"loop.iteration":3,"time.duration":251}
      {"function":["main","foo","bar"],"mpi.rank":2,"loop.iteration":3,"time.duration":7}
      {"function":["main"],"mpi.rank":2,"time.duration":10}
      {"function":["main","foo"],"mpi.rank":1,"loop.iteration":4}
      """;

  static List<Map<String, Object>> golden() {
    return parse(GOLDEN_JSONL);
  }

  static List<Map<String, Object>> parse(String jsonl) {
    List<Map<String, Object>> out = new ArrayList<>();
    try {
      JsonRecords.read(new StringReader(jsonl), "test", out::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (RecordFormatException e) {
      throw new AssertionError(e.getMessage(), e);
    }
    return out;
  }

  static QueryResult run(String query, List<? extends Map<String, ?>> records) {
    try {
      return QueryEvaluator.of(query).evaluate(records);
    } catch (QueryException e) {
      throw new AssertionError(e.getMessage(), e);
    }
  }

  /** The rows of {@code result} by the printed value of column {@code key}. */
  static Map<String, Map<String, Object>> byKey(QueryResult result, String key) {
    Map<String, Map<String, Object>> out = new LinkedHashMap<>();
    for (Map<String, Object> row : result.rows()) {
      Map<String, Object> previous = out.put(Values.text(row.get(key)), row);
      assertThat(previous).as("duplicate key %s", row.get(key)).isNull();
    }
    return out;
  }

  /** A record from alternating attribute names and values. */
  static Map<String, Object> rec(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }
}
