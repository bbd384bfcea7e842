package dev.profold.collector.ingest;

/**
 * Identifies a service instance across its incarnations.
 *
 * @param service service name
 * @param instance instance name
 */
public record SourceKey(String service, String instance) {
  @Override
  public String toString() {
    return service + "/" + instance;
  }
}
