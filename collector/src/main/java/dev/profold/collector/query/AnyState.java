package dev.profold.collector.query;

import java.util.Map;

/** The first value of an attribute seen in a group, for {@code any(x)}. */
final class AnyState implements OperatorState {
  private final String attribute;
  private Object value;

  AnyState(String attribute) {
    this.attribute = attribute;
  }

  @Override
  public void add(Map<String, ?> record) {
    if (value == null) {
      Object v = record.get(attribute);
      if (v != null && !(v instanceof PreAggregated)) {
        value = Values.normalize(v);
      }
    }
  }

  @Override
  public void merge(OperatorState other) {
    if (value == null) {
      value = ((AnyState) other).value;
    }
  }

  @Override
  public void exportTo(Map<String, Object> record) {
    if (value != null) {
      record.putIfAbsent(attribute, value);
    }
  }

  Object value() {
    return value;
  }
}
