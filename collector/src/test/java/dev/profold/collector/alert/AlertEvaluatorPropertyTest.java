package dev.profold.collector.alert;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.collector.analysis.DerivedValue;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * The evaluator against a reference model: per label set, the length of the current run of
 * evaluations where the condition held. Run 0: inactive; 1..for-1: pending (since the run began);
 * at least for: firing (since the run reached for); a run ending after reaching for: resolved once.
 */
class AlertEvaluatorPropertyTest {
  private static final String[] SERIES = {"a", "b", "c"};

  /** Per evaluation and series: 0 absent, 1 below the threshold, 2 above it. */
  @Provide
  Arbitrary<List<List<Integer>>> steps() {
    return Arbitraries.integers().between(0, 2).list().ofSize(SERIES.length).list().ofMaxSize(40);
  }

  @Property(tries = 300)
  void matchesTheRunLengthModel(
      @ForAll("steps") List<List<Integer>> steps, @ForAll @IntRange(min = 1, max = 4) int forN) {
    AlertEvaluator ev = new AlertEvaluator(List.of(Rules.rule("R", "v > 0.5", forN)));
    Map<String, Integer> run = new HashMap<>();
    Map<String, Integer> runStart = new HashMap<>();
    for (int k = 0; k < steps.size(); k++) {
      Instant now = Instant.ofEpochSecond(1_000_000L + 10L * k);
      List<DerivedValue> values = new ArrayList<>();
      List<String> expectResolved = new ArrayList<>();
      for (int s = 0; s < SERIES.length; s++) {
        int x = steps.get(k).get(s);
        if (x > 0) {
          values.add(DerivedValue.of("v", Map.of("s", SERIES[s]), x == 2 ? 0.9 : 0.1));
        }
        int before = run.getOrDefault(SERIES[s], 0);
        int after = x == 2 ? before + 1 : 0;
        if (after == 1) {
          runStart.put(SERIES[s], k);
        }
        if (before >= forN && after == 0) {
          expectResolved.add(SERIES[s]);
        }
        run.put(SERIES[s], after);
      }
      AlertEvaluator.Evaluation e = ev.evaluate(now, values);

      assertThat(e.resolved())
          .extracting(a -> a.labels().get("s"))
          .containsExactlyInAnyOrderElementsOf(expectResolved);
      Map<String, Alert> active = new HashMap<>();
      e.active().forEach(a -> active.put(a.labels().get("s"), a));
      for (String s : SERIES) {
        int r = run.get(s);
        if (r == 0) {
          assertThat(active).doesNotContainKey(s);
          continue;
        }
        Alert a = active.get(s);
        assertThat(a).as("series %s at step %d", s, k).isNotNull();
        assertThat(a.state()).isEqualTo(r >= forN ? AlertState.FIRING : AlertState.PENDING);
        assertThat(a.activeAt())
            .isEqualTo(Instant.ofEpochSecond(1_000_000L + 10L * runStart.get(s)));
        if (r >= forN) {
          assertThat(a.firingSince())
              .isEqualTo(Instant.ofEpochSecond(1_000_000L + 10L * (runStart.get(s) + forN - 1)));
        }
      }
    }
  }

  /**
   * With {@code keep_firing_for}: per label set, an instance (activeAt, held, firing since, lapsed
   * evaluations and the first of them) stepped as the rule says, written apart from the evaluator.
   */
  @Property(tries = 300)
  void keepFiringForMatchesItsModel(
      @ForAll("steps") List<List<Integer>> steps,
      @ForAll @IntRange(min = 1, max = 3) int forN,
      @ForAll @IntRange(min = 0, max = 3) int keepN) {
    AlertEvaluator ev =
        new AlertEvaluator(List.of(Rules.rule("R", "v > 0.5", forN, keepN, Map.of(), Map.of())));
    Map<String, long[]> model = new HashMap<>(); // activeAt, held, firingSince|-1, lapsed, since|-1
    for (int k = 0; k < steps.size(); k++) {
      long now = 1_000_000L + 10L * k;
      List<DerivedValue> values = new ArrayList<>();
      List<String> expectResolved = new ArrayList<>();
      for (int s = 0; s < SERIES.length; s++) {
        int x = steps.get(k).get(s);
        if (x > 0) {
          values.add(DerivedValue.of("v", Map.of("s", SERIES[s]), x == 2 ? 0.9 : 0.1));
        }
        long[] m = model.get(SERIES[s]);
        if (x == 2) {
          if (m == null) {
            m = new long[] {now, 0, -1, 0, -1};
            model.put(SERIES[s], m);
          }
          m[1]++;
          m[3] = 0;
          m[4] = -1;
          if (m[2] < 0 && m[1] >= forN) {
            m[2] = now;
          }
        } else if (m != null) {
          boolean firing = m[2] >= 0;
          if (firing && m[3] < keepN) {
            m[4] = m[3] == 0 ? now : m[4];
            m[3]++;
          } else {
            model.remove(SERIES[s]);
            if (firing) {
              expectResolved.add(SERIES[s]);
            }
          }
        }
      }
      AlertEvaluator.Evaluation e = ev.evaluate(Instant.ofEpochSecond(now), values);

      assertThat(e.resolved())
          .extracting(a -> a.labels().get("s"))
          .containsExactlyInAnyOrderElementsOf(expectResolved);
      Map<String, Alert> active = new HashMap<>();
      e.active().forEach(a -> active.put(a.labels().get("s"), a));
      assertThat(active.keySet()).as("step %d", k).isEqualTo(model.keySet());
      for (Map.Entry<String, long[]> me : model.entrySet()) {
        long[] m = me.getValue();
        Alert a = active.get(me.getKey());
        assertThat(a.state()).isEqualTo(m[2] >= 0 ? AlertState.FIRING : AlertState.PENDING);
        assertThat(a.activeAt()).isEqualTo(Instant.ofEpochSecond(m[0]));
        assertThat(a.firingSince()).isEqualTo(m[2] < 0 ? null : Instant.ofEpochSecond(m[2]));
        assertThat(a.keepFiringSince()).isEqualTo(m[4] < 0 ? null : Instant.ofEpochSecond(m[4]));
      }
    }
  }
}
