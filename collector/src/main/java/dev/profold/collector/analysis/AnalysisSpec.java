package dev.profold.collector.analysis;

/**
 * Settings of the region analysis (config key {@code analysis}, docs/imbalance.md).
 *
 * @param imbalanceRuntimeShare a node is significant only if imb / runtime exceeds this (0..1)
 * @param imbalanceLeafShare a node is significant only if imb / sumImb exceeds this (0..1)
 * @param topNodes nodes per service exposed for imbalance, and as many for waiting (1..1000)
 */
public record AnalysisSpec(double imbalanceRuntimeShare, double imbalanceLeafShare, int topNodes) {
  /** Default of {@link #topNodes()}. */
  public static final int DEFAULT_TOP_NODES = 10;

  /** Largest {@link #topNodes()}. */
  public static final int MAX_TOP_NODES = 1000;

  public AnalysisSpec {
    if (!(imbalanceRuntimeShare >= 0 && imbalanceRuntimeShare <= 1)) {
      throw new IllegalArgumentException(
          "imbalance_runtime_share must be in 0..1, was " + imbalanceRuntimeShare);
    }
    if (!(imbalanceLeafShare >= 0 && imbalanceLeafShare <= 1)) {
      throw new IllegalArgumentException(
          "imbalance_leaf_share must be in 0..1, was " + imbalanceLeafShare);
    }
    if (topNodes < 1 || topNodes > MAX_TOP_NODES) {
      throw new IllegalArgumentException(
          "top_nodes must be in 1.." + MAX_TOP_NODES + ", was " + topNodes);
    }
  }

  /** The defaults: 0.1%, 70%, 10 nodes. */
  public static AnalysisSpec defaults() {
    return new AnalysisSpec(
        RegionImbalance.DEFAULT_RUNTIME_SHARE,
        RegionImbalance.DEFAULT_LEAF_SHARE,
        DEFAULT_TOP_NODES);
  }
}
