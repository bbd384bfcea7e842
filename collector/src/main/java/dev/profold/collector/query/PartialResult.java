package dev.profold.collector.query;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The mergeable, unfinished result of a query over part of the input: per group, one {@link
 * OperatorState} per operator (or, for a query that does not aggregate, the selected records). Not
 * thread-safe: use one per thread and {@link #merge} them.
 *
 * <p>Merging the partial results of the parts of an input gives the partial result of the whole
 * input; {@link QueryEvaluator#finish} then gives the same rows as evaluating the whole at once
 * (row order aside). {@link #toRecords()} writes the states as records with {@link PreAggregated}
 * values, which the same query (or one grouping by fewer attributes) accepts as input: the next
 * stage of a two-stage aggregation.
 */
public final class PartialResult {
  private final QueryEvaluator evaluator;
  private final Map<GroupKey, Group> groups = new LinkedHashMap<>();
  private final List<Map<String, Object>> rows = new ArrayList<>();

  PartialResult(QueryEvaluator evaluator) {
    this.evaluator = evaluator;
  }

  /** Adds one input record: LET, WHERE, then grouping (or collection as a row). */
  public void add(Map<String, ?> record) {
    Map<String, ?> r = record;
    if (!evaluator.derivations().isEmpty()) {
      Map<String, Object> copy = new LinkedHashMap<>(record);
      for (LetFunctions.Derivation d : evaluator.derivations()) {
        d.apply(copy);
      }
      r = copy;
    }
    if (!evaluator.filter().test(r)) {
      return;
    }
    if (!evaluator.aggregating()) {
      Map<String, Object> row = new LinkedHashMap<>();
      for (Map.Entry<String, ?> e : r.entrySet()) {
        if (e.getValue() != null) {
          row.put(e.getKey(), Values.normalize(e.getValue()));
        }
      }
      rows.add(row);
      return;
    }
    Group g = groups.computeIfAbsent(evaluator.keyOf(r), k -> new Group(evaluator.newStates()));
    g.records.add(r);
    for (OperatorState s : g.states) {
      s.add(r);
    }
  }

  /** The states of one group, and its record count (exported even without {@code count()}). */
  private static final class Group {
    final CountState records = new CountState();
    final OperatorState[] states;

    Group(OperatorState[] states) {
      this.states = states;
    }
  }

  /** Adds everything {@code other} (a partial result of the same evaluator) holds. */
  public void merge(PartialResult other) {
    if (other.evaluator != evaluator) {
      throw new IllegalArgumentException("partial results of different queries");
    }
    for (Map.Entry<GroupKey, Group> e : other.groups.entrySet()) {
      Group mine = groups.computeIfAbsent(e.getKey(), k -> new Group(evaluator.newStates()));
      Group theirs = e.getValue();
      mine.records.merge(theirs.records);
      for (int i = 0; i < mine.states.length; i++) {
        mine.states[i].merge(theirs.states[i]);
      }
    }
    for (Map<String, Object> r : other.rows) {
      rows.add(new LinkedHashMap<>(r));
    }
  }

  /** Number of groups (or collected rows) so far. */
  public int size() {
    return evaluator.aggregating() ? groups.size() : rows.size();
  }

  /**
   * The partial result as records: per group, the key attributes, the record count as {@code count}
   * and each measured attribute as a {@link PreAggregated} state.
   */
  public List<Map<String, Object>> toRecords() {
    List<Map<String, Object>> out = new ArrayList<>(size());
    if (!evaluator.aggregating()) {
      for (Map<String, Object> r : rows) {
        out.add(Collections.unmodifiableMap(new LinkedHashMap<>(r)));
      }
      return Collections.unmodifiableList(out);
    }
    for (Map.Entry<GroupKey, Group> e : groups.entrySet()) {
      Map<String, Object> r = new LinkedHashMap<>(e.getKey().values());
      e.getValue().records.exportTo(r);
      for (OperatorState s : e.getValue().states) {
        s.exportTo(r);
      }
      out.add(Collections.unmodifiableMap(r));
    }
    return Collections.unmodifiableList(out);
  }

  /** Group key to operator states, in order of first appearance. */
  Map<GroupKey, OperatorState[]> groups() {
    Map<GroupKey, OperatorState[]> view = new LinkedHashMap<>();
    for (Map.Entry<GroupKey, Group> e : groups.entrySet()) {
      view.put(e.getKey(), e.getValue().states);
    }
    return view;
  }

  List<Map<String, Object>> rows() {
    return rows;
  }
}
