package dev.profold.collector.config;

import java.nio.file.Path;
import java.util.List;

/**
 * Where and what the collector archives (closed intervals as JSON Lines, see {@code
 * IntervalArchive}).
 *
 * @param directory the archive directory; null when archiving is off
 * @param schemes the schemes archived; empty for all
 */
public record ArchiveSpec(Path directory, List<String> schemes) {
  public ArchiveSpec {
    schemes = List.copyOf(schemes);
  }

  /** No archive (the default). */
  public static ArchiveSpec off() {
    return new ArchiveSpec(null, List.of());
  }

  public boolean enabled() {
    return directory != null;
  }
}
