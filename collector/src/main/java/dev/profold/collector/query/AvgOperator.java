package dev.profold.collector.query;

/**
 * {@code avg(x)}: sum of {@code x} over the number of records that have {@code x}; column {@code
 * avg#x}. Always floating point (Caliper divides integer sums as integers: 28 where this gives
 * 28.5).
 */
final class AvgOperator implements Operator {
  private final String attribute;

  AvgOperator(String attribute) {
    this.attribute = attribute;
  }

  @Override
  public String column() {
    return "avg#" + attribute;
  }

  @Override
  public OperatorState newState() {
    return new MeasureState(attribute, false);
  }

  @Override
  public Object result(OperatorState state, GroupContext context) {
    MeasureState m = (MeasureState) state;
    return m.isEmpty() ? null : m.mean();
  }
}
