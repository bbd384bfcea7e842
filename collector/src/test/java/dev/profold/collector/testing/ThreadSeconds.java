package dev.profold.collector.testing;

import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The seconds per overhead class the collector has counted for one thread group ({@code
 * profold_thread_seconds_total} in a /metrics text), and the share of one class over a window
 * between two readings: what a Prometheus {@code rate} of the counters would give.
 */
public final class ThreadSeconds {
  private static final Pattern CLASS_SECONDS =
      Pattern.compile(
          "profold_thread_seconds_total\\{class=\"([a-z_]+)\",instance=\"[^\"]*\","
              + "service=\"([^\"]*)\",thread_group=\"([^\"]*)\"\\} (\\S+)");

  private ThreadSeconds() {}

  /** Seconds per class of thread group {@code group} of {@code service}, over its instances. */
  public static Map<String, Double> of(String metrics, String service, String group) {
    Map<String, Double> out = new HashMap<>();
    Matcher m = CLASS_SECONDS.matcher(metrics);
    while (m.find()) {
      if (m.group(2).equals(service) && m.group(3).equals(group)) {
        out.merge(m.group(1), Double.parseDouble(m.group(4)), Double::sum);
      }
    }
    return out;
  }

  /** The share of {@code cls} in all the seconds counted between {@code from} and {@code to}. */
  public static double share(Map<String, Double> from, Map<String, Double> to, String cls) {
    double all = 0;
    for (Map.Entry<String, Double> e : to.entrySet()) {
      all += e.getValue() - from.getOrDefault(e.getKey(), 0.0);
    }
    return (to.getOrDefault(cls, 0.0) - from.getOrDefault(cls, 0.0)) / all;
  }
}
