package dev.profold.collector.query;

import java.util.Map;

/**
 * Number of records of a group, for {@code count()} and {@code scale_count(s)}. A record that
 * carries an integral {@code count} attribute (a pre-aggregated record, as Caliper writes them)
 * counts as that many records (a negative one as one record). The count saturates at {@code
 * Long.MAX_VALUE} rather than wrap.
 */
final class CountState implements OperatorState {
  /** The attribute holding the record count of pre-aggregated records. */
  static final String COUNT = "count";

  private long count;

  @Override
  public void add(Map<String, ?> record) {
    Object v = record.get(COUNT);
    long n = Values.isIntegral(v) ? ((Number) v).longValue() : 1;
    count = add(count, n < 0 ? 1 : n); // a negative count is no count
  }

  @Override
  public void merge(OperatorState other) {
    count = add(count, ((CountState) other).count);
  }

  /** {@code a + b} for counts (not negative), at most {@code Long.MAX_VALUE}. */
  private static long add(long a, long b) {
    long r = a + b;
    return r < 0 ? Long.MAX_VALUE : r;
  }

  @Override
  public void exportTo(Map<String, Object> record) {
    record.put(COUNT, count);
  }

  long count() {
    return count;
  }
}
