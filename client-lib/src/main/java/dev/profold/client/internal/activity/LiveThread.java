package dev.profold.client.internal.activity;

/**
 * One live thread as seen at an interval's end.
 *
 * @param id {@link Thread#getId()}
 * @param name its name (its group is the normalised name)
 * @param cpuNanos its CPU time since it started, or -1 when unknown
 */
public record LiveThread(long id, String name, long cpuNanos) {}
