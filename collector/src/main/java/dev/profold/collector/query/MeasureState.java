package dev.profold.collector.query;

import dev.profold.reduce.Aggregate;
import dev.profold.reduce.ExpHistogram;
import java.util.Map;

/**
 * The values of one attribute in a group, as a {@link Aggregate}: count of values, sum, min, max,
 * sum of squares and, when asked for, a histogram. Records without the attribute, or with a
 * non-numeric value, add nothing; a {@link PreAggregated} value is merged.
 */
final class MeasureState implements OperatorState {
  private final String attribute;
  private final boolean withHistogram;
  private final Aggregate aggregate = new Aggregate();
  private boolean integral = true;

  MeasureState(String attribute, boolean withHistogram) {
    this.attribute = attribute;
    this.withHistogram = withHistogram;
  }

  @Override
  public void add(Map<String, ?> record) {
    Object v = record.get(attribute);
    if (v instanceof PreAggregated p) {
      p.mergeInto(aggregate, withHistogram);
      integral &= p.integral();
    } else if (v instanceof Number n) {
      double d = n.doubleValue();
      if (!Double.isFinite(d)) {
        return;
      }
      if (withHistogram && !aggregate.saturated()) {
        aggregate.record(d);
      } else {
        // Merged as a state of one value: its count saturates where a record's would wrap.
        aggregate.mergeMoments(1, d, d, d, d * d);
        if (withHistogram) {
          aggregate.histogram().record(d, 1);
        }
      }
      integral &= Values.isIntegral(n);
    }
  }

  @Override
  public void merge(OperatorState other) {
    MeasureState o = (MeasureState) other;
    if (withHistogram && o.withHistogram) {
      aggregate.merge(o.aggregate);
    } else {
      Aggregate a = o.aggregate;
      aggregate.mergeMoments(a.count(), a.sum(), a.min(), a.max(), a.sumOfSquares());
    }
    integral &= o.integral;
  }

  @Override
  public void exportTo(Map<String, Object> record) {
    if (aggregate.isEmpty()) {
      return;
    }
    PreAggregated mine = PreAggregated.of(aggregate, integral, withHistogram);
    record.merge(
        attribute,
        mine,
        (old, neu) -> old instanceof PreAggregated p && p.hasHistogram() ? old : neu);
  }

  long count() {
    return aggregate.count();
  }

  boolean isEmpty() {
    return aggregate.isEmpty();
  }

  /** The sum: a Long when every value was an integer (and the sum is exact), else a Double. */
  Number sum() {
    return exact(aggregate.sum());
  }

  Number min() {
    return exact(aggregate.min());
  }

  Number max() {
    return exact(aggregate.max());
  }

  double sumAsDouble() {
    return aggregate.sum();
  }

  double mean() {
    return aggregate.mean();
  }

  /** Population variance. */
  double variance() {
    return aggregate.variance();
  }

  double rawMin() {
    return aggregate.min();
  }

  double rawMax() {
    return aggregate.max();
  }

  ExpHistogram histogram() {
    return aggregate.histogram();
  }

  /**
   * Whether the histogram holds every value, and at least one: false when some values came without
   * one (a state merged from its moments only), since a quantile of the others would be wrong.
   */
  boolean histogramComplete() {
    long inHistogram = aggregate.histogram().totalCount();
    return withHistogram && inHistogram > 0 && inHistogram == aggregate.count();
  }

  private Number exact(double d) {
    if (integral && Math.abs(d) < 0x1p53) {
      return (long) d;
    }
    return d;
  }
}
