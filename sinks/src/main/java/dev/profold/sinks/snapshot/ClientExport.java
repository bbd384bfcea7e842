package dev.profold.sinks.snapshot;

/**
 * How a client's export of its deltas went, as it reported (the {@code export_*} fields of {@code
 * ClientOverhead}). Immutable.
 *
 * @param reconnects Push streams the client opened after an earlier one failed (a counter)
 * @param deltasMerged deltas the client folded into older ones because its buffer of unacknowledged
 *     deltas was full: intervals whose resolution was lost, not their totals (a counter)
 * @param bufferedBytes bytes of deltas it held unacknowledged (a level)
 * @param bufferLimitBytes its bound of them (a level); 0 when the client does not report these
 */
public record ClientExport(
    long reconnects, long deltasMerged, long bufferedBytes, long bufferLimitBytes) {
  /** Nothing reported. */
  public static final ClientExport NONE = new ClientExport(0, 0, 0, 0);

  /** Counts are 0 or more. */
  public ClientExport {
    if (reconnects < 0 || deltasMerged < 0 || bufferedBytes < 0 || bufferLimitBytes < 0) {
      throw new IllegalArgumentException(
          "export counts are 0 or more, got "
              + reconnects
              + ", "
              + deltasMerged
              + ", "
              + bufferedBytes
              + ", "
              + bufferLimitBytes);
    }
  }

  /**
   * These totals followed by {@code next}, one delta's report: its counters added (held at {@link
   * Long#MAX_VALUE} rather than wrapping), its levels taken.
   */
  public ClientExport then(ClientExport next) {
    return new ClientExport(
        saturatedAdd(reconnects, next.reconnects),
        saturatedAdd(deltasMerged, next.deltasMerged),
        next.bufferedBytes,
        next.bufferLimitBytes);
  }

  /** True when the client reports its export (a buffer bound was sent). */
  public boolean reported() {
    return bufferLimitBytes > 0;
  }

  private static long saturatedAdd(long a, long b) {
    long sum = a + b;
    return sum < 0 ? Long.MAX_VALUE : sum;
  }
}
