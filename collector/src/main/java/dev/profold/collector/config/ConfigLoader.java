package dev.profold.collector.config;

import dev.profold.collector.alert.AlertRule;
import dev.profold.collector.alert.AlertsSpec;
import dev.profold.collector.analysis.AnalysisSpec;
import dev.profold.collector.analysis.DerivedValueNames;
import dev.profold.collector.scheme.SchemeDefinition;
import dev.profold.collector.scheme.SchemeException;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.Node;

/**
 * Reads a collector config file (YAML) over the embedded defaults. Unknown keys, keys given twice,
 * wrong types and out-of-range values are errors naming the file, the key and the accepted values;
 * the daemon refuses to start on them rather than guess.
 */
public final class ConfigLoader {
  private static final Set<String> TOP =
      Set.of(
          "listen",
          "grpc_port",
          "http_port",
          "interval",
          "source_ttl_intervals",
          "cardinality_limit",
          "histogram_max_scale",
          "retry_delay",
          "shutdown_timeout",
          "limits",
          "schemes",
          "archive",
          "alerts",
          "analysis");
  private static final Set<String> ARCHIVE_KEYS = Set.of("directory", "schemes");
  private static final Set<String> SCHEME_KEYS =
      Set.of("name", "query", "interval", "cardinality_limit", "retention");
  private static final Set<String> LIMITS =
      Set.of(
          "max_message_bytes",
          "max_pending_bytes",
          "dictionary_entries",
          "stream_ids",
          "max_sources");
  private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h)");

  /**
   * The longest duration any setting takes: about 11 years, far beyond a sensible interval or
   * timeout, and small enough that the nanosecond arithmetic done on intervals and deadlines cannot
   * overflow.
   */
  public static final Duration MAX_DURATION = Duration.ofHours(100_000);

  /** What {@link #parseDuration} gives for a number no {@link Duration} holds. */
  private static final Duration LONGEST = Duration.ofSeconds(Long.MAX_VALUE, 999_999_999);

  private static final Pattern SIZE = Pattern.compile("(\\d+)(|KiB|MiB|GiB)");

  private ConfigLoader() {}

  /** {@code d} as a config file writes it: {@code 10s}, {@code 250ms}. */
  public static String written(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
  }

  /** The defaults overridden by {@code file}. */
  public static CollectorConfig load(Path file) throws ConfigException {
    if (Files.isDirectory(file)) {
      throw new ConfigException(
          file + " is a directory; --config takes the config file (such as collector.yaml)");
    }
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      return parse(r, file.toString());
    } catch (NoSuchFileException e) {
      throw new ConfigException(
          "no such file: " + file + " (the config file; check the path given to --config)");
    } catch (AccessDeniedException e) {
      throw new ConfigException(
          "cannot read config file " + file + ": permission denied for this user");
    } catch (IOException e) {
      throw new ConfigException("cannot read config file " + file + ": " + e.getMessage());
    }
  }

  /** The defaults overridden by the YAML read from {@code in}; {@code name} is used in errors. */
  public static CollectorConfig parse(Reader in, String name) throws ConfigException {
    Object root;
    try {
      LoaderOptions options = new LoaderOptions();
      options.setAllowDuplicateKeys(false); // DocumentChecks says it better; this is a backstop
      DocumentConstructor constructor = new DocumentConstructor(options);
      Node document = new Yaml(constructor).compose(in);
      if (document == null) {
        return CollectorConfig.defaults();
      }
      DocumentChecks.check(document, name);
      root = constructor.construct(document);
    } catch (MarkedYAMLException e) {
      throw new ConfigException(
          name
              + ":"
              + (e.getProblemMark().getLine() + 1)
              + ":"
              + (e.getProblemMark().getColumn() + 1)
              + ": not valid YAML: "
              + e.getProblem());
    } catch (YAMLException e) {
      if (e.getCause() instanceof java.nio.charset.CharacterCodingException) {
        throw new ConfigException(
            name + ": not UTF-8 text (" + e.getCause() + "); save the file as UTF-8");
      }
      throw new ConfigException(name + ": not valid YAML: " + e.getMessage());
    }
    CollectorConfig d = CollectorConfig.defaults();
    if (root == null) {
      return d;
    }
    Map<String, Object> top = map(root, name, "the top level");
    checkKeys(top, TOP, name, "");
    Map<String, Object> limits =
        top.containsKey("limits") ? map(top.get("limits"), name, "limits") : Map.of();
    checkKeys(limits, LIMITS, name, "limits.");
    CollectorConfig c =
        new CollectorConfig(
            string(top, "listen", d.listen(), name),
            port(top, "grpc_port", d.grpcPort(), name),
            port(top, "http_port", d.httpPort(), name),
            duration(top, "interval", d.interval(), name, Duration.ofMillis(100)),
            (int) number(top, "source_ttl_intervals", d.sourceTtlIntervals(), name, 3, 1_000_000),
            (int) number(top, "cardinality_limit", d.cardinalityLimit(), name, 1, 100_000_000),
            (int) number(top, "histogram_max_scale", d.histogramMaxScale(), name, -10, 20),
            (int) size(limits, "max_message_bytes", d.maxMessageBytes(), name, 1024, 1L << 30),
            size(limits, "max_pending_bytes", d.maxPendingBytes(), name, 1024, 1L << 40),
            (int)
                number(
                    limits,
                    "limits.",
                    "dictionary_entries",
                    d.dictionaryEntries(),
                    name,
                    1,
                    500_000_000),
            (int)
                number(limits, "limits.", "stream_ids", d.streamIds(), name, 1, Integer.MAX_VALUE),
            (int) number(limits, "limits.", "max_sources", d.maxSources(), name, 1, 10_000_000),
            duration(top, "retry_delay", d.retryDelay(), name, Duration.ZERO),
            duration(top, "shutdown_timeout", d.shutdownTimeout(), name, Duration.ZERO),
            top.containsKey("schemes") ? schemes(top.get("schemes"), name) : d.schemes(),
            top.containsKey("archive") ? archive(top.get("archive"), name) : d.archive(),
            alerts(top.get("alerts"), name),
            analysis(top.get("analysis"), name));
    boolean threadDetail = false;
    boolean regionScheme = false;
    for (int i = 0; i < c.schemes().size(); i++) {
      try {
        SchemeDefinition def = c.schemes().get(i).compile(c.interval(), c.cardinalityLimit());
        threadDetail |=
            DerivedValueNames.keepsThreadDetail(
                def.labelNames(), def.evaluator().query().attributesRead());
        regionScheme |=
            def.name().equals(SchemeDefinition.BUILT_IN)
                && DerivedValueNames.isRegionScheme(def.labelNames());
      } catch (SchemeException e) {
        throw new ConfigException(name + ": schemes[" + i + "]: " + e.getMessage());
      }
    }
    List<AlertRule> rules = c.alerts().rules();
    if (!regionScheme) {
      refuseUnfireable(
          rules,
          name,
          DerivedValueNames::needsRegionScheme,
          " is read from the scheme '"
              + SchemeDefinition.BUILT_IN
              + "' grouped by service, instance, path and kind, and there is none, so the rule"
              + " could never fire; keep '- name: "
              + SchemeDefinition.BUILT_IN
              + "' (its built-in query) among the schemes (docs/imbalance.md)");
    }
    if (!threadDetail) {
      refuseUnfireable(
          rules,
          name,
          DerivedValueNames::needsThreadDetail,
          " comes from a scheme that keeps per-thread detail, and no scheme does, so the rule"
              + " could never fire; add one, such as the 'threads' scheme in"
              + " deploy/collector.yaml (grouped by service, instance, thread.group, thread,"
              + " thread.role, path and kind; docs/analysis.md)");
    }
    List<String> schemeNames = c.schemes().stream().map(SchemeSpec::name).toList();
    for (String a : c.archive().schemes()) {
      if (!schemeNames.contains(a)) {
        throw new ConfigException(
            name
                + ": archive.schemes: '"
                + a
                + "' is not a scheme; the schemes are: "
                + String.join(", ", schemeNames));
      }
    }
    return c;
  }

  private static AlertsSpec alerts(Object o, String name) throws ConfigException {
    try {
      return AlertsSection.parse(o);
    } catch (ConfigException e) {
      throw new ConfigException(name + ": " + e.getMessage());
    }
  }

  private static AnalysisSpec analysis(Object o, String name) throws ConfigException {
    try {
      return AnalysisSection.parse(o);
    } catch (ConfigException e) {
      throw new ConfigException(name + ": " + e.getMessage());
    }
  }

  private static ArchiveSpec archive(Object o, String name) throws ConfigException {
    Map<String, Object> m = map(o, name, "archive");
    checkKeys(m, ARCHIVE_KEYS, name, "archive.");
    Object dir = m.get("directory");
    if (!(dir instanceof String d) || d.isBlank()) {
      throw new ConfigException(
          name
              + ": archive.directory is required (a path; leave out 'archive' to archive nothing)");
    }
    Object list = m.getOrDefault("schemes", List.of());
    List<String> schemes = new ArrayList<>();
    if (!(list instanceof List<?> l)) {
      throw new ConfigException(name + ": archive.schemes must be a list of scheme names");
    }
    for (Object x : l) {
      if (!(x instanceof String s)) {
        throw new ConfigException(name + ": archive.schemes must be a list of scheme names");
      }
      schemes.add(s);
    }
    try {
      return new ArchiveSpec(Path.of(d), schemes);
    } catch (java.nio.file.InvalidPathException e) {
      throw new ConfigException(
          name + ": archive.directory is not a valid path (" + e.getMessage() + ")");
    }
  }

  private static List<SchemeSpec> schemes(Object o, String name) throws ConfigException {
    if (!(o instanceof List<?> list) || list.isEmpty()) {
      throw new ConfigException(
          name
              + ": 'schemes' must be a non-empty list of schemes, each with a name and a query"
              + " (list '- name: region' to keep the built-in one)");
    }
    List<SchemeSpec> out = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (int i = 0; i < list.size(); i++) {
      String at = "schemes[" + i + "]";
      Map<String, Object> m = map(list.get(i), name, at);
      checkKeys(m, SCHEME_KEYS, name, at + ".");
      Object n = m.get("name");
      if (!(n instanceof String schemeName) || schemeName.isBlank()) {
        throw new ConfigException(name + ": " + at + ": 'name' is required (a string)");
      }
      if (!names.add(schemeName)) {
        throw new ConfigException(
            name + ": " + at + ": a scheme named '" + schemeName + "' is defined twice");
      }
      Object q = m.get("query");
      if (q == null && !schemeName.equals(SchemeDefinition.BUILT_IN)) {
        throw new ConfigException(
            name
                + ": "
                + at
                + " ('"
                + schemeName
                + "'): 'query' is required, for example: SELECT sum(time) GROUP BY service, path");
      }
      if (q != null && !(q instanceof String)) {
        throw new ConfigException(
            name + ": " + at + ".query must be a string (quote it if it starts with a symbol)");
      }
      out.add(
          new SchemeSpec(
              schemeName,
              (String) q,
              m.containsKey("interval")
                  ? duration(m, "interval", null, name + ": " + at, Duration.ofMillis(100))
                  : null,
              m.containsKey("cardinality_limit")
                  ? (int) number(m, "cardinality_limit", 0, name + ": " + at, 1, 100_000_000)
                  : null,
              (int)
                  number(
                      m,
                      "retention",
                      SchemeDefinition.DEFAULT_RETENTION,
                      name + ": " + at,
                      1,
                      1_000_000)));
    }
    return out;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o, String name, String where)
      throws ConfigException {
    if (!(o instanceof Map)) {
      throw new ConfigException(name + ": " + where + " must be a mapping of keys to values");
    }
    Map<String, Object> out = new LinkedHashMap<>();
    for (Map.Entry<Object, Object> e : ((Map<Object, Object>) o).entrySet()) {
      out.put(String.valueOf(e.getKey()), e.getValue());
    }
    return out;
  }

  /**
   * Refuses the first rule whose derived value {@code needs} says no configured scheme produces: it
   * could never fire. {@code why} follows the value's name in the message.
   */
  /**
   * Refuses the alert rules of {@code c} that read the region analysis when the scheme {@code
   * region} has an interval other than {@code c}'s, and those that read per-thread detail when a
   * scheme keeping it does, since rules are evaluated at {@code c}'s interval: {@code for} would
   * count one of its intervals several times, or skip some. For a configuration as it runs, after
   * the command-line options (which may set the interval), at start and at each reload.
   *
   * @param name where the configuration comes from, to begin the error
   */
  public static void checkRuleIntervals(CollectorConfig c, String name) throws ConfigException {
    for (SchemeDefinition def : c.schemeDefinitions()) {
      if (def.interval().equals(c.interval())) {
        continue;
      }
      String ms = def.interval().toMillis() + " ms";
      String collectors = "the collector's (" + c.interval().toMillis() + " ms)";
      String why =
          ", at which rules are evaluated: 'for' would count one interval's value several times,"
              + " or skip some; leave the scheme's interval unset, or make the collector's interval"
              + " (the 'interval' key, or --interval) the same";
      if (def.name().equals(SchemeDefinition.BUILT_IN)
          && DerivedValueNames.isRegionScheme(def.labelNames())) {
        refuseUnfireable(
            c.alerts().rules(),
            name,
            DerivedValueNames::needsRegionScheme,
            " is read from the scheme '"
                + SchemeDefinition.BUILT_IN
                + "', whose interval ("
                + ms
                + ") is not "
                + collectors
                + why);
      }
      if (DerivedValueNames.keepsThreadDetail(
          def.labelNames(), def.evaluator().query().attributesRead())) {
        refuseUnfireable(
            c.alerts().rules(),
            name,
            DerivedValueNames::needsThreadDetail,
            " is read from the schemes that keep per-thread detail, and the scheme '"
                + def.name()
                + "' has an interval ("
                + ms
                + ") other than "
                + collectors
                + why);
      }
    }
  }

  private static void refuseUnfireable(
      List<AlertRule> rules, String name, java.util.function.Predicate<String> needs, String why)
      throws ConfigException {
    for (int i = 0; i < rules.size(); i++) {
      String value = rules.get(i).expression().valueName();
      if (needs.test(value)) {
        throw new ConfigException(
            name
                + ": alerts.rules["
                + i
                + "].expr ('"
                + rules.get(i).name()
                + "'): "
                + value
                + why);
      }
    }
  }

  private static void checkKeys(Map<String, Object> m, Set<String> known, String name, String p)
      throws ConfigException {
    for (String k : m.keySet()) {
      if (!known.contains(k)) {
        throw new ConfigException(
            name
                + ": unknown key '"
                + p
                + k
                + "'; known keys"
                + (p.isEmpty() ? "" : " under " + p.substring(0, p.length() - 1))
                + ": "
                + String.join(", ", known.stream().sorted().toList()));
      }
    }
  }

  private static String string(Map<String, Object> m, String key, String dflt, String name)
      throws ConfigException {
    Object v = m.get(key);
    if (v == null) {
      return dflt;
    }
    if (!(v instanceof String s) || s.isBlank()) {
      throw new ConfigException(name + ": '" + key + "' must be a non-empty string, was " + v);
    }
    return s;
  }

  private static int port(Map<String, Object> m, String key, int dflt, String name)
      throws ConfigException {
    return (int) number(m, key, dflt, name, 0, 65535);
  }

  private static long number(
      Map<String, Object> m, String key, long dflt, String name, long min, long max)
      throws ConfigException {
    return number(m, "", key, dflt, name, min, max);
  }

  /** {@code key} of mapping {@code m}, which sits at {@code path} ("limits.") in the file. */
  private static long number(
      Map<String, Object> m, String path, String key, long dflt, String name, long min, long max)
      throws ConfigException {
    Object v = m.get(key);
    if (v == null) {
      return dflt;
    }
    if (!(v instanceof Integer || v instanceof Long)) {
      throw new ConfigException(
          name
              + ": '"
              + path
              + key
              + "' must be a whole number in "
              + min
              + ".."
              + max
              + ", was "
              + v);
    }
    long n = ((Number) v).longValue();
    if (n < min || n > max) {
      throw new ConfigException(
          name + ": '" + path + key + "' must be in " + min + ".." + max + ", was " + n);
    }
    return n;
  }

  private static long size(
      Map<String, Object> m, String key, long dflt, String name, long min, long max)
      throws ConfigException {
    Object v = m.get(key);
    if (v == null) {
      return dflt;
    }
    long n;
    if (v instanceof Integer || v instanceof Long) {
      n = ((Number) v).longValue();
    } else {
      Matcher x = SIZE.matcher(String.valueOf(v).trim());
      if (!x.matches()) {
        throw new ConfigException(
            name
                + ": 'limits."
                + key
                + "' must be a byte size such as 1048576, 64KiB or 16MiB, was "
                + v);
      }
      long unit =
          switch (x.group(2)) {
            case "KiB" -> 1L << 10;
            case "MiB" -> 1L << 20;
            case "GiB" -> 1L << 30;
            default -> 1L;
          };
      try {
        n = Math.multiplyExact(Long.parseLong(x.group(1)), unit);
      } catch (NumberFormatException | ArithmeticException e) {
        n = Long.MAX_VALUE; // more than any limit
      }
    }
    if (n < min || n > max) {
      throw new ConfigException(
          name + ": 'limits." + key + "' must be in " + min + ".." + max + " bytes, was " + v);
    }
    return n;
  }

  private static Duration duration(
      Map<String, Object> m, String key, Duration dflt, String name, Duration min)
      throws ConfigException {
    Object v = m.get(key);
    if (v == null) {
      return dflt;
    }
    Duration d = parseDuration(String.valueOf(v));
    if (d == null) {
      throw new ConfigException(
          name + ": '" + key + "' must be a duration such as 500ms, 10s, 1m or 1h, was " + v);
    }
    if (d.compareTo(min) < 0) {
      throw new ConfigException(
          name + ": '" + key + "' must be at least " + min.toMillis() + "ms, was " + v);
    }
    if (d.compareTo(MAX_DURATION) > 0) {
      throw new ConfigException(
          name + ": '" + key + "' must be at most " + MAX_DURATION.toHours() + "h, was " + v);
    }
    return d;
  }

  /**
   * Parses {@code 500ms}, {@code 10s}, {@code 1m}, {@code 1h}; null when malformed. A number too
   * large for any {@link Duration} gives the longest one, which callers refuse as more than {@link
   * #MAX_DURATION}.
   */
  public static Duration parseDuration(String s) {
    Matcher x = DURATION.matcher(s.trim().toLowerCase(Locale.ROOT));
    if (!x.matches()) {
      return null;
    }
    try {
      long n = Long.parseLong(x.group(1));
      return switch (x.group(2)) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        default -> Duration.ofHours(n);
      };
    } catch (NumberFormatException | ArithmeticException e) {
      return LONGEST;
    }
  }

  /** SnakeYAML's safe constructor, given a document already composed (and checked). */
  private static final class DocumentConstructor extends SafeConstructor {
    DocumentConstructor(LoaderOptions options) {
      super(options);
    }

    Object construct(Node document) {
      return constructDocument(document);
    }
  }

  /** Keys accepted at the top level and under {@code limits}, for docs and tests. */
  public static List<String> knownKeys() {
    return List.copyOf(new java.util.TreeSet<>(TOP));
  }
}
