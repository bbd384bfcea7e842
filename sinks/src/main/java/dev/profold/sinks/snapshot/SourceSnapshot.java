package dev.profold.sinks.snapshot;

import java.util.List;
import java.util.Map;

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
 * @param clientContexts contexts the client last reported interning (0: not reported)
 * @param clientContextsLimit the client's limit of contexts (0: not reported)
 * @param clientDictionaryBytes bytes of dictionary definitions the client last reported holding (0:
 *     not reported)
 * @param clientDictionaryBytesLimit the client's bound of its dictionary, bytes (0: not reported)
 * @param clientMisuse times the client reported its API misused or a limit biting, by kind,
 *     cumulative
 * @param clientExport how the client's export went: its counters cumulative, its levels the last
 *     reported ({@link ClientExport#NONE} when it does not report them)
 * @param threadActivity where its thread groups spent their time, largest first; empty when the
 *     client does not report it
 * @param ioUnobservedNanos time during which the client did not observe I/O waits while it observed
 *     the other classes (its I/O events off), cumulative; -1 when it does not report it
 * @param labels the labels the source gave itself ({@code PROFOLD_LABELS}), by name
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
    long clientBytesHeld,
    long clientContexts,
    long clientContextsLimit,
    long clientDictionaryBytes,
    long clientDictionaryBytesLimit,
    Map<String, Long> clientMisuse,
    ClientExport clientExport,
    List<ThreadActivitySnapshot> threadActivity,
    long ioUnobservedNanos,
    Map<String, String> labels) {
  public SourceSnapshot {
    clientMisuse = Map.copyOf(clientMisuse);
    labels = Map.copyOf(labels);
    threadActivity = List.copyOf(threadActivity);
  }
}
