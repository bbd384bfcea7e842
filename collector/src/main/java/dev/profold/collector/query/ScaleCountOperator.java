package dev.profold.collector.query;

/** {@code scale_count(s)}: the number of records times {@code s}; column {@code scount}. */
final class ScaleCountOperator implements Operator {
  private final double scale;

  ScaleCountOperator(double scale) {
    this.scale = scale;
  }

  @Override
  public String column() {
    return "scount";
  }

  @Override
  public String definition() {
    return column() + "*" + scale;
  }

  @Override
  public OperatorState newState() {
    return new CountState();
  }

  @Override
  public Object result(OperatorState state, GroupContext context) {
    long n = ((CountState) state).count();
    return n > 0 ? scale * (double) n : null;
  }
}
