package dev.profold.collector.query;

/**
 * {@code percent_total(x)} (column {@code percent_total#x}) and {@code inclusive_percent_total(x)}
 * (column {@code ipercent_total#x}): 100 times the group's sum of {@code x} (inclusive: with all
 * groups below it) over the sum of {@code x} over all groups. Empty when the group has no {@code x}
 * or the total is not positive, as in Caliper.
 */
final class PercentTotalOperator implements Operator {
  private final String attribute;
  private final boolean inclusive;

  PercentTotalOperator(String attribute, boolean inclusive) {
    this.attribute = attribute;
    this.inclusive = inclusive;
  }

  @Override
  public String column() {
    return (inclusive ? "ipercent_total#" : "percent_total#") + attribute;
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
    double total = ((MeasureState) context.total()).sumAsDouble();
    if (m.isEmpty() || !(total > 0)) {
      return null;
    }
    return 100.0 * m.sumAsDouble() / total;
  }
}
