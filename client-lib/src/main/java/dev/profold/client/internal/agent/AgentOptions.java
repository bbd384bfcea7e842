package dev.profold.client.internal.agent;

import dev.profold.client.ProfoldConfig;
import dev.profold.client.ThreadAggregation;
import dev.profold.client.internal.jfr.JfrSettings;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The agent's settings: the client library's ({@link ProfoldConfig}, same environment variables and
 * system properties) plus the JFR ones, with the {@code -javaagent:...=options} string winning over
 * both. Options are {@code key=value} pairs separated by commas; the values of {@code labels} and
 * {@code aggregation.groups} are lists with commas of their own, so a pair whose key is not an
 * option continues the list before it ({@code labels=region=eu,zone=b}). Immutable.
 *
 * @param config the client library's settings
 * @param jfr what JFR records
 * @param jfrEnabled false to run the client library without JFR (manual regions only)
 * @param timeThreadStarts whether to time {@code Thread.start()} (with {@code threads} on), which
 *     puts the timing hook on the bootstrap class path: the JVM then shares only the boot loader's
 *     classes from its class data archive (CDS, AOT cache) and says so on stderr
 */
public record AgentOptions(
    ProfoldConfig config, JfrSettings jfr, boolean jfrEnabled, boolean timeThreadStarts) {
  private static final Pattern DURATION = Pattern.compile("(\\d+)(us|ms|s|m|h)?");

  /** Agent option → system property, for the client library's settings. */
  private static final Map<String, String> CLIENT = new LinkedHashMap<>();

  /** Agent option → system property (environment: upper case, dots as underscores), for JFR. */
  private static final Map<String, String> JFR = new LinkedHashMap<>();

  static {
    CLIENT.put("endpoint", "profold.endpoint");
    CLIENT.put("service", "profold.service");
    CLIENT.put("instance", "profold.instance");
    CLIENT.put("interval", "profold.interval");
    CLIENT.put("aggregation", "profold.thread.aggregation");
    CLIENT.put("aggregation.groups", "profold.thread.aggregation.groups");
    CLIENT.put("labels", "profold.labels");
    CLIENT.put("enabled", "profold.enabled");
    CLIENT.put("max.buffer.bytes", "profold.max.buffer.bytes");
    CLIENT.put("max.contexts", "profold.max.contexts");
    CLIENT.put("max.message.bytes", "profold.max.message.bytes");
    CLIENT.put("max.backoff", "profold.max.backoff");
    JFR.put("jfr", "profold.jfr");
    JFR.put("sample.period", "profold.jfr.sample.period");
    JFR.put("depth", "profold.jfr.depth");
    JFR.put("threshold.lock", "profold.jfr.threshold.lock");
    JFR.put("threshold.wait", "profold.jfr.threshold.wait");
    JFR.put("threshold.io", "profold.jfr.threshold.io");
    JFR.put("cpu", "profold.jfr.cpu");
    JFR.put("allocation", "profold.jfr.allocation");
    JFR.put("runtime", "profold.jfr.runtime");
    JFR.put("threads", "profold.jfr.threads");
    JFR.put("io", "profold.jfr.io");
    JFR.put("io.quiet", "profold.jfr.io.quiet");
    JFR.put("threads.timing", "profold.jfr.threads.timing");
  }

  /** This process's settings with {@code agentArgs} (may be null or empty) on top. */
  public static AgentOptions parse(String agentArgs) {
    return parse(agentArgs, System.getenv(), System.getProperties());
  }

  /**
   * Settings from {@code agentArgs} over system properties {@code props} over environment {@code
   * env}.
   *
   * @throws IllegalArgumentException naming the option, the bad value and what is expected
   */
  public static AgentOptions parse(String agentArgs, Map<String, String> env, Properties props) {
    Properties merged = new Properties();
    for (String name : props.stringPropertyNames()) {
      merged.setProperty(name, props.getProperty(name));
    }
    options(agentArgs).forEach((k, v) -> merged.setProperty(property(k), v));
    ProfoldConfig config = clientConfig(env, merged);
    JfrSettings d = JfrSettings.defaults();
    JfrSettings jfr;
    try {
      jfr =
          new JfrSettings(
              duration(env, merged, "sample.period", d.samplePeriod()),
              integer(env, merged, "depth", d.maxDepth()),
              duration(env, merged, "threshold.lock", d.lockThreshold()),
              duration(env, merged, "threshold.wait", d.waitThreshold()),
              duration(env, merged, "threshold.io", d.ioThreshold()),
              bool(env, merged, "cpu", d.cpu()),
              bool(env, merged, "allocation", d.allocation()),
              bool(env, merged, "runtime", d.runtime()),
              bool(env, merged, "threads", d.threads()),
              bool(env, merged, "io", d.io()),
              duration(env, merged, "io.quiet", d.ioQuiet()));
    } catch (IllegalArgumentException e) {
      throw named(e, env, merged);
    }
    return new AgentOptions(
        config, jfr, bool(env, merged, "jfr", true), bool(env, merged, "threads.timing", true));
  }

  /**
   * {@code e}, a JFR setting's range refused ("depth: 1..2048 frames, was 0"), named as the user
   * gave it: the option and its property, or the environment variable, and the value written.
   */
  private static IllegalArgumentException named(
      IllegalArgumentException e, Map<String, String> env, Properties props) {
    String m = String.valueOf(e.getMessage());
    int colon = m.indexOf(": ");
    String option = colon < 0 ? null : m.substring(0, colon);
    String[] given = option != null && JFR.containsKey(option) ? setting(env, props, option) : null;
    if (given == null) {
      return e;
    }
    return new IllegalArgumentException(
        given[1] + ": '" + given[0] + "' is refused: " + m.substring(colon + 2), e);
  }

  /**
   * The client library's settings; an error about one names it as the JFR settings' errors do,
   * {@code option (property)}, since agent options arrive as properties.
   */
  private static ProfoldConfig clientConfig(Map<String, String> env, Properties props) {
    try {
      return ProfoldConfig.fromEnvironment(env, props);
    } catch (IllegalArgumentException e) {
      String message = String.valueOf(e.getMessage());
      for (Map.Entry<String, String> c : CLIENT.entrySet()) {
        if (message.startsWith(c.getValue() + ": ")) {
          throw new IllegalArgumentException(
              c.getKey() + " (" + c.getValue() + ")" + message.substring(c.getValue().length()), e);
        }
      }
      throw e;
    }
  }

  /** The options string as option → value, in order. */
  static Map<String, String> options(String agentArgs) {
    Map<String, String> out = new LinkedHashMap<>();
    if (agentArgs == null || agentArgs.isBlank()) {
      return out;
    }
    String last = null;
    for (String pair : agentArgs.split(",", -1)) {
      if (pair.isBlank()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String key = eq < 0 ? pair.trim() : pair.substring(0, eq).trim();
      if (continuesList(last, key, eq < 0 ? "" : pair.substring(eq + 1))) {
        out.put(last, out.get(last) + "," + pair.trim());
        continue;
      }
      if (!CLIENT.containsKey(key) && !JFR.containsKey(key)) {
        throw new IllegalArgumentException(
            "agent option '"
                + key
                + "' is unknown; options are "
                + String.join(", ", CLIENT.keySet())
                + ", "
                + String.join(", ", JFR.keySet()));
      }
      if (eq < 0) {
        throw new IllegalArgumentException("agent option '" + key + "' needs a value (key=value)");
      }
      out.put(key, pair.substring(eq + 1).trim());
      last = key;
    }
    return out;
  }

  /**
   * Whether the pair {@code key=value} after option {@code last} is one more element of that
   * option's list ({@code labels}, {@code aggregation.groups}): when its key is no option, or, in
   * {@code aggregation.groups}, when its key names a profiling option ({@code io=SUM}) and its
   * value is a thread aggregation mode, which no profiling option takes. The client library's
   * options ({@code service}, ...) always stay options.
   */
  private static boolean continuesList(String last, String key, String value) {
    if (!"labels".equals(last) && !"aggregation.groups".equals(last)) {
      return false;
    }
    if (!CLIENT.containsKey(key) && !JFR.containsKey(key)) {
      return true;
    }
    if (!"aggregation.groups".equals(last) || CLIENT.containsKey(key)) {
      return false;
    }
    for (ThreadAggregation mode : ThreadAggregation.values()) {
      if (mode.name().equalsIgnoreCase(value.trim())) {
        return true;
      }
    }
    return false;
  }

  private static String property(String option) {
    String p = CLIENT.get(option);
    return p != null ? p : JFR.get(option);
  }

  private static String environmentName(String property) {
    return property.toUpperCase(Locale.ROOT).replace('.', '_');
  }

  /** The JFR setting's value and the name to report it under, or null when not set. */
  private static String[] setting(Map<String, String> env, Properties props, String option) {
    String p = JFR.get(option);
    String v = props.getProperty(p);
    if (v != null) {
      return new String[] {v, option + " (" + p + ")"};
    }
    String e = environmentName(p);
    v = env.get(e);
    return v == null ? null : new String[] {v, e};
  }

  private static Duration duration(
      Map<String, String> env, Properties props, String option, Duration dflt) {
    String[] s = setting(env, props, option);
    if (s == null) {
      return dflt;
    }
    Matcher m = DURATION.matcher(s[0].trim());
    if (!m.matches() || (m.group(2) == null && !m.group(1).equals("0"))) {
      throw new IllegalArgumentException(
          s[1] + ": '" + s[0] + "' is not a duration such as 0, 500us, 20ms, 1s or 5m");
    }
    String unit = m.group(2) == null ? "ms" : m.group(2);
    try {
      long n = Long.parseLong(m.group(1));
      Duration d =
          switch (unit) {
            case "us" -> Duration.ofNanos(Math.multiplyExact(n, 1000L));
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            default -> Duration.ofHours(n);
          };
      long unused = d.toNanos(); // JFR takes nanoseconds: refuse what does not fit
      return d;
    } catch (NumberFormatException | ArithmeticException e) {
      throw new IllegalArgumentException(
          s[1] + ": '" + s[0] + "' is out of range; give a duration such as 500us, 20ms, 1s or 5m",
          e);
    }
  }

  private static int integer(Map<String, String> env, Properties props, String option, int dflt) {
    String[] s = setting(env, props, option);
    if (s == null) {
      return dflt;
    }
    try {
      return Integer.parseInt(s[0].trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(s[1] + ": '" + s[0] + "' is not a whole number", e);
    }
  }

  private static boolean bool(Map<String, String> env, Properties props, String option, boolean d) {
    String[] s = setting(env, props, option);
    if (s == null) {
      return d;
    }
    String t = s[0].trim().toLowerCase(Locale.ROOT);
    if (!t.equals("true") && !t.equals("false")) {
      throw new IllegalArgumentException(s[1] + ": '" + s[0] + "' is not true or false");
    }
    return t.equals("true");
  }
}
