package dev.profold.collector.query;

/**
 * {@code any(x)}: some value of {@code x} in the group (the first one added; after a merge, the
 * left side's when it has one); column {@code any#x}. Meant for attributes that are constant within
 * a group.
 */
final class AnyOperator implements Operator {
  private final String attribute;

  AnyOperator(String attribute) {
    this.attribute = attribute;
  }

  @Override
  public String column() {
    return "any#" + attribute;
  }

  @Override
  public OperatorState newState() {
    return new AnyState(attribute);
  }

  @Override
  public Object result(OperatorState state, GroupContext context) {
    return ((AnyState) state).value();
  }
}
