package dev.profold.collector.query;

/**
 * An aggregation operator of CalQL: the plug-in interface every operator implements.
 *
 * <p>An operator is immutable and describes one output column. Per group, the evaluator keeps a
 * mutable {@link OperatorState} from {@link #newState()}, adds the group's records to it and merges
 * states of partial results; merge is exact and associative, so evaluating parts of the input and
 * merging gives the state of the whole. The final value comes from {@link #result} once all groups
 * are complete: operators whose value depends on other groups (percent of the total, inclusive
 * values along a nested path) read them through the {@link GroupContext}.
 */
public interface Operator {

  /** The output column, named as Caliper names it: {@code count}, {@code sum#x}, ... */
  String column();

  /**
   * What this operator computes, for telling operators apart: two operators with the same column
   * and the same definition are one column; the same column with different definitions is refused
   * when the query is bound. Operators whose column names all their arguments keep the default.
   */
  default String definition() {
    return column();
  }

  /** A new empty per-group state. */
  OperatorState newState();

  /**
   * Whether {@link #result} uses {@link GroupContext#inclusive()}; the evaluator then also creates
   * the groups of path prefixes that had no records of their own, as Caliper does.
   */
  default boolean inclusive() {
    return false;
  }

  /**
   * The value of this column for one group, or null when the group has none (the column is then
   * left empty).
   *
   * @param state the group's own state, from {@link #newState()} of this operator
   * @param context the other groups' states of this operator, for the whole-result step
   */
  Object result(OperatorState state, GroupContext context);
}
