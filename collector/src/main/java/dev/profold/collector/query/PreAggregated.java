package dev.profold.collector.query;

import dev.profold.reduce.Aggregate;
import dev.profold.reduce.ExpHistogram;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A pre-aggregated attribute value: the mergeable state (count, sum, min, max, sum of squares and
 * optionally a base-2 exponential histogram) of the values an earlier stage folded. Operators merge
 * it exactly where they would add a raw value, so the output of {@link PartialResult#toRecords()}
 * can be the input of the next stage.
 *
 * <p>In JSON it is an object {@code {"count":n, "sum":s, "min":a, "max":b, "sumsq":q}} with an
 * optional {@code "histogram": {"scale":k, "zero":z, "positive":{"offset":o, "counts":[...]},
 * "negative":{...}}}. Immutable: it holds a private copy of the state.
 */
public final class PreAggregated {
  private final Aggregate state;
  private final boolean integral;
  private final boolean withHistogram;

  private PreAggregated(Aggregate state, boolean integral, boolean withHistogram) {
    this.state = state;
    this.integral = integral;
    this.withHistogram = withHistogram;
  }

  /**
   * A copy of {@code state}.
   *
   * @param integral whether every folded value was an integer (sums print as integers then)
   * @param withHistogram whether the histogram of {@code state} is meaningful
   */
  public static PreAggregated of(Aggregate state, boolean integral, boolean withHistogram) {
    Aggregate copy = new Aggregate();
    if (withHistogram) {
      copy.copyFrom(state);
    } else {
      copy.mergeMoments(state.count(), state.sum(), state.min(), state.max(), state.sumOfSquares());
    }
    return new PreAggregated(copy, integral, withHistogram);
  }

  /** Adds this state to {@code target}, with the histogram when asked and available. */
  void mergeInto(Aggregate target, boolean histogram) {
    if (histogram && withHistogram) {
      target.merge(state);
    } else {
      target.mergeMoments(
          state.count(), state.sum(), state.min(), state.max(), state.sumOfSquares());
    }
  }

  public long count() {
    return state.count();
  }

  public double sum() {
    return state.sum();
  }

  /** Smallest value, or +Infinity when empty. */
  public double min() {
    return state.min();
  }

  /** Largest value, or -Infinity when empty. */
  public double max() {
    return state.max();
  }

  public double sumOfSquares() {
    return state.sumOfSquares();
  }

  /** Whether every folded value was an integer. */
  public boolean integral() {
    return integral;
  }

  /** Whether the state carries a histogram. */
  public boolean hasHistogram() {
    return withHistogram;
  }

  /** The JSON form as nested maps and lists (see the class comment). */
  public Map<String, Object> toMap() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("count", state.count());
    m.put("sum", number(state.sum()));
    if (state.count() > 0) {
      m.put("min", number(state.min()));
      m.put("max", number(state.max()));
    }
    m.put("sumsq", number(state.sumOfSquares()));
    if (withHistogram) {
      ExpHistogram h = state.histogram();
      Map<String, Object> hm = new LinkedHashMap<>();
      hm.put("scale", h.scale());
      hm.put("zero", h.zeroCount());
      if (h.positiveSize() > 0) {
        hm.put("positive", side(h.positiveOffset(), h.positiveSize(), h, true));
      }
      if (h.negativeSize() > 0) {
        hm.put("negative", side(h.negativeOffset(), h.negativeSize(), h, false));
      }
      m.put("histogram", hm);
    }
    return m;
  }

  private Object number(double d) {
    return integral && Math.abs(d) < 0x1p53 ? (Object) (long) d : (Object) d;
  }

  private static Map<String, Object> side(int offset, int size, ExpHistogram h, boolean positive) {
    Map<String, Object> m = new LinkedHashMap<>();
    List<Long> counts = new ArrayList<>(size);
    for (int i = offset; i < offset + size; i++) {
      counts.add(positive ? h.positiveCount(i) : h.negativeCount(i));
    }
    m.put("offset", offset);
    m.put("counts", counts);
    return m;
  }

  /**
   * Builds a state from its parts, checking them.
   *
   * @param histogram the histogram, or null when the state has none
   * @throws IllegalArgumentException when the parts contradict each other
   */
  static PreAggregated of(
      long count,
      double sum,
      double min,
      double max,
      double sumOfSquares,
      ExpHistogram histogram,
      boolean integral) {
    if (count < 0) {
      throw new IllegalArgumentException("count must be >= 0, was " + count);
    }
    if (count > 0 && !(min <= max)) {
      throw new IllegalArgumentException("min must be <= max");
    }
    if (histogram != null && histogram.totalCount() != count) {
      throw new IllegalArgumentException(
          "histogram holds " + histogram.totalCount() + " values but count is " + count);
    }
    Aggregate a = histogram == null ? new Aggregate() : new Aggregate(histogram);
    a.mergeMoments(count, sum, min, max, sumOfSquares);
    return new PreAggregated(a, integral, histogram != null);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PreAggregated p
        && integral == p.integral
        && withHistogram == p.withHistogram
        && state.equals(p.state);
  }

  @Override
  public int hashCode() {
    return Objects.hash(state, integral, withHistogram);
  }

  /** Compact text for tables. */
  @Override
  public String toString() {
    return "{count="
        + state.count()
        + " sum="
        + Values.text(number(state.sum()))
        + (state.count() > 0
            ? " min="
                + Values.text(number(state.min()))
                + " max="
                + Values.text(number(state.max()))
            : "")
        + "}";
  }
}
