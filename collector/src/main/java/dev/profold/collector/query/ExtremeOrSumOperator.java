package dev.profold.collector.query;

/**
 * {@code sum(x)}, {@code min(x)}, {@code max(x)} (columns {@code sum#x}, {@code min#x}, {@code
 * max#x}) and their inclusive variants {@code inclusive_sum}, {@code inclusive_min}, {@code
 * inclusive_max} (columns {@code inclusive#x}, {@code imin#x}, {@code imax#x}): one statistic of
 * the values of {@code x}, for an inclusive variant over the group and every group below it on the
 * nested path. Sums are integers when all values were integers.
 */
final class ExtremeOrSumOperator implements Operator {
  /** Which statistic, with its column prefixes. */
  enum Statistic {
    SUM("sum#", "inclusive#"),
    MIN("min#", "imin#"),
    MAX("max#", "imax#");

    private final String prefix;
    private final String inclusivePrefix;

    Statistic(String prefix, String inclusivePrefix) {
      this.prefix = prefix;
      this.inclusivePrefix = inclusivePrefix;
    }

    Object of(MeasureState m) {
      return switch (this) {
        case SUM -> m.sum();
        case MIN -> m.min();
        case MAX -> m.max();
      };
    }
  }

  private final Statistic statistic;
  private final String attribute;
  private final boolean inclusive;

  ExtremeOrSumOperator(Statistic statistic, String attribute, boolean inclusive) {
    this.statistic = statistic;
    this.attribute = attribute;
    this.inclusive = inclusive;
  }

  @Override
  public String column() {
    return (inclusive ? statistic.inclusivePrefix : statistic.prefix) + attribute;
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
    return m.isEmpty() ? null : statistic.of(m);
  }
}
