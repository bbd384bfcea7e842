package dev.profold.collector.query;

/**
 * {@code ratio(a, b[, s])} (column {@code ratio#a/b}) and {@code inclusive_ratio(a, b[, s])}
 * (column {@code iratio#a/b}): {@code s * sum(a) / sum(b)}, each sum over the records that have the
 * attribute; {@code s} defaults to 1. Empty unless both attributes occur in the group; a zero
 * denominator gives infinity (or NaN for 0/0), as in Caliper.
 */
final class RatioOperator implements Operator {
  private final String numerator;
  private final String denominator;
  private final double scale;
  private final boolean inclusive;

  RatioOperator(String numerator, String denominator, double scale, boolean inclusive) {
    this.numerator = numerator;
    this.denominator = denominator;
    this.scale = scale;
    this.inclusive = inclusive;
  }

  @Override
  public String column() {
    return (inclusive ? "iratio#" : "ratio#") + numerator + "/" + denominator;
  }

  @Override
  public String definition() {
    return column() + "*" + scale;
  }

  @Override
  public OperatorState newState() {
    return new PairState(numerator, denominator);
  }

  @Override
  public boolean inclusive() {
    return inclusive;
  }

  @Override
  public Object result(OperatorState state, GroupContext context) {
    PairState p = (PairState) (inclusive ? context.inclusive() : state);
    if (p.first.isEmpty() || p.second.isEmpty()) {
      return null;
    }
    return scale * (p.first.sumAsDouble() / p.second.sumAsDouble());
  }
}
