package dev.profold.collector.query;

/** {@code count()}: the number of records in the group; column {@code count}. */
final class CountOperator implements Operator {

  @Override
  public String column() {
    return "count";
  }

  @Override
  public OperatorState newState() {
    return new CountState();
  }

  @Override
  public Object result(OperatorState state, GroupContext context) {
    long n = ((CountState) state).count();
    return n > 0 ? n : null;
  }
}
