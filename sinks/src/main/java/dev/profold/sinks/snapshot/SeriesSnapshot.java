package dev.profold.sinks.snapshot;

import java.util.List;

/**
 * One group of a scheme at one moment: its label values (in the order of {@link
 * SchemeSnapshot#labelNames()}) and the state of one measurement.
 *
 * @param labelValues values of the scheme's labels, same order as its label names
 * @param measure which measurement the state is of
 * @param state the aggregated state
 */
public record SeriesSnapshot(List<String> labelValues, Measure measure, StateSnapshot state) {
  public SeriesSnapshot {
    labelValues = List.copyOf(labelValues);
  }
}
