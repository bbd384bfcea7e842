package dev.profold.collector.query;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The mergeable, unfinished result of a query over part of the input: per group, one {@link
 * OperatorState} per operator (or, for a query that does not aggregate, the selected records: with
 * a LIMIT only those it can show, see {@link ListedRows}). Not thread-safe: use one per thread and
 * {@link #merge} them.
 *
 * <p>Merging the partial results of the parts of an input gives the partial result of the whole
 * input; {@link QueryEvaluator#finish} then gives the same rows as evaluating the whole at once
 * (row order aside). {@link #toRecords()} writes the states as records with {@link PreAggregated}
 * values, which the same query (or one grouping by fewer attributes) accepts as input: the next
 * stage of a two-stage aggregation.
 */
public final class PartialResult {
  private final QueryEvaluator evaluator;

  /**
   * The groups in order of first appearance, keyed by a {@link KeyTuple} when the evaluator's key
   * is fixed (so finding a record's group allocates nothing), else by the {@link GroupKey}.
   */
  private final Map<Object, Group> groups = new LinkedHashMap<>();

  private final ListedRows rows;

  /** The reused lookup key of {@link #group}, null unless the key is fixed. Never stored. */
  private final KeyTuple probe;

  PartialResult(QueryEvaluator evaluator) {
    this.evaluator = evaluator;
    this.probe = evaluator.fixedKey() ? new KeyTuple(new Object[evaluator.keyCount()]) : null;
    this.rows = evaluator.newListedRows();
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
      if (!rows.wantsMore()) {
        return; // beyond a LIMIT without ORDER BY: never shown, so not held
      }
      Map<String, Object> row = new LinkedHashMap<>();
      for (Map.Entry<String, ?> e : r.entrySet()) {
        if (e.getValue() != null) {
          row.put(e.getKey(), Values.normalize(e.getValue()));
        }
      }
      rows.add(row);
      return;
    }
    Group g = group(r);
    g.records.add(r);
    for (OperatorState s : g.states) {
      s.add(r);
    }
  }

  /** The group of {@code record}, created on first use. */
  private Group group(Map<String, ?> record) {
    if (probe == null) {
      GroupKey key = evaluator.keyOf(record);
      return groups.computeIfAbsent(key, k -> new Group(key, evaluator.newStates()));
    }
    evaluator.probeKey(record, probe.values);
    probe.rehash();
    Group g = groups.get(probe);
    if (g == null) {
      GroupKey key = evaluator.keyOf(record);
      g = new Group(key, evaluator.newStates());
      groups.put(new KeyTuple(evaluator.keyTuple(key)), g);
    }
    return g;
  }

  /** The states of one group, and its record count (exported even without {@code count()}). */
  private static final class Group {
    final GroupKey key;
    final CountState records = new CountState();
    final OperatorState[] states;

    Group(GroupKey key, OperatorState[] states) {
      this.key = key;
      this.states = states;
    }
  }

  /**
   * A fixed group key as the values of the key attributes in order (null when absent): two tuples
   * are equal exactly when their {@link GroupKey}s are. Stored tuples are never changed; the probe
   * is refilled for each record.
   */
  private static final class KeyTuple {
    final Object[] values;
    private int hash;

    KeyTuple(Object[] values) {
      this.values = values;
      rehash();
    }

    void rehash() {
      hash = Arrays.hashCode(values);
    }

    @Override
    public int hashCode() {
      return hash;
    }

    @Override
    public boolean equals(Object o) {
      if (!(o instanceof KeyTuple t) || t.hash != hash || t.values.length != values.length) {
        return false;
      }
      for (int i = 0; i < values.length; i++) {
        // The other side's value first: a stored tuple's values are normalised.
        if (!Objects.equals(t.values[i], values[i])) {
          return false;
        }
      }
      return true;
    }
  }

  /** Adds everything {@code other} (a partial result of the same evaluator) holds. */
  public void merge(PartialResult other) {
    if (other.evaluator != evaluator) {
      throw new IllegalArgumentException("partial results of different queries");
    }
    for (Map.Entry<Object, Group> e : other.groups.entrySet()) {
      Group theirs = e.getValue();
      Group mine =
          groups.computeIfAbsent(e.getKey(), k -> new Group(theirs.key, evaluator.newStates()));
      mine.records.merge(theirs.records);
      for (int i = 0; i < mine.states.length; i++) {
        mine.states[i].merge(theirs.states[i]);
      }
    }
    for (Map<String, Object> r : other.rows.rows()) {
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
      for (Map<String, Object> r : rows.rows()) {
        out.add(Collections.unmodifiableMap(new LinkedHashMap<>(r)));
      }
      return Collections.unmodifiableList(out);
    }
    for (Group g : groups.values()) {
      Map<String, Object> r = new LinkedHashMap<>(g.key.values());
      g.records.exportTo(r);
      for (OperatorState s : g.states) {
        s.exportTo(r);
      }
      out.add(Collections.unmodifiableMap(r));
    }
    return Collections.unmodifiableList(out);
  }

  /** Group key to operator states, in order of first appearance. */
  Map<GroupKey, OperatorState[]> groups() {
    Map<GroupKey, OperatorState[]> view = new LinkedHashMap<>();
    for (Group g : groups.values()) {
      view.put(g.key, g.states);
    }
    return view;
  }

  List<Map<String, Object>> rows() {
    return rows.rows();
  }
}
