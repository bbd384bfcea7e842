package dev.profold.sinks.snapshot;

/**
 * What the collector knows of one live source (a service instance's current incarnation).
 *
 * @param service service name
 * @param instance instance name
 * @param host host name, may be empty
 * @param runtimeVersion runtime version, may be empty
 * @param sdkVersion client library version, may be empty
 * @param processStartUnixNanos when the process started
 * @param lastSequence last applied sequence number
 * @param missingDeltas deltas skipped by sequence gaps in this incarnation
 * @param clientCpuNanos profiling CPU time the client reported, cumulative
 * @param clientEventsDropped events the client reported dropping, cumulative
 * @param clientBytesHeld memory the client last reported holding
 */
public record SourceSnapshot(
    String service,
    String instance,
    String host,
    String runtimeVersion,
    String sdkVersion,
    long processStartUnixNanos,
    long lastSequence,
    long missingDeltas,
    long clientCpuNanos,
    long clientEventsDropped,
    long clientBytesHeld) {}
