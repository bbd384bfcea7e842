package dev.profold.collector.ingest;

import java.util.Map;

/**
 * The descriptive part of a source's identity, kept as sent.
 *
 * @param incarnation random id of this process start, non-zero
 * @param processStartUnixNanos process start time
 * @param host host name or empty
 * @param pid process id or 0
 * @param runtimeVersion runtime version or empty
 * @param sdkVersion client library version or empty
 * @param labels free-form source labels
 */
public record SourceInfo(
    long incarnation,
    long processStartUnixNanos,
    String host,
    long pid,
    String runtimeVersion,
    String sdkVersion,
    Map<String, String> labels) {
  public SourceInfo {
    labels = Map.copyOf(labels);
  }
}
