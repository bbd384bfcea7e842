package dev.profold.collector.ingest;

import dev.profold.sinks.snapshot.ClassTimes;

/**
 * One validated {@code ThreadGroupActivity} of a delta: where a thread group's time went in the
 * delta's interval. The classes add up to {@code wallNanos}; {@code cpuMinNanos <= cpuMaxNanos <=
 * cpuSumNanos}.
 *
 * @param group normalised thread group name
 * @param threads threads counted
 * @param wallNanos their wall time in the interval
 * @param classes time per overhead class
 * @param cpuMinNanos least CPU time of one thread
 * @param cpuSumNanos CPU time of all threads
 * @param cpuMaxNanos most CPU time of one thread
 */
public record GroupActivity(
    String group,
    int threads,
    long wallNanos,
    ClassTimes classes,
    long cpuMinNanos,
    long cpuSumNanos,
    long cpuMaxNanos) {}
