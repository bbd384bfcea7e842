package dev.profold.collector.query;

/**
 * One ORDER BY criterion. Immutable.
 *
 * @param name an output column: attribute, operator column such as {@code sum#x}, or alias
 * @param descending true for DESC
 * @param position 1-based column in the query text
 */
public record SortKey(String name, boolean descending, int position) {}
