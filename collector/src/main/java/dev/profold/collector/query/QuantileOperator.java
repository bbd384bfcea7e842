package dev.profold.collector.query;

import dev.profold.reduce.ExpHistogram;
import java.math.BigDecimal;

/**
 * {@code quantile(x, q)}: an estimate of the {@code q}-quantile (0 &lt;= q &lt;= 1) of the values
 * of {@code x} from their exponential histogram; column {@code p<100q>#x}, e.g. {@code p99#x} for
 * {@code q = 0.99}. Not in Caliper.
 *
 * <p>Estimate: {@code q = 0} and {@code q = 1} give the exact min and max. Otherwise the value of
 * nearest rank {@code k = max(1, ceil(q * count))} is located in its bucket (negative buckets from
 * the most negative, then zeros, then positive buckets) and placed inside it by geometric
 * interpolation (the buckets are exponential), a bucket of {@code c} values holding them at
 * fractions {@code (j - 0.5) / c}; the estimate is clamped to [min, max]. The relative error is
 * below the bucket's relative width {@code 2^(2^-scale) - 1}: 6.6e-5% at the starting scale 20,
 * 0.27% at scale 8, 2.2% at scale 5 (a histogram lowers its scale to keep at most 160 buckets).
 */
final class QuantileOperator implements Operator {
  private final String attribute;
  private final double q;
  private final String column;

  /**
   * @param qText {@code q} as written, which names the column ({@code 0.990} gives {@code p99}); a
   *     number written in a form other than a plain decimal ({@code 0.5d}, {@code 0x1p-1}) is named
   *     by its value
   */
  QuantileOperator(String attribute, double q, String qText) {
    this.attribute = attribute;
    this.q = q;
    this.column = "p" + percent(qText, q) + "#" + attribute;
  }

  /**
   * {@code 100 q} as the column names it: as written ({@code 0.990} gives {@code 99}), unless that
   * has more digits than a double holds; then {@code q}'s value, in scientific notation when it is
   * that small ({@code 1e-30} gives {@code 1E-28}). A literal such as {@code 1e-999999999}, which
   * reads as 0, would otherwise name a column of a billion characters.
   */
  private static String percent(String qText, double q) {
    BigDecimal p = decimal(qText, q).movePointRight(2).stripTrailingZeros();
    if (p.precision() > 17 || p.scale() > 17) {
      p = BigDecimal.valueOf(q).movePointRight(2).stripTrailingZeros();
    }
    return p.scale() > 17 ? p.toString() : p.toPlainString();
  }

  private static BigDecimal decimal(String qText, double q) {
    try {
      return new BigDecimal(qText);
    } catch (NumberFormatException e) {
      return BigDecimal.valueOf(q);
    }
  }

  @Override
  public String column() {
    return column;
  }

  @Override
  public OperatorState newState() {
    return new MeasureState(attribute, true);
  }

  @Override
  public Object result(OperatorState state, GroupContext context) {
    MeasureState m = (MeasureState) state;
    if (!m.histogramComplete()) {
      return null; // no histogram, or one of part of the values only
    }
    return estimate(m.histogram(), m.rawMin(), m.rawMax(), q);
  }

  /**
   * {@code x}, or the integer it is within a relative 1e-12 of: {@code q} is the double nearest the
   * decimal written, so {@code 0.07 * 100} computes as 7.000000000000001, and its ceiling would be
   * rank 8 where the decimal means 7.
   */
  static double nearInteger(double x) {
    double r = Math.rint(x);
    return Math.abs(x - r) <= 1e-12 * Math.max(1.0, Math.abs(x)) ? r : x;
  }

  /** The estimate described in the class comment; {@code h} is not empty. */
  static double estimate(ExpHistogram h, double min, double max, double q) {
    if (q <= 0) {
      return min;
    }
    if (q >= 1) {
      return max;
    }
    double rank = Math.max(1.0, Math.ceil(nearInteger(q * (double) h.totalCount())));
    int scale = h.scale();
    long below = 0;
    for (int i = h.negativeOffset() + h.negativeSize() - 1; i >= h.negativeOffset(); i--) {
      long c = h.negativeCount(i);
      if (c > 0 && below + c >= rank) {
        double far = ExpHistogram.lowerBoundary(i + 1, scale);
        double near = ExpHistogram.lowerBoundary(i, scale);
        return clamp(-far * Math.pow(near / far, within(rank, below, c)), min, max);
      }
      below += c;
    }
    long zeros = h.zeroCount();
    if (zeros > 0 && below + zeros >= rank) {
      return clamp(0.0, min, max);
    }
    below += zeros;
    for (int i = h.positiveOffset(); i < h.positiveOffset() + h.positiveSize(); i++) {
      long c = h.positiveCount(i);
      if (c > 0 && below + c >= rank) {
        double lo = ExpHistogram.lowerBoundary(i, scale);
        double hi = ExpHistogram.lowerBoundary(i + 1, scale);
        return clamp(lo * Math.pow(hi / lo, within(rank, below, c)), min, max);
      }
      below += c;
    }
    return max;
  }

  /** Position in (0, 1) of the {@code rank}-th value inside a bucket of {@code c} values. */
  private static double within(double rank, long below, long c) {
    return (rank - (double) below - 0.5) / (double) c;
  }

  private static double clamp(double v, double min, double max) {
    return Math.max(min, Math.min(max, v));
  }
}
