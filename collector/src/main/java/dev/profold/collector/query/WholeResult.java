package dev.profold.collector.query;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The whole-result step of an aggregating query: turns complete group states into rows, giving each
 * operator a {@link GroupContext} with the total over all groups and the inclusive state of the
 * group (its own merged with those of all groups below it on the nested path). Totals and inclusive
 * states are computed on first use, once. Not thread-safe; used once per finish.
 *
 * <p>Inclusive roll-up follows Caliper: when any operator is inclusive, every proper prefix of a
 * group's path (of its first path-valued key attribute, other key values equal) becomes a group
 * too, with empty own states if no record had exactly that path; the group at prefix {@code p} then
 * includes every group whose path starts with {@code p}.
 */
final class WholeResult {
  private final List<Operator> operators;
  private final List<GroupKey> keys = new ArrayList<>();
  private final List<OperatorState[]> states = new ArrayList<>();
  private final List<List<Integer>> below = new ArrayList<>();
  private final OperatorState[] totals;
  private final Map<Long, OperatorState> inclusiveCache = new HashMap<>();

  WholeResult(List<Operator> operators, Map<GroupKey, OperatorState[]> groups, boolean rollUp) {
    this.operators = operators;
    this.totals = new OperatorState[operators.size()];
    Map<GroupKey, Integer> index = new HashMap<>();
    for (Map.Entry<GroupKey, OperatorState[]> e : groups.entrySet()) {
      index.put(e.getKey(), keys.size());
      keys.add(e.getKey());
      states.add(e.getValue());
      below.add(new ArrayList<>());
    }
    if (rollUp) {
      int original = keys.size();
      for (int g = 0; g < original; g++) {
        GroupKey key = keys.get(g);
        String axis = key.pathAttribute();
        if (axis == null) {
          continue;
        }
        int length = ((List<?>) key.values().get(axis)).size();
        for (int l = length - 1; l >= 1; l--) {
          GroupKey prefix = key.withPrefix(axis, l);
          Integer at = index.get(prefix);
          if (at == null) {
            at = keys.size();
            index.put(prefix, at);
            keys.add(prefix);
            states.add(emptyStates());
            below.add(new ArrayList<>());
          }
          below.get(at).add(g);
        }
      }
    }
  }

  List<GroupKey> keys() {
    return keys;
  }

  /** One row per group: key values, then each operator's non-null result under its column. */
  List<Map<String, Object>> rows() {
    List<Map<String, Object>> rows = new ArrayList<>(keys.size());
    for (int g = 0; g < keys.size(); g++) {
      Map<String, Object> row = new LinkedHashMap<>(keys.get(g).values());
      for (int k = 0; k < operators.size(); k++) {
        Operator op = operators.get(k);
        Object v = op.result(states.get(g)[k], new Context(g, k));
        if (v != null) {
          row.put(op.column(), v);
        }
      }
      rows.add(row);
    }
    return rows;
  }

  private OperatorState[] emptyStates() {
    OperatorState[] s = new OperatorState[operators.size()];
    for (int k = 0; k < s.length; k++) {
      s[k] = operators.get(k).newState();
    }
    return s;
  }

  private OperatorState total(int k) {
    if (totals[k] == null) {
      OperatorState t = operators.get(k).newState();
      for (OperatorState[] s : states) {
        t.merge(s[k]);
      }
      totals[k] = t;
    }
    return totals[k];
  }

  private OperatorState inclusive(int g, int k) {
    long cacheKey = ((long) g << 32) | k;
    OperatorState cached = inclusiveCache.get(cacheKey);
    if (cached != null) {
      return cached;
    }
    OperatorState s = operators.get(k).newState();
    s.merge(states.get(g)[k]);
    for (int d : below.get(g)) {
      s.merge(states.get(d)[k]);
    }
    inclusiveCache.put(cacheKey, s);
    return s;
  }

  /** The context of operator {@code k} in group {@code g}. */
  private final class Context implements GroupContext {
    private final int group;
    private final int operator;

    Context(int group, int operator) {
      this.group = group;
      this.operator = operator;
    }

    @Override
    public OperatorState total() {
      return WholeResult.this.total(operator);
    }

    @Override
    public OperatorState inclusive() {
      return WholeResult.this.inclusive(group, operator);
    }
  }
}
