package dev.profold.collector.query;

/**
 * {@code scale(x, s)} (column {@code scale#x}) and {@code inclusive_scale(x, s)} (column {@code
 * iscale#x}): the sum of {@code x} times {@code s}, floating point.
 */
final class ScaleOperator implements Operator {
  private final String attribute;
  private final double scale;
  private final boolean inclusive;

  ScaleOperator(String attribute, double scale, boolean inclusive) {
    this.attribute = attribute;
    this.scale = scale;
    this.inclusive = inclusive;
  }

  @Override
  public String column() {
    return (inclusive ? "iscale#" : "scale#") + attribute;
  }

  @Override
  public String definition() {
    return column() + "*" + scale;
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
    return m.isEmpty() ? null : scale * m.sumAsDouble();
  }
}
