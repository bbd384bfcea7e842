package dev.profold.collector.query;

/**
 * What an {@link Operator} sees of other groups while computing one group's result: the
 * whole-result step after all records are in. States returned are read-only for the caller.
 */
public interface GroupContext {

  /** The merge of this operator's states over all groups (for percent of the total). */
  OperatorState total();

  /**
   * The merge of this group's state and those of all groups below it on the nested path: groups
   * whose key is the same except that their path extends this group's path.
   */
  OperatorState inclusive();
}
