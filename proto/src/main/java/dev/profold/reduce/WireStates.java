package dev.profold.reduce;

import dev.profold.proto.v1.ExponentialHistogram;
import dev.profold.proto.v1.MetricState;

/**
 * Conversion between {@link Aggregate} and the wire's {@link MetricState}. Used at the edges
 * (client export, tests, forwarding); the collector's hot path decodes wire states into primitive
 * arrays instead.
 */
public final class WireStates {
  private WireStates() {}

  /** The wire form of {@code a}; an empty aggregate has count 0 and zero extremes. */
  public static MetricState toProto(Aggregate a) {
    MetricState.Builder b =
        MetricState.newBuilder()
            .setCount(a.count())
            .setSum(a.sum())
            .setSumOfSquares(a.sumOfSquares());
    if (!a.isEmpty()) {
      b.setMin(a.min()).setMax(a.max());
    }
    if (a.histogram().totalCount() > 0) {
      b.setHistogram(toProto(a.histogram()));
    }
    return b.build();
  }

  /** The wire form of {@code h}. */
  public static ExponentialHistogram toProto(ExpHistogram h) {
    ExponentialHistogram.Builder b =
        ExponentialHistogram.newBuilder().setScale(h.scale()).setZeroCount(h.zeroCount());
    if (h.positiveSize() > 0) {
      ExponentialHistogram.Buckets.Builder pb =
          ExponentialHistogram.Buckets.newBuilder().setOffset(h.positiveOffset());
      for (int i = 0; i < h.positiveSize(); i++) {
        pb.addCounts(h.positiveCount(h.positiveOffset() + i));
      }
      b.setPositive(pb);
    }
    if (h.negativeSize() > 0) {
      ExponentialHistogram.Buckets.Builder nb =
          ExponentialHistogram.Buckets.newBuilder().setOffset(h.negativeOffset());
      for (int i = 0; i < h.negativeSize(); i++) {
        nb.addCounts(h.negativeCount(h.negativeOffset() + i));
      }
      b.setNegative(nb);
    }
    return b.build();
  }

  /** Merges a (validated) wire state into {@code into}. */
  public static void mergeInto(MetricState state, Aggregate into) {
    into.mergeMoments(
        state.getCount(), state.getSum(), state.getMin(), state.getMax(), state.getSumOfSquares());
    if (state.hasHistogram()) {
      ExponentialHistogram h = state.getHistogram();
      long[] pos = toArray(h.getPositive());
      long[] neg = toArray(h.getNegative());
      into.histogram()
          .mergeRaw(
              h.getScale(),
              h.getZeroCount(),
              h.getPositive().getOffset(),
              pos,
              0,
              pos.length,
              h.getNegative().getOffset(),
              neg,
              0,
              neg.length);
    }
  }

  private static long[] toArray(ExponentialHistogram.Buckets b) {
    long[] out = new long[b.getCountsCount()];
    for (int i = 0; i < out.length; i++) {
      out[i] = b.getCounts(i);
    }
    return out;
  }
}
