package dev.profold.client.internal.export;

/**
 * What one delta tells the collector about the export (the {@code export_*} fields of {@code
 * ClientOverhead}): counts since the previous report, with those of dropped deltas reported again,
 * and the buffer's level and bound now. Immutable.
 *
 * @param reconnects Push streams opened after an earlier one failed
 * @param deltasMerged deltas folded into an older, never-sent delta to make room in the buffer
 * @param bufferedBytes serialized bytes of the deltas held until acknowledged
 * @param bufferLimitBytes the buffer's bound ({@link ExporterConfig#maxBufferBytes()})
 */
public record ExportReport(
    long reconnects, long deltasMerged, long bufferedBytes, long bufferLimitBytes) {}
