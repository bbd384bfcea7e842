package dev.profold.collector.query;

/**
 * {@code stddev(x)}: population standard deviation of {@code x}, the square root of {@code
 * variance(x)}; column {@code stddev#x}. Not in Caliper.
 */
final class StddevOperator implements Operator {
  private final String attribute;

  StddevOperator(String attribute) {
    this.attribute = attribute;
  }

  @Override
  public String column() {
    return "stddev#" + attribute;
  }

  @Override
  public OperatorState newState() {
    return new MeasureState(attribute, false);
  }

  @Override
  public Object result(OperatorState state, GroupContext context) {
    MeasureState m = (MeasureState) state;
    return m.isEmpty() ? null : Math.sqrt(m.variance());
  }
}
