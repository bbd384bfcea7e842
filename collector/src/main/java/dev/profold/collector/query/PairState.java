package dev.profold.collector.query;

import java.util.Map;

/** The states of two attributes in a group, for {@code ratio(a, b)}. */
final class PairState implements OperatorState {
  final MeasureState first;
  final MeasureState second;

  PairState(String a, String b) {
    first = new MeasureState(a, false);
    second = new MeasureState(b, false);
  }

  @Override
  public void add(Map<String, ?> record) {
    first.add(record);
    second.add(record);
  }

  @Override
  public void merge(OperatorState other) {
    PairState o = (PairState) other;
    first.merge(o.first);
    second.merge(o.second);
  }

  @Override
  public void exportTo(Map<String, Object> record) {
    first.exportTo(record);
    second.exportTo(record);
  }
}
