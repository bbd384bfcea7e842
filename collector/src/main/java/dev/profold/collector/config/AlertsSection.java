package dev.profold.collector.config;

import dev.profold.collector.alert.AlertRule;
import dev.profold.collector.alert.AlertmanagerSpec;
import dev.profold.collector.alert.AlertsSpec;
import dev.profold.collector.alert.LabelMatcher;
import dev.profold.collector.alert.RuleException;
import dev.profold.collector.alert.RuleExpression;
import dev.profold.collector.alert.Template;
import dev.profold.collector.analysis.DerivedValueNames;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Reads the {@code alerts} section of the config file (docs/alerts.md). Errors name the key path
 * ({@code alerts.rules[2].expr}), the column inside an expression or template, and the fix; the
 * caller prefixes the file name. A rule must name a value the collector derives and match only
 * labels that value has ({@link DerivedValueNames}).
 */
final class AlertsSection {
  private static final Set<String> KEYS = Set.of("alertmanager", "external_url", "rules");
  private static final Set<String> ALERTMANAGER_KEYS = Set.of("url", "timeout", "retries");
  private static final Set<String> RULE_KEYS =
      Set.of("name", "expr", "for", "keep_firing_for", "labels", "annotations");
  private static final Pattern RULE_NAME = Pattern.compile("[A-Za-z][A-Za-z0-9_]{0,127}");
  private static final Pattern LABEL_NAME = Pattern.compile("[a-z_][a-z0-9_]*");
  private static final Pattern ANNOTATION_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  static final int MAX_FOR = 100_000;

  private AlertsSection() {}

  static AlertsSpec parse(Object o) throws ConfigException {
    if (o == null) {
      return AlertsSpec.none();
    }
    Map<String, Object> m = map(o, "alerts");
    checkKeys(m, KEYS, "alerts");
    AlertmanagerSpec am =
        m.get("alertmanager") == null ? null : alertmanager(m.get("alertmanager"));
    URI external =
        m.get("external_url") == null
            ? null
            : httpUrl(
                m.get("external_url"), "alerts.external_url", "http://collector.example:7764");
    return new AlertsSpec(am, external, rules(m.get("rules")));
  }

  private static AlertmanagerSpec alertmanager(Object o) throws ConfigException {
    Map<String, Object> m = map(o, "alerts.alertmanager");
    checkKeys(m, ALERTMANAGER_KEYS, "alerts.alertmanager");
    if (m.get("url") == null) {
      throw new ConfigException(
          "alerts.alertmanager.url is required (e.g. http://127.0.0.1:9093); leave out"
              + " 'alertmanager' to expose alerts as metrics only");
    }
    URI url = httpUrl(m.get("url"), "alerts.alertmanager.url", "http://127.0.0.1:9093");
    Duration timeout = AlertmanagerSpec.DEFAULT_TIMEOUT;
    if (m.get("timeout") != null) {
      timeout = ConfigLoader.parseDuration(String.valueOf(m.get("timeout")));
      if (timeout == null || timeout.compareTo(Duration.ofMillis(1)) < 0) {
        throw new ConfigException(
            "alerts.alertmanager.timeout must be a duration such as 500ms or 5s, was "
                + m.get("timeout"));
      }
      if (timeout.compareTo(ConfigLoader.MAX_DURATION) > 0) {
        throw new ConfigException(
            "alerts.alertmanager.timeout must be at most "
                + ConfigLoader.MAX_DURATION.toHours()
                + "h, was "
                + m.get("timeout"));
      }
    }
    int retries = AlertmanagerSpec.DEFAULT_RETRIES;
    if (m.get("retries") != null) {
      Object r = m.get("retries");
      if (!(r instanceof Integer n) || n < 0 || n > 20) {
        throw new ConfigException(
            "alerts.alertmanager.retries must be a whole number in 0..20 (further attempts after"
                + " a failed one), was "
                + r);
      }
      retries = n;
    }
    return new AlertmanagerSpec(url, timeout, retries);
  }

  private static URI httpUrl(Object o, String key, String example) throws ConfigException {
    String fix = key + " must be an http:// or https:// URL such as " + example + ", was " + o;
    if (!(o instanceof String s)) {
      throw new ConfigException(fix);
    }
    try {
      URI u = new URI(s.strip());
      if (u.getScheme() == null
          || !(u.getScheme().equals("http") || u.getScheme().equals("https"))
          || u.getHost() == null
          || u.getRawQuery() != null
          || u.getRawFragment() != null) {
        throw new ConfigException(fix);
      }
      return u;
    } catch (URISyntaxException e) {
      throw new ConfigException(fix + " (" + e.getReason() + ")");
    }
  }

  private static List<AlertRule> rules(Object o) throws ConfigException {
    if (o == null) {
      return List.of();
    }
    if (!(o instanceof List<?> list)) {
      throw new ConfigException(
          "alerts.rules must be a list of rules, each with a name and an expr");
    }
    List<AlertRule> out = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (int i = 0; i < list.size(); i++) {
      AlertRule r = rule(list.get(i), "alerts.rules[" + i + "]");
      if (!names.add(r.name())) {
        throw new ConfigException(
            "alerts.rules[" + i + "]: a rule named '" + r.name() + "' is defined twice");
      }
      out.add(r);
    }
    for (int i = 0; i < out.size(); i++) {
      checkNames(out.get(i), "alerts.rules[" + i + "]");
    }
    return out;
  }

  /**
   * Refuses a rule that could never select a value: one naming a value the collector does not
   * derive, or matching a label its values never have. Checked once every rule parsed, so that a
   * rule's own syntax errors come first.
   */
  private static void checkNames(AlertRule r, String at) throws ConfigException {
    String value = r.expression().valueName();
    String where = at + ".expr ('" + r.name() + "'): ";
    if (!DerivedValueNames.isKnown(value)) {
      throw new ConfigException(
          where
              + "no derived value is named '"
              + value
              + "', so the rule could never fire; the derived values are: "
              + String.join(", ", DerivedValueNames.names())
              + " (docs/analysis.md)");
    }
    List<String> labels = DerivedValueNames.labelsOf(value);
    for (LabelMatcher m : r.expression().matchers()) {
      if (!labels.contains(m.label())) {
        throw new ConfigException(
            where
                + value
                + " has no label '"
                + m.label()
                + "', so "
                + m
                + " tests nothing; its labels are: "
                + String.join(", ", labels));
      }
    }
  }

  private static AlertRule rule(Object o, String at) throws ConfigException {
    Map<String, Object> m = map(o, at);
    checkKeys(m, RULE_KEYS, at);
    Object n = m.get("name");
    if (!(n instanceof String name) || !RULE_NAME.matcher(name).matches()) {
      throw new ConfigException(
          at
              + ".name "
              + (n == null ? "is required" : "'" + n + "' is not valid")
              + ": letters, digits and _, starting with a letter, e.g. LockContention");
    }
    String where = at + " ('" + name + "')";
    Object e = m.get("expr");
    if (!(e instanceof String exprText)) {
      throw new ConfigException(
          at
              + ".expr ('"
              + name
              + "') "
              + (e == null ? "is required" : "must be a string (quote it)")
              + ", for example: thread_class_ratio{class=\"sync\"} > 0.2");
    }
    RuleExpression expr;
    try {
      expr = RuleExpression.parse(exprText);
    } catch (RuleException x) {
      throw new ConfigException(
          at + ".expr ('" + name + "') at column " + x.column() + ": " + x.getMessage());
    }
    int forN = evaluations(m, "for", 1, 1, where, "'for: 3' fires after three intervals in a row");
    int keep =
        evaluations(
            m,
            "keep_firing_for",
            0,
            0,
            where,
            "'keep_firing_for: 2' keeps a firing alert firing through two intervals in a row where"
                + " its condition fails");
    Map<String, Template> labels = new LinkedHashMap<>();
    if (m.get("labels") != null) {
      for (Map.Entry<String, Object> l : map(m.get("labels"), at + ".labels").entrySet()) {
        String k = l.getKey();
        if (!LABEL_NAME.matcher(k).matches() || k.startsWith("__")) {
          throw new ConfigException(
              at + ".labels: '" + k + "' is not a label name ([a-z_][a-z0-9_]*, not starting __)");
        }
        if (AlertRule.RESERVED_LABELS.contains(k)) {
          throw new ConfigException(
              at + ".labels: '" + k + "' is set by the collector (the rule's name); remove it");
        }
        if (!(l.getValue() instanceof String v)) {
          throw new ConfigException(
              at + ".labels." + k + " must be a string (quote it), was " + l.getValue());
        }
        try {
          labels.put(k, Template.parse(v));
        } catch (RuleException x) {
          throw new ConfigException(
              at + ".labels." + k + " at column " + x.column() + ": " + x.getMessage());
        }
      }
    }
    Map<String, Template> annotations = new LinkedHashMap<>();
    if (m.get("annotations") != null) {
      for (Map.Entry<String, Object> a :
          map(m.get("annotations"), at + ".annotations").entrySet()) {
        String k = a.getKey();
        String key = at + ".annotations." + k;
        if (!ANNOTATION_NAME.matcher(k).matches()) {
          throw new ConfigException(
              at + ".annotations: '" + k + "' is not an annotation name ([A-Za-z_][A-Za-z0-9_]*)");
        }
        if (!(a.getValue() instanceof String text)) {
          throw new ConfigException(key + " must be a string (quote it), was " + a.getValue());
        }
        try {
          annotations.put(k, Template.parse(text));
        } catch (RuleException x) {
          throw new ConfigException(key + " at column " + x.column() + ": " + x.getMessage());
        }
      }
    }
    return new AlertRule(name, expr, forN, keep, labels, annotations);
  }

  /**
   * The rule's {@code key}, a whole number of evaluations in {@code min}..{@link #MAX_FOR}, or
   * {@code absent} when the key is not given.
   */
  private static int evaluations(
      Map<String, Object> m, String key, int min, int absent, String where, String example)
      throws ConfigException {
    Object f = m.get(key);
    if (f == null) {
      return absent;
    }
    if (!(f instanceof Integer k) || k < min || k > MAX_FOR) {
      throw new ConfigException(
          where
              + ": '"
              + key
              + "' must be a whole number of evaluations in "
              + min
              + ".."
              + MAX_FOR
              + ", was "
              + f
              + " (rules are evaluated once per interval: "
              + example
              + ")");
    }
    return k;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o, String where) throws ConfigException {
    if (!(o instanceof Map)) {
      throw new ConfigException(where + " must be a mapping of keys to values");
    }
    Map<String, Object> out = new LinkedHashMap<>();
    for (Map.Entry<Object, Object> e : ((Map<Object, Object>) o).entrySet()) {
      out.put(String.valueOf(e.getKey()), e.getValue());
    }
    return out;
  }

  private static void checkKeys(Map<String, Object> m, Set<String> known, String where)
      throws ConfigException {
    for (String k : m.keySet()) {
      if (!known.contains(k)) {
        throw new ConfigException(
            "unknown key '"
                + where
                + "."
                + k
                + "'; known keys under "
                + where
                + ": "
                + String.join(", ", known.stream().sorted().toList()));
      }
    }
  }
}
