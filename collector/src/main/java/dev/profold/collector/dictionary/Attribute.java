package dev.profold.collector.dictionary;

/**
 * A globally interned attribute. Two clients' attributes are the same when name, type, role and
 * unit all match.
 *
 * @param id global id, > 0
 * @param name attribute name
 * @param type value type
 * @param measurement true for a measurement (aggregated), false for a dimension (key)
 * @param unit Prometheus base-unit word or empty
 */
public record Attribute(
    int id, String name, AttributeType type, boolean measurement, String unit) {}
