package dev.profold.sinks.prometheus;

/** Turns client-chosen names into valid Prometheus metric-name parts. */
public final class MetricNames {
  private MetricNames() {}

  /**
   * Replaces every character outside {@code [a-zA-Z0-9_]} with {@code _} and prefixes a leading
   * digit with {@code _}; "db.query" becomes "db_query".
   */
  public static String sanitize(String name) {
    StringBuilder sb = new StringBuilder(name.length() + 1);
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
      boolean digit = c >= '0' && c <= '9';
      if (i == 0 && digit) {
        sb.append('_');
      }
      sb.append(ok || digit ? c : '_');
    }
    return sb.length() == 0 ? "_" : sb.toString();
  }
}
