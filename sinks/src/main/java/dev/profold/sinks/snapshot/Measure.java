package dev.profold.sinks.snapshot;

/**
 * A measured attribute as sinks see it.
 *
 * @param name attribute name as sent by clients, for example {@code time}
 * @param unit Prometheus base-unit word ({@code seconds}, {@code bytes}) or empty
 */
public record Measure(String name, String unit) {}
