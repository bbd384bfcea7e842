package dev.profold.collector.query;

/** One entry of a SELECT list: {@code *}, an attribute or an operator call. Immutable. */
public sealed interface SelectItem {

  /** {@code *}: every key attribute and every operator (or every attribute, without grouping). */
  record All(int position) implements SelectItem {}

  /**
   * An attribute to show.
   *
   * @param name attribute label
   * @param alias column header from {@code AS}, or null
   * @param position 1-based column in the query text
   */
  record Attribute(String name, String alias, int position) implements SelectItem {}

  /**
   * An aggregation to compute and show.
   *
   * @param call the operator call
   * @param alias column header from {@code AS}, or null
   */
  record Aggregation(OperatorCall call, String alias) implements SelectItem {}
}
