package dev.profold.collector.query;

import java.util.Map;

/**
 * The mutable per-group state of one {@link Operator}. Not thread-safe.
 *
 * <p>Laws: {@link #merge} is exact, associative and commutative (up to floating-point rounding of
 * sums of non-integers, exactly for integers below 2^53), and an empty state is its identity. A
 * state that reads a pre-aggregated value ({@link PreAggregated}) merges it as it would merge the
 * state that produced it.
 */
public interface OperatorState {

  /** Adds one record that passed WHERE and belongs to this state's group. */
  void add(Map<String, ?> record);

  /** Adds everything {@code other} holds; {@code other} comes from the same operator. */
  void merge(OperatorState other);

  /**
   * Writes this state into a partial-result record so that the same operator adding that record to
   * an empty state reproduces this state: the record count as {@code count}, measured attributes as
   * {@link PreAggregated} values.
   */
  void exportTo(Map<String, Object> record);
}
