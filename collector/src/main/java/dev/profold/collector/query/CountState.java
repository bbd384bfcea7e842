package dev.profold.collector.query;

import java.util.Map;

/**
 * Number of records of a group, for {@code count()} and {@code scale_count(s)}. A record that
 * carries an integral {@code count} attribute (a pre-aggregated record, as Caliper writes them)
 * counts as that many records.
 */
final class CountState implements OperatorState {
  /** The attribute holding the record count of pre-aggregated records. */
  static final String COUNT = "count";

  private long count;

  @Override
  public void add(Map<String, ?> record) {
    Object v = record.get(COUNT);
    count += Values.isIntegral(v) ? ((Number) v).longValue() : 1;
  }

  @Override
  public void merge(OperatorState other) {
    count += ((CountState) other).count;
  }

  @Override
  public void exportTo(Map<String, Object> record) {
    record.put(COUNT, count);
  }

  long count() {
    return count;
  }
}
