package dev.profold.collector.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code threads} scheme of {@code deploy/collector.yaml} (commented out there), the scheme
 * that keeps per-thread detail: tests that need it take its query from the deployed file, so that
 * the example users uncomment is the one tested.
 */
public final class ThreadsScheme {
  /** Its CalQL query, on one line. */
  public static final String QUERY = readQuery(Path.of("../deploy/collector.yaml"));

  private ThreadsScheme() {}

  private static String readQuery(Path file) {
    List<String> lines;
    try {
      lines = Files.readAllLines(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<String> parts = new ArrayList<>();
    boolean inScheme = false;
    boolean inQuery = false;
    for (String line : lines) {
      if (line.equals("  # - name: threads")) {
        inScheme = true;
      } else if (inScheme && line.equals("  #   query: >-")) {
        inQuery = true;
      } else if (inQuery && line.startsWith("  #     ")) {
        parts.add(line.substring("  #     ".length()).strip());
      } else if (inQuery) {
        break;
      }
    }
    if (parts.isEmpty()) {
      throw new IllegalStateException("no threads scheme with a query in " + file);
    }
    return String.join(" ", parts);
  }
}
