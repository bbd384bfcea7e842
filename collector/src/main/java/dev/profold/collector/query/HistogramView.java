package dev.profold.collector.query;

import dev.profold.reduce.ExpHistogram;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The result of {@code histogram(x)}: the occupied buckets of a base-2 exponential histogram in
 * ascending order of value. Immutable.
 *
 * @param scale the histogram's scale (bucket base {@code 2^(2^-scale)})
 * @param buckets occupied buckets, ascending; exact zeros form a bucket {@code [0, 0]}
 */
public record HistogramView(int scale, List<Bucket> buckets) {

  /** Copies the list. */
  public HistogramView {
    buckets = List.copyOf(buckets);
  }

  /**
   * One bucket: values {@code v} with {@code lower < v <= upper} (for negative buckets {@code lower
   * <= v < upper}; for the zero bucket exactly 0).
   *
   * @param lower lower boundary
   * @param upper upper boundary
   * @param count number of values
   */
  public record Bucket(double lower, double upper, long count) {}

  /** A view of {@code h}. */
  static HistogramView of(ExpHistogram h) {
    List<Bucket> out = new ArrayList<>();
    int scale = h.scale();
    for (int i = h.negativeOffset() + h.negativeSize() - 1; i >= h.negativeOffset(); i--) {
      long c = h.negativeCount(i);
      if (c > 0) {
        out.add(
            new Bucket(
                -ExpHistogram.lowerBoundary(i + 1, scale),
                -ExpHistogram.lowerBoundary(i, scale),
                c));
      }
    }
    if (h.zeroCount() > 0) {
      out.add(new Bucket(0, 0, h.zeroCount()));
    }
    for (int i = h.positiveOffset(); i < h.positiveOffset() + h.positiveSize(); i++) {
      long c = h.positiveCount(i);
      if (c > 0) {
        out.add(
            new Bucket(
                ExpHistogram.lowerBoundary(i, scale), ExpHistogram.lowerBoundary(i + 1, scale), c));
      }
    }
    return new HistogramView(scale, out);
  }

  /** Compact text for tables: {@code (lower,upper]:count} per bucket. */
  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder();
    for (Bucket b : buckets) {
      if (sb.length() > 0) {
        sb.append(' ');
      }
      if (b.lower() == 0 && b.upper() == 0) {
        sb.append("0:").append(b.count());
      } else {
        sb.append(String.format(Locale.ROOT, "(%.6g,%.6g]:%d", b.lower(), b.upper(), b.count()));
      }
    }
    return sb.toString();
  }
}
