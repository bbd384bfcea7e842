package dev.profold.collector.query;

/**
 * {@code histogram(x)}: the base-2 exponential histogram of the values of {@code x} (the
 * OpenTelemetry / Prometheus native bucket scheme, merged exactly) as a {@link HistogramView};
 * column {@code histogram#x}. Not in Caliper.
 */
final class HistogramOperator implements Operator {
  private final String attribute;

  HistogramOperator(String attribute) {
    this.attribute = attribute;
  }

  @Override
  public String column() {
    return "histogram#" + attribute;
  }

  @Override
  public OperatorState newState() {
    return new MeasureState(attribute, true);
  }

  @Override
  public Object result(OperatorState state, GroupContext context) {
    MeasureState m = (MeasureState) state;
    return m.histogramComplete() ? HistogramView.of(m.histogram()) : null;
  }
}
