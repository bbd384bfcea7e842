package dev.profold.collector.query;

/**
 * A LET definition {@code target = function(args)}: a derived attribute added to each record before
 * WHERE and grouping. Immutable; see {@link LetFunctions} for the functions.
 *
 * @param target the new attribute's label
 * @param function the derivation
 * @param position 1-based column of the target in the query text
 */
public record LetBinding(String target, OperatorCall function, int position) {}
