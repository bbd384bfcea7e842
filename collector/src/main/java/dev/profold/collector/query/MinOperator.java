package dev.profold.collector.query;

/**
 * {@code min(x)} (column {@code min#x}) and {@code inclusive_min(x)} (column {@code imin#x}): the
 * smallest value of {@code x}, for the inclusive variant over the group and every group below it.
 */
final class MinOperator implements Operator {
  private final String attribute;
  private final boolean inclusive;

  MinOperator(String attribute, boolean inclusive) {
    this.attribute = attribute;
    this.inclusive = inclusive;
  }

  @Override
  public String column() {
    return (inclusive ? "imin#" : "min#") + attribute;
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
    return m.isEmpty() ? null : m.min();
  }
}
