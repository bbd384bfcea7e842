package dev.profold.collector.query;

/**
 * {@code variance(x)}: population variance of {@code x} (sum of squares over count minus the
 * squared mean, as Caliper computes it; small negative rounding results clamp to 0); column {@code
 * variance#x}.
 */
final class VarianceOperator implements Operator {
  private final String attribute;

  VarianceOperator(String attribute) {
    this.attribute = attribute;
  }

  @Override
  public String column() {
    return "variance#" + attribute;
  }

  @Override
  public OperatorState newState() {
    return new MeasureState(attribute, false);
  }

  @Override
  public Object result(OperatorState state, GroupContext context) {
    MeasureState m = (MeasureState) state;
    return m.isEmpty() ? null : m.variance();
  }
}
