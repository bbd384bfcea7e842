package dev.profold.collector.alert;

import dev.profold.collector.analysis.DerivedValue;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * The alert state machine. Each {@link #evaluate} call (one per interval close) tests every rule
 * against the derived values; per rule and label set of a selected value:
 *
 * <pre>
 *   inactive --condition holds--> pending --held for `for` evaluations--> firing
 *   pending  --condition false or value gone--> inactive (nothing reported)
 *   firing   --condition false or value gone--> resolved (reported once) --> inactive
 * </pre>
 *
 * A rule with {@code keep_firing_for: k} keeps a firing alert firing through k evaluations in a row
 * where its condition is false or its value gone, and resolves it at the next such one; one
 * evaluation where the condition holds again starts the count afresh.
 *
 * <p>With {@code for: 1} an alert fires at the first evaluation where its condition holds. An
 * alert's labels are the value's (but {@code alert}, {@code alertname} and names Alertmanager would
 * refuse) overlaid with the rule's. The alerts of a rule never share a label set (they would be one
 * series in /metrics and one alert at Alertmanager): when two values carry the same name and
 * labels, or their alerts would carry the same labels (the rule's labels overriding what told them
 * apart), the first one in the list counts, and the other can start an alert once that label set is
 * free. The result is a pure function of the rules, the sequence of calls and their arguments: time
 * comes only from {@code now}.
 *
 * <p>Not thread-safe: one thread (or a lock) at a time.
 */
public final class AlertEvaluator {
  /**
   * What an evaluation found.
   *
   * @param at the evaluation time
   * @param active pending and firing alerts, by rule (in config order) then first appearance
   * @param resolved alerts that stopped firing at this evaluation
   */
  public record Evaluation(Instant at, List<Alert> active, List<Alert> resolved) {
    public Evaluation {
      active = List.copyOf(active);
      resolved = List.copyOf(resolved);
    }

    /** The firing alerts among {@link #active}. */
    public List<Alert> firing() {
      return active.stream().filter(a -> a.state() == AlertState.FIRING).toList();
    }
  }

  /**
   * What a rule replacement did.
   *
   * @param kept rules whose definition did not change (or only in keepFiringFor): their alerts keep
   *     their state
   * @param started new or changed rules: they start inactive
   * @param removed rules no longer defined
   * @param resolved firing alerts of removed or changed rules, now resolved
   */
  public record RulesChange(
      List<String> kept, List<String> started, List<String> removed, List<Alert> resolved) {}

  private static final class Instance {
    final Map<String, String> labels;
    final Instant activeAt;
    int held;
    double value;
    Instant firingSince;
    int lapsed; // evaluations in a row, while firing, the condition did not hold
    Instant keepFiringSince; // the first of them
    Map<String, String> annotations = Map.of();

    Instance(Map<String, String> labels, Instant activeAt) {
      this.labels = labels;
      this.activeAt = activeAt;
    }

    boolean firing() {
      return firingSince != null;
    }
  }

  private static final class RuleState {
    final AlertRule rule;
    final Map<Map<String, String>, Instance> instances = new LinkedHashMap<>(); // by value labels
    // the instances' labels, to the value labels their instance is kept under
    final Map<Map<String, String>, Map<String, String>> alertLabels = new HashMap<>();

    RuleState(AlertRule rule) {
      this.rule = rule;
    }

    /** {@code rule}, in force from now on, with {@code before}'s alerts as they stand. */
    RuleState(AlertRule rule, RuleState before) {
      this.rule = rule;
      instances.putAll(before.instances);
      alertLabels.putAll(before.alertLabels);
    }
  }

  private static final java.util.regex.Pattern LABEL_NAME =
      java.util.regex.Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");

  private final Map<String, RuleState> rules = new LinkedHashMap<>();
  private Instant lastEvaluation;

  public AlertEvaluator(List<AlertRule> rules) {
    for (AlertRule r : rules) {
      if (this.rules.put(r.name(), new RuleState(r)) != null) {
        throw new IllegalArgumentException("two rules named " + r.name());
      }
    }
  }

  /** Evaluates every rule against {@code values} at {@code now}; see the class comment. */
  public Evaluation evaluate(Instant now, List<DerivedValue> values) {
    Objects.requireNonNull(now, "now");
    lastEvaluation = now;
    Map<String, List<DerivedValue>> byName = new HashMap<>();
    for (DerivedValue v : values) {
      byName.computeIfAbsent(v.name(), k -> new ArrayList<>()).add(v);
    }
    List<Alert> resolved = new ArrayList<>();
    for (RuleState s : rules.values()) {
      evaluate(s, now, byName.getOrDefault(s.rule.expression().valueName(), List.of()), resolved);
    }
    return new Evaluation(now, active(), resolved);
  }

  private static void evaluate(
      RuleState s, Instant now, List<DerivedValue> candidates, List<Alert> resolved) {
    AlertRule rule = s.rule;
    Set<Map<String, String>> seen = new HashSet<>();
    List<DerivedValue> holds = new ArrayList<>();
    List<DerivedValue> fails = new ArrayList<>();
    for (DerivedValue v : candidates) {
      if (rule.expression().selects(v) && seen.add(v.labels())) {
        (rule.expression().holds(v.value()) ? holds : fails).add(v);
      }
    }
    Set<Map<String, String>> holding = new HashSet<>();
    holds.forEach(v -> holding.add(v.labels()));
    // Those that hold first: one may carry on an alert whose own value fails now, whatever the
    // order of the values.
    List<DerivedValue> deferred = new ArrayList<>();
    for (DerivedValue v : holds) {
      Instance i = s.instances.get(v.labels());
      if (i == null) {
        Map<String, String> labels = alertLabels(v, rule.labels());
        Map<String, String> holder = s.alertLabels.get(labels);
        if (holder == null) {
          i = start(s, v, labels, now);
        } else {
          Instance other = s.instances.get(holder);
          if (holding.contains(holder) || !other.firing() || rule.keepFiringFor() == 0) {
            deferred.add(v); // another value's alert has these labels: it counts, unless it ends
            continue;
          }
          // A firing alert with these labels that keep_firing_for would keep (its own value fails
          // or went) holds through this value: the alert is one (its labels), so this value
          // carries it on rather than wait for it to resolve and page anew.
          s.instances.remove(holder);
          s.instances.put(v.labels(), other);
          s.alertLabels.put(labels, v.labels());
          i = other;
        }
      }
      hold(rule, i, v, now);
    }
    for (DerivedValue v : fails) {
      Instance i = s.instances.get(v.labels());
      if (i != null && ends(rule, i, now)) {
        s.instances.remove(v.labels());
        s.alertLabels.remove(i.labels);
        if (i.firing()) {
          resolved.add(alert(rule.name(), i, AlertState.RESOLVED, now));
        }
      }
    }
    // A label set an alert of a failing value left now is free for a value that holds.
    for (DerivedValue v : deferred) {
      Map<String, String> labels = alertLabels(v, rule.labels());
      if (!s.alertLabels.containsKey(labels)) {
        hold(rule, start(s, v, labels, now), v, now);
      }
    }
    // Label sets with no value this time: their series went, so their condition no longer holds.
    for (Iterator<Map.Entry<Map<String, String>, Instance>> it = s.instances.entrySet().iterator();
        it.hasNext(); ) {
      Map.Entry<Map<String, String>, Instance> e = it.next();
      if (!seen.contains(e.getKey()) && ends(rule, e.getValue(), now)) {
        it.remove();
        s.alertLabels.remove(e.getValue().labels);
        if (e.getValue().firing()) {
          resolved.add(alert(rule.name(), e.getValue(), AlertState.RESOLVED, now));
        }
      }
    }
  }

  /** A new alert of value {@code v} with {@code labels}, active from {@code now}. */
  private static Instance start(
      RuleState s, DerivedValue v, Map<String, String> labels, Instant now) {
    Instance i = new Instance(labels, now);
    s.instances.put(v.labels(), i);
    s.alertLabels.put(labels, v.labels());
    return i;
  }

  /** {@code i}'s condition holds at {@code now} with value {@code v}. */
  private static void hold(AlertRule rule, Instance i, DerivedValue v, Instant now) {
    i.held++;
    i.lapsed = 0;
    i.keepFiringSince = null;
    i.value = v.value();
    i.annotations = render(rule, i, v);
    if (!i.firing() && i.held >= rule.forEvaluations()) {
      i.firingSince = now;
    }
  }

  /**
   * Whether {@code i}, whose condition did not hold at {@code now} (or whose value went), ends: a
   * pending alert does, a firing one once its rule's {@code keepFiringFor} evaluations in a row
   * have gone by (it is kept firing through them, with its last value).
   */
  private static boolean ends(AlertRule rule, Instance i, Instant now) {
    if (!i.firing() || i.lapsed >= rule.keepFiringFor()) {
      return true;
    }
    if (i.lapsed == 0) {
      i.keepFiringSince = now;
    }
    i.lapsed++;
    return false;
  }

  /** The value's labels (those Alertmanager takes) and the rule's, rendered for {@code v}. */
  private static Map<String, String> alertLabels(DerivedValue v, Map<String, Template> ruleLabels) {
    Map<String, String> out = new TreeMap<>();
    for (Map.Entry<String, String> e : v.labels().entrySet()) {
      String k = e.getKey();
      // Alertmanager refuses a whole batch over one invalid label name: leave such labels out.
      if (!AlertRule.RESERVED_LABELS.contains(k)
          && LABEL_NAME.matcher(k).matches()
          && !k.startsWith("__")) {
        out.put(k, e.getValue());
      }
    }
    Template.Data data = new Template.Data(v.value(), Map.copyOf(out), v.context());
    ruleLabels.forEach((k, t) -> out.put(k, t.render(data)));
    return out;
  }

  private static Map<String, String> render(AlertRule rule, Instance i, DerivedValue v) {
    Template.Data data = new Template.Data(v.value(), i.labels, v.context());
    Map<String, String> out = new LinkedHashMap<>();
    rule.annotations().forEach((k, t) -> out.put(k, t.render(data)));
    return out;
  }

  private static Alert alert(String rule, Instance i, AlertState state, Instant resolvedAt) {
    return new Alert(
        rule,
        i.labels,
        i.annotations,
        state,
        i.value,
        i.activeAt,
        i.firingSince,
        state == AlertState.RESOLVED ? resolvedAt : null,
        state == AlertState.FIRING ? i.keepFiringSince : null);
  }

  /** Pending and firing alerts as of the last evaluation. */
  public List<Alert> active() {
    List<Alert> out = new ArrayList<>();
    for (RuleState s : rules.values()) {
      for (Instance i : s.instances.values()) {
        out.add(alert(s.rule.name(), i, i.firing() ? AlertState.FIRING : AlertState.PENDING, null));
      }
    }
    return out;
  }

  /** The rules, in config order. */
  public List<AlertRule> rules() {
    return rules.values().stream().map(s -> s.rule).toList();
  }

  /**
   * Replaces the rules: a rule whose definition is unchanged, or changed in {@code keepFiringFor}
   * only, keeps its alerts' state; a new or otherwise changed one starts inactive; the firing
   * alerts of removed or changed rules resolve at {@code now}.
   *
   * @throws IllegalArgumentException when two rules share a name; nothing changed then
   */
  public RulesChange replaceRules(List<AlertRule> next, Instant now) {
    Map<String, RuleState> old = new LinkedHashMap<>(rules);
    Map<String, RuleState> fresh = new LinkedHashMap<>();
    List<String> kept = new ArrayList<>();
    List<String> started = new ArrayList<>();
    for (AlertRule r : next) {
      RuleState before = old.get(r.name());
      if (before != null && before.rule.equals(r)) {
        fresh.put(r.name(), before);
        old.remove(r.name());
        kept.add(r.name());
      } else if (before != null && sameButKeepFiringFor(before.rule, r)) {
        // Raised to stop an alert flapping, say: its alerts go on, kept under the new count.
        fresh.put(r.name(), new RuleState(r, before));
        old.remove(r.name());
        kept.add(r.name());
      } else {
        fresh.put(r.name(), new RuleState(r));
        started.add(r.name());
      }
      if (fresh.size() != kept.size() + started.size()) {
        throw new IllegalArgumentException("two rules named " + r.name());
      }
    }
    List<String> removed = new ArrayList<>();
    List<Alert> resolved = new ArrayList<>();
    for (RuleState s : old.values()) {
      if (!fresh.containsKey(s.rule.name())) {
        removed.add(s.rule.name());
      }
      for (Instance i : s.instances.values()) {
        if (i.firing()) {
          resolved.add(alert(s.rule.name(), i, AlertState.RESOLVED, now));
        }
      }
    }
    rules.clear();
    rules.putAll(fresh);
    return new RulesChange(kept, started, removed, resolved);
  }

  /** Whether {@code a} and {@code b} differ in {@code keepFiringFor} alone, if at all. */
  private static boolean sameButKeepFiringFor(AlertRule a, AlertRule b) {
    return a.equals(
        new AlertRule(
            b.name(),
            b.expression(),
            b.forEvaluations(),
            a.keepFiringFor(),
            b.labels(),
            b.annotations()));
  }

  /** The time of the last evaluation, or null before the first. */
  public Instant lastEvaluation() {
    return lastEvaluation;
  }
}
