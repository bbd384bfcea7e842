package dev.profold.client;

import dev.profold.client.internal.export.Durations;
import dev.profold.client.internal.record.ThreadGroups;
import dev.profold.client.internal.runtime.HostName;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How Profold runs in this process. Build one with {@link #builder()} or read it from the
 * environment with {@link #fromEnvironment()}; immutable and thread-safe.
 *
 * <table>
 *   <caption>Settings, their environment variables and system properties</caption>
 *   <tr><th>setting</th><th>environment</th><th>system property</th><th>default</th></tr>
 *   <tr><td>endpoint</td><td>PROFOLD_ENDPOINT</td><td>profold.endpoint</td>
 *       <td>127.0.0.1:7763</td></tr>
 *   <tr><td>service</td><td>PROFOLD_SERVICE</td><td>profold.service</td>
 *       <td>unknown_service</td></tr>
 *   <tr><td>instance</td><td>PROFOLD_INSTANCE</td><td>profold.instance</td>
 *       <td>host name and process id</td></tr>
 *   <tr><td>interval</td><td>PROFOLD_INTERVAL</td><td>profold.interval</td><td>10s</td></tr>
 *   <tr><td>threadAggregation</td><td>PROFOLD_THREAD_AGGREGATION</td>
 *       <td>profold.thread.aggregation</td><td>SUM</td></tr>
 *   <tr><td>threadAggregationByGroup</td><td>PROFOLD_THREAD_AGGREGATION_GROUPS
 *       (group=MODE,...)</td><td>profold.thread.aggregation.groups</td><td>none</td></tr>
 *   <tr><td>labels</td><td>PROFOLD_LABELS (k=v,k2=v2)</td><td>profold.labels</td><td>none</td></tr>
 *   <tr><td>enabled</td><td>PROFOLD_ENABLED</td><td>profold.enabled</td><td>true</td></tr>
 *   <tr><td>maxBufferBytes</td><td>PROFOLD_MAX_BUFFER_BYTES</td>
 *       <td>profold.max.buffer.bytes</td><td>8 MiB</td></tr>
 *   <tr><td>maxContexts</td><td>PROFOLD_MAX_CONTEXTS</td>
 *       <td>profold.max.contexts</td><td>16384</td></tr>
 *   <tr><td>maxMessageBytes</td><td>PROFOLD_MAX_MESSAGE_BYTES</td>
 *       <td>profold.max.message.bytes</td><td>16 MiB</td></tr>
 *   <tr><td>maxBackoff</td><td>PROFOLD_MAX_BACKOFF</td>
 *       <td>profold.max.backoff</td><td>30s</td></tr>
 * </table>
 *
 * <p>System properties win over environment variables.
 */
public final class ProfoldConfig {
  private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h)");
  private static final Pattern LABEL = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");

  /** host:port; the host a name, an IPv4 address or a bracketed IPv6 address. */
  private static final Pattern ENDPOINT =
      Pattern.compile(
          "([A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?\\.?|\\[[0-9A-Fa-f:.]+(?:%[A-Za-z0-9_.-]+)?\\])"
              + ":([0-9]+)");

  /** The one scheme an endpoint may carry: gRPC's DNS resolver, spelled out. */
  private static final String DNS_SCHEME = "dns:///";

  private static final Duration MAX_INTERVAL = Duration.ofNanos(Long.MAX_VALUE);

  /** The service of a process that does not name one (shared by every such process). */
  public static final String DEFAULT_SERVICE = "unknown_service";

  /** The exporter's first wait after a failed attempt, and so the least {@link #maxBackoff()}. */
  public static final Duration MIN_BACKOFF = Duration.ofMillis(500);

  private static final Duration MAX_BACKOFF = Duration.ofHours(1);

  private final String endpoint;
  private final String service;
  private final String instance;
  private final Duration interval;
  private final ThreadAggregation threadAggregation;
  private final Map<String, ThreadAggregation> threadAggregationByGroup;
  private final Map<String, String> labels;
  private final boolean enabled;
  private final String disabledBy;
  private final long maxBufferBytes;
  private final int maxCellsPerThread;
  private final int maxContexts;
  private final long maxMessageBytes;
  private final Duration maxBackoff;

  private ProfoldConfig(Builder b) {
    endpoint = b.endpoint;
    service = b.service;
    instance = b.instance != null ? b.instance : defaultInstance();
    interval = b.interval;
    threadAggregation = b.threadAggregation;
    threadAggregationByGroup = Map.copyOf(b.threadAggregationByGroup);
    labels = Map.copyOf(b.labels);
    if (b.enabled != null) {
      enabled = b.enabled;
      disabledBy = enabled ? null : b.disabledBy != null ? b.disabledBy : "the configuration";
    } else {
      String off = switchedOffBy(System::getenv, System::getProperty);
      enabled = off == null;
      disabledBy = off;
    }
    maxBufferBytes = b.maxBufferBytes;
    maxCellsPerThread = b.maxCellsPerThread;
    maxContexts = b.maxContexts;
    maxMessageBytes = b.maxMessageBytes;
    maxBackoff = b.maxBackoff;
  }

  /** The host name (at most 200 characters of it) and the pid: within the 256 of an instance. */
  private static String defaultInstance() {
    return defaultInstance(HostName::local, () -> ProcessHandle.current().pid());
  }

  /**
   * {@code host-pid}; where either cannot be read (a security manager refusing the environment or
   * the process handle), {@code localhost} or a random number in its place, so that building a
   * configuration never throws into the application.
   */
  static String defaultInstance(
      java.util.function.Supplier<String> host, java.util.function.LongSupplier pid) {
    String name;
    try {
      name = host.get();
    } catch (RuntimeException e) {
      name = "localhost";
    }
    if (name.length() > 200) {
      name = name.substring(0, 200);
    }
    String id;
    try {
      id = Long.toString(pid.getAsLong());
    } catch (RuntimeException e) {
      id = "r" + Long.toHexString(java.util.concurrent.ThreadLocalRandom.current().nextLong());
    }
    return name + "-" + id;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Settings from this process's environment and system properties. */
  public static ProfoldConfig fromEnvironment() {
    return fromEnvironment(System.getenv(), System.getProperties());
  }

  /**
   * Settings from the given environment and system properties (properties win). Values are trimmed.
   *
   * @throws IllegalArgumentException naming the variable or property, the bad value and what is
   *     expected
   */
  public static ProfoldConfig fromEnvironment(Map<String, String> env, Properties props) {
    Builder b = builder();
    Given v;
    if ((v = setting(env, props, "PROFOLD_ENDPOINT", "profold.endpoint")) != null) {
      v.apply(b::endpoint);
    }
    if ((v = setting(env, props, "PROFOLD_SERVICE", "profold.service")) != null) {
      v.apply(b::service);
    }
    if ((v = setting(env, props, "PROFOLD_INSTANCE", "profold.instance")) != null) {
      v.apply(b::instance);
    }
    if ((v = setting(env, props, "PROFOLD_INTERVAL", "profold.interval")) != null) {
      Duration interval = parseDuration(v);
      v.apply(x -> b.interval(interval));
    }
    if ((v = setting(env, props, "PROFOLD_THREAD_AGGREGATION", "profold.thread.aggregation"))
        != null) {
      ThreadAggregation mode = mode(v, v.value());
      b.threadAggregation(mode);
    }
    if ((v =
            setting(
                env,
                props,
                "PROFOLD_THREAD_AGGREGATION_GROUPS",
                "profold.thread.aggregation.groups"))
        != null) {
      for (String pair : v.value().split(",", -1)) {
        if (pair.isBlank()) {
          continue;
        }
        int eq = pair.lastIndexOf('=');
        if (eq <= 0) {
          throw v.refused(
              "'" + pair + "' is not group=MODE (e.g. http-exec-*=KEY,worker-*=CALLTREE)", null);
        }
        ThreadAggregation parsed = mode(v, pair.substring(eq + 1).trim());
        String group = pair.substring(0, eq).trim();
        v.apply(x -> b.threadAggregation(group, parsed));
      }
    }
    if ((v = setting(env, props, "PROFOLD_LABELS", "profold.labels")) != null) {
      for (String pair : v.value().split(",", -1)) {
        if (pair.isBlank()) {
          continue;
        }
        int eq = pair.indexOf('=');
        if (eq <= 0) {
          throw v.refused("'" + pair + "' is not key=value (e.g. region=eu-west,zone=b)", null);
        }
        String key = pair.substring(0, eq).trim();
        String value = pair.substring(eq + 1).trim();
        v.apply(x -> b.label(key, value));
      }
    }
    if ((v = setting(env, props, "PROFOLD_ENABLED", "profold.enabled")) != null) {
      String t = v.value().toLowerCase(Locale.ROOT);
      if (!t.equals("true") && !t.equals("false")) {
        throw v.refused("'" + v.raw() + "' is not true or false", null);
      }
      b.enabled(t.equals("true"));
      b.disabledBy = v.name() + "=" + t;
    } else {
      b.enabled(true); // these settings, not this process's, decide
    }
    if ((v = setting(env, props, "PROFOLD_MAX_BUFFER_BYTES", "profold.max.buffer.bytes")) != null) {
      long bytes = byteSize(v);
      v.apply(x -> b.maxBufferBytes(bytes));
    }
    if ((v = setting(env, props, "PROFOLD_MAX_CONTEXTS", "profold.max.contexts")) != null) {
      int contexts = (int) wholeNumber(v, "", Integer.MAX_VALUE);
      v.apply(x -> b.maxContexts(contexts));
    }
    if ((v = setting(env, props, "PROFOLD_MAX_BACKOFF", "profold.max.backoff")) != null) {
      Duration wait = parseDuration(v);
      v.apply(x -> b.maxBackoff(wait));
    }
    if ((v = setting(env, props, "PROFOLD_MAX_MESSAGE_BYTES", "profold.max.message.bytes"))
        != null) {
      long bytes = byteSize(v);
      v.apply(x -> b.maxMessageBytes(bytes));
    }
    return b.build();
  }

  /**
   * A setting as given: the name of the variable or property it came from, its value as written and
   * trimmed.
   */
  private record Given(String name, String raw) {
    String value() {
      return raw.trim();
    }

    /** An error naming the setting: {@code NAME: problem}. */
    IllegalArgumentException refused(String problem, Throwable cause) {
      return new IllegalArgumentException(name + ": " + problem, cause);
    }

    /**
     * Gives the trimmed value to a builder setter; what it refuses is refused naming the setting.
     */
    void apply(java.util.function.Consumer<String> setter) {
      try {
        setter.accept(value());
      } catch (Refused e) {
        String was =
            e.was == null || e.was.equals(value()) || e.was.equals("'" + value() + "'")
                ? ""
                : ", was " + e.was;
        throw refused("'" + raw + "' is refused: it must " + e.rule + was, e);
      }
    }
  }

  private static ThreadAggregation mode(Given v, String mode) {
    try {
      return ThreadAggregation.valueOf(mode.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw v.refused("'" + mode + "' is not one of NONE, SUM, SET, KEY, CALLTREE", e);
    }
  }

  /** A byte size as the collector's config file writes it: {@code 1048576}, {@code 64KiB}. */
  private static final java.util.regex.Pattern BYTE_SIZE =
      java.util.regex.Pattern.compile("([0-9]+)(KiB|MiB|GiB)?");

  /**
   * {@code v} as a number of bytes, written as a whole number or with {@code KiB}, {@code MiB} or
   * {@code GiB} (as {@code limits.max_message_bytes} is in the collector's file, whose value the
   * docs say to copy here), or an error naming its setting.
   */
  private static long byteSize(Given v) {
    java.util.regex.Matcher m = BYTE_SIZE.matcher(v.value());
    if (!m.matches()) {
      throw v.refused(
          "'"
              + v.raw()
              + "' is not a byte size: a whole number of bytes, or one with KiB, MiB or GiB"
              + " (16MiB)",
          null);
    }
    if (m.group(2) == null) {
      return wholeNumber(v, " of bytes", Long.MAX_VALUE);
    }
    int shift =
        switch (m.group(2)) {
          case "KiB" -> 10;
          case "MiB" -> 20;
          default -> 30;
        };
    try {
      return Math.multiplyExact(Long.parseLong(m.group(1)), 1L << shift);
    } catch (ArithmeticException | NumberFormatException e) {
      throw v.refused("'" + v.raw() + "' is out of range: at most " + Long.MAX_VALUE + " bytes", e);
    }
  }

  /** {@code v} as a whole number of at most {@code max}, or an error naming its setting. */
  private static long wholeNumber(Given v, String unit, long max) {
    long n;
    try {
      n = Long.parseLong(v.value());
    } catch (NumberFormatException e) {
      throw v.refused(
          "'"
              + v.raw()
              + "' is not a whole number"
              + unit
              + (v.value().matches("[0-9]+") ? " that fits in 64 bits" : " (digits only)"),
          e);
    }
    if (n > max) {
      throw v.refused("'" + v.raw() + "' is out of range: at most " + max, null);
    }
    if (n < Integer.MIN_VALUE && max <= Integer.MAX_VALUE) {
      // Refused here, as written: cast to an int first, -4294967232 would read as 64.
      throw v.refused("'" + v.raw() + "' is out of range: it must not be negative", null);
    }
    return n;
  }

  private static Given setting(Map<String, String> env, Properties props, String e, String p) {
    String v = props.getProperty(p);
    if (v != null) {
      return new Given(p, v);
    }
    v = env.get(e);
    return v == null ? null : new Given(e, v);
  }

  private static Duration parseDuration(Given v) {
    Matcher m = DURATION.matcher(v.value());
    if (!m.matches()) {
      throw v.refused("'" + v.raw() + "' is not a duration such as 500ms, 10s, 5m or 1h", null);
    }
    try { // in milliseconds, with overflow checked, in nanoseconds too
      long n = Long.parseLong(m.group(1));
      long millis =
          switch (m.group(2)) {
            case "ms" -> n;
            case "s" -> Math.multiplyExact(n, 1_000L);
            case "m" -> Math.multiplyExact(n, 60_000L);
            default -> Math.multiplyExact(n, 3_600_000L);
          };
      Math.multiplyExact(millis, 1_000_000L); // the runtime schedules in nanoseconds
      return Duration.ofMillis(millis);
    } catch (ArithmeticException | NumberFormatException e) {
      throw v.refused(
          "'" + v.raw() + "' is out of range; give a duration such as 500ms, 10s, 5m or 1h", e);
    }
  }

  /**
   * What a builder setter refuses: an {@link IllegalArgumentException} saying {@code setter: must
   * <rule>, was <was>}; the parts are kept for errors that name a variable instead.
   */
  private static final class Refused extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    final String rule;
    final String was; // null: not worth repeating

    Refused(String setter, String rule, String was) {
      super(setter + ": must " + rule + (was == null ? "" : ", was " + was));
      this.rule = rule;
      this.was = was;
    }
  }

  /** Collector address, {@code host:port}. */
  public String endpoint() {
    return endpoint;
  }

  public String service() {
    return service;
  }

  public String instance() {
    return instance;
  }

  /** How often a delta is sent. */
  public Duration interval() {
    return interval;
  }

  public ThreadAggregation threadAggregation() {
    return threadAggregation;
  }

  /** Per thread group (normalised name, e.g. {@code http-exec-*}) overrides of the mode. */
  public Map<String, ThreadAggregation> threadAggregationByGroup() {
    return threadAggregationByGroup;
  }

  /** Labels of the source (deployment region, version, ...). */
  public Map<String, String> labels() {
    return labels;
  }

  /** False turns Profold into a no-op. */
  public boolean enabled() {
    return enabled;
  }

  /**
   * Why {@link #enabled} is false, for the start's log line ({@code "PROFOLD_ENABLED=false"}, say);
   * null when enabled.
   */
  String disabledBy() {
    return disabledBy;
  }

  /**
   * What the operator's switch ({@code profold.enabled}, else {@code PROFOLD_ENABLED}) turns
   * Profold off by, as a line's worth of text; null when unset, {@code true}, or unreadable (a
   * security manager refusing it: the configuration given stands).
   */
  static String switchedOffBy(
      java.util.function.UnaryOperator<String> env,
      java.util.function.UnaryOperator<String> props) {
    String name = "profold.enabled";
    String v;
    try {
      v = props.apply(name);
      if (v == null) {
        name = "PROFOLD_ENABLED";
        v = env.apply(name);
      }
    } catch (RuntimeException e) {
      return null;
    }
    if (v == null) {
      return null;
    }
    String t = v.trim().toLowerCase(Locale.ROOT);
    if (t.equals("true")) {
      return null;
    }
    return t.equals("false")
        ? name + "=false"
        : name + ": '" + v + "' is not true or false, so Profold stays off";
  }

  /** Unacknowledged deltas kept at most (beyond it they are merged, then dropped). */
  public long maxBufferBytes() {
    return maxBufferBytes;
  }

  /** Distinct (context, metric) cells a thread records per interval at most. */
  public int maxCellsPerThread() {
    return maxCellsPerThread;
  }

  /**
   * Distinct contexts (region paths with the scoped attributes in force) the process interns at
   * most; beyond it, new region paths record under {@code profold.overflow} and new attribute
   * values are left out, counted (see docs/client.md).
   */
  public int maxContexts() {
    return maxContexts;
  }

  /**
   * The largest message the collector accepts (its {@code limits.max_message_bytes}): larger deltas
   * are split, merges stay within half of it, and the dictionary's strings within a quarter.
   */
  public long maxMessageBytes() {
    return maxMessageBytes;
  }

  /**
   * The longest wait between two attempts to reach the collector: after a failure the exporter
   * waits 500 ms, then doubles the wait (with jitter) up to this, so a collector that comes back is
   * reached again within about this long.
   */
  public Duration maxBackoff() {
    return maxBackoff;
  }

  @Override
  public String toString() {
    return "ProfoldConfig{endpoint="
        + endpoint
        + ", service="
        + service
        + ", instance="
        + instance
        + ", interval="
        + Durations.written(interval)
        + ", threadAggregation="
        + threadAggregation
        + ", labels="
        + labels
        + ", enabled="
        + enabled
        + "}";
  }

  /** Builds a {@link ProfoldConfig}; every setter checks its argument. */
  public static final class Builder {
    private String endpoint = "127.0.0.1:7763";
    private String service = DEFAULT_SERVICE;
    private String instance;
    private Duration interval = Duration.ofSeconds(10);
    private ThreadAggregation threadAggregation = ThreadAggregation.SUM;
    private final Map<String, ThreadAggregation> threadAggregationByGroup = new LinkedHashMap<>();
    private final Map<String, String> labels = new LinkedHashMap<>();
    private Boolean enabled; // null: the environment's switch decides
    private String disabledBy; // the setting that gave enabled, read from the environment
    private long maxBufferBytes = 8L << 20;
    private int maxCellsPerThread = 4096;
    private int maxContexts = 16_384;
    private long maxMessageBytes = 16L << 20;
    private Duration maxBackoff = Duration.ofSeconds(30);

    private Builder() {}

    /**
     * Collector address as {@code host:port}: a host name (letters, digits, {@code .}, {@code -}; a
     * trailing {@code .} allowed), an IPv4 address or a bracketed IPv6 one ({@code [::1]:7763}),
     * and a port from 1 to 65535; no scheme but gRPC's {@code dns:///}. No {@code _}: gRPC refuses
     * it in host names.
     */
    public Builder endpoint(String hostPort) {
      String was = hostPort == null ? "null" : "'" + hostPort + "'";
      String target =
          hostPort != null && hostPort.startsWith(DNS_SCHEME)
              ? hostPort.substring(DNS_SCHEME.length())
              : hostPort;
      if (target != null && target.contains("://")) {
        throw new Refused(
            "endpoint",
            "be host:port without a scheme (e.g. collector:7763, not http://collector:7763)",
            was);
      }
      if (target != null && target.indexOf('_') >= 0 && !target.startsWith("[")) {
        throw new Refused(
            "endpoint",
            "have a host name without '_', which gRPC refuses in host names (use the name with"
                + " '-', or an address)",
            was);
      }
      Matcher m = target == null ? null : ENDPOINT.matcher(target);
      if (m == null || !m.matches() || !validPort(m.group(2)) || !hostParses(target)) {
        throw new Refused(
            "endpoint",
            "be host:port with a host name or address and a port from 1 to 65535 (e.g."
                + " 127.0.0.1:7763, collector:7763 or [::1]:7763)",
            was);
      }
      this.endpoint = hostPort;
      return this;
    }

    /**
     * Whether {@code target}'s host is one a URI takes, as gRPC's name resolver reads it ({@code
     * a..b} matches the pattern but is no host name).
     */
    private static boolean hostParses(String target) {
      try {
        return java.net.URI.create("//" + target).getHost() != null;
      } catch (IllegalArgumentException e) {
        return false;
      }
    }

    private static boolean validPort(String digits) {
      int port = digits.length() > 5 ? 0 : Integer.parseInt(digits);
      return port > 0 && port < 65536;
    }

    public Builder service(String service) {
      this.service = nonEmpty("service", service, 128);
      return this;
    }

    public Builder instance(String instance) {
      this.instance = nonEmpty("instance", instance, 256);
      return this;
    }

    /** At least 100 ms, and at most what a long count of nanoseconds holds (about 292 years). */
    public Builder interval(Duration interval) {
      if (interval == null || interval.compareTo(Duration.ofMillis(100)) < 0) {
        throw new Refused("interval", "be at least 100ms", Durations.written(interval));
      }
      if (interval.compareTo(MAX_INTERVAL) > 0) {
        throw new Refused(
            "interval",
            "be at most " + MAX_INTERVAL.toDays() + " days (a count of nanoseconds)",
            Durations.written(interval));
      }
      this.interval = interval;
      return this;
    }

    public Builder threadAggregation(ThreadAggregation mode) {
      this.threadAggregation = Objects.requireNonNull(mode, "threadAggregation");
      return this;
    }

    /**
     * The mode for one thread group, by its normalised name ({@code http-exec-*}: thread names with
     * every run of digits replaced by {@code *}); other groups get the default mode. A name with
     * digits is normalised the same way ({@code http-exec-1} names {@code http-exec-*}), so that it
     * names the group its threads are in rather than no group.
     *
     * @throws IllegalArgumentException for an empty group, or one given another mode already
     */
    public Builder threadAggregation(String group, ThreadAggregation mode) {
      if (group == null || group.isBlank()) {
        throw new Refused(
            "threadAggregation", "name a thread group", group == null ? "null" : "''");
      }
      Objects.requireNonNull(mode, "mode");
      String normalised = ThreadGroups.normalise(group);
      ThreadAggregation before = threadAggregationByGroup.putIfAbsent(normalised, mode);
      if (before != null && before != mode) {
        throw new Refused(
            "threadAggregation",
            "give a thread group one mode: thread group '"
                + normalised
                + "' (from '"
                + group
                + "'; runs of digits in a group name stand for *) is given "
                + mode
                + " but was given "
                + before
                + " already",
            null);
      }
      return this;
    }

    /**
     * A source label; keys match {@code [a-zA-Z_][a-zA-Z0-9_]*} (at most 128 characters), values
     * have at most 256 characters (the collector's limits), at most 32 labels.
     */
    public Builder label(String key, String value) {
      if (key == null || !LABEL.matcher(key).matches()) {
        throw new Refused(
            "label", "have a label name matching [a-zA-Z_][a-zA-Z0-9_]*", "'" + key + "'");
      }
      if (key.length() > 128) {
        throw new Refused(
            "label", "have a label name of at most 128 characters", key.length() + " characters");
      }
      if (labels.size() >= 32 && !labels.containsKey(key)) {
        throw new Refused("label", "stay within 32 labels", "a 33rd, '" + key + "'");
      }
      if (value == null || value.length() > 256) {
        throw new Refused(
            "label",
            "have a value of at most 256 characters",
            value == null ? "null for '" + key + "'" : value.length() + " for '" + key + "'");
      }
      labels.put(key, value);
      return this;
    }

    /**
     * Whether {@link Profold#start} starts anything. Unless set here, {@code profold.enabled} /
     * {@code PROFOLD_ENABLED} decides (true when unset), so that an operator can turn off the
     * profiling of an application that configures Profold in code; a value that is neither true nor
     * false turns it off, and the start says why.
     */
    public Builder enabled(boolean enabled) {
      this.enabled = enabled;
      return this;
    }

    /**
     * From {@link #MIN_BACKOFF} (the wait after the first failure, which it cannot be below) to one
     * hour.
     */
    public Builder maxBackoff(Duration wait) {
      if (wait == null || wait.compareTo(MIN_BACKOFF) < 0 || wait.compareTo(MAX_BACKOFF) > 0) {
        throw new Refused(
            "maxBackoff",
            "be from 500ms to 1h (the wait after the first failed attempt is 500ms)",
            Durations.written(wait));
      }
      this.maxBackoff = wait;
      return this;
    }

    /** At least 64 KiB. */
    public Builder maxBufferBytes(long bytes) {
      if (bytes < 64 * 1024) {
        throw new Refused("maxBufferBytes", "be at least 65536 (bytes)", String.valueOf(bytes));
      }
      this.maxBufferBytes = bytes;
      return this;
    }

    /** At least 16. */
    public Builder maxCellsPerThread(int cells) {
      if (cells < 16) {
        throw new Refused("maxCellsPerThread", "be at least 16", String.valueOf(cells));
      }
      this.maxCellsPerThread = cells;
      return this;
    }

    /** At least 64. */
    public Builder maxContexts(int contexts) {
      if (contexts < 64) {
        throw new Refused("maxContexts", "be at least 64", String.valueOf(contexts));
      }
      this.maxContexts = contexts;
      return this;
    }

    /** At least 64 KiB; set it to the collector's {@code limits.max_message_bytes}. */
    public Builder maxMessageBytes(long bytes) {
      if (bytes < 64 * 1024) {
        throw new Refused(
            "maxMessageBytes",
            "be at least 65536 (bytes; set it to the collector's limits.max_message_bytes)",
            String.valueOf(bytes));
      }
      this.maxMessageBytes = bytes;
      return this;
    }

    public ProfoldConfig build() {
      return new ProfoldConfig(this);
    }

    private static String nonEmpty(String what, String v, int max) {
      if (v == null || v.isBlank() || v.length() > max) {
        throw new Refused(
            what,
            "be 1.." + max + " characters, not all blank",
            v == null ? "null" : v.length() > max ? v.length() + " characters" : "'" + v + "'");
      }
      return v;
    }
  }
}
