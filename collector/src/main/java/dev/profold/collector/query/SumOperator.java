package dev.profold.collector.query;

/**
 * {@code sum(x)} (column {@code sum#x}) and {@code inclusive_sum(x)} (column {@code inclusive#x}):
 * the sum of the values of {@code x}, for the inclusive variant over the group and every group
 * below it on the nested path. An integer when all values were integers.
 */
final class SumOperator implements Operator {
  private final String attribute;
  private final boolean inclusive;

  SumOperator(String attribute, boolean inclusive) {
    this.attribute = attribute;
    this.inclusive = inclusive;
  }

  @Override
  public String column() {
    return (inclusive ? "inclusive#" : "sum#") + attribute;
  }

  @Override
  public OperatorState newState() {
    return new MeasureState(attribute, false);
  }

  @Override
  public boolean inclusive() {
    return inclusive;
  }

  @Override
  public Object result(OperatorState state, GroupContext context) {
    MeasureState m = (MeasureState) (inclusive ? context.inclusive() : state);
    return m.isEmpty() ? null : m.sum();
  }
}
