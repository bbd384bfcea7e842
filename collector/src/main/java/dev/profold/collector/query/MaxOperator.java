package dev.profold.collector.query;

/**
 * {@code max(x)} (column {@code max#x}) and {@code inclusive_max(x)} (column {@code imax#x}): the
 * largest value of {@code x}, for the inclusive variant over the group and every group below it.
 */
final class MaxOperator implements Operator {
  private final String attribute;
  private final boolean inclusive;

  MaxOperator(String attribute, boolean inclusive) {
    this.attribute = attribute;
    this.inclusive = inclusive;
  }

  @Override
  public String column() {
    return (inclusive ? "imax#" : "max#") + attribute;
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
    return m.isEmpty() ? null : m.max();
  }
}
