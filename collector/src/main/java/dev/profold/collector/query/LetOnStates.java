package dev.profold.collector.query;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Watches the records a query reads for LET arithmetic on pre-aggregated states. {@code scale},
 * {@code ratio} and {@code truncate} compute on single values; an input that is a {@link
 * PreAggregated} state (the records of a scheme, an archive, {@code --partial} output) leaves the
 * derived attribute out of the record (or as it was, when the record has one already), and the
 * query's columns on it come out empty or unchanged. {@link #note} says so, and what works on
 * states instead. Each record is seen as LET sees it: the definitions run in order on a copy, so an
 * input that an earlier {@code first(...)} copied from a state counts too. Not thread-safe.
 */
public final class LetOnStates {
  /** One LET definition: its numeric inputs, and its derivation (run on the copy after it). */
  private record Step(
      LetBinding binding, List<String> numericInputs, LetFunctions.Derivation run) {}

  /** The first input of a definition found to be a state, and in how many records. */
  private static final class Found {
    final String attribute;
    long records;
    boolean targetKept; // some record had the target already: it kept that value

    Found(String attribute) {
      this.attribute = attribute;
    }
  }

  private final List<Step> steps = new ArrayList<>();
  private final boolean any;
  private final Map<LetBinding, Found> found = new LinkedHashMap<>();

  /** A watcher for the records {@code evaluator} reads. */
  public LetOnStates(QueryEvaluator evaluator) {
    boolean numeric = false;
    List<LetBinding> let = evaluator.query().let();
    for (int k = 0; k < let.size(); k++) {
      LetBinding b = let.get(k);
      OperatorCall c = b.function();
      List<String> inputs = new ArrayList<>();
      for (int i = 0; i < Math.min(numericInputs(c), c.args().size()); i++) {
        inputs.add(c.arg(i));
      }
      numeric |= !inputs.isEmpty();
      steps.add(new Step(b, inputs, evaluator.derivations().get(k)));
    }
    this.any = numeric;
  }

  /** One record the query read (before LET). */
  public void see(Map<String, ?> record) {
    if (!any) {
      return;
    }
    Map<String, Object> r = new HashMap<>(record);
    for (Step s : steps) {
      for (String input : s.numericInputs()) {
        if (r.get(input) instanceof PreAggregated) {
          Found f = found.computeIfAbsent(s.binding(), k -> new Found(input));
          f.records++;
          f.targetKept |= r.containsKey(s.binding().target());
          break;
        }
      }
      s.run().apply(r);
    }
  }

  /** The note, or empty when no LET input was a state. */
  public String note() {
    List<String> notes = new ArrayList<>();
    found.forEach((b, f) -> notes.add(note(b, f)));
    return String.join("; ", notes);
  }

  private static String note(LetBinding b, Found f) {
    OperatorCall c = b.function();
    String target = "'" + b.target() + "'";
    return "LET "
        + Lexer.quote(b.target())
        + " = "
        + c
        + " computes on single values, and '"
        + f.attribute
        + "' is a pre-aggregated state (many values folded) in "
        + f.records
        + (f.records == 1 ? " record" : " records")
        + " read, "
        + (f.targetKept
            ? "where " + target + " kept the value it had"
            : "which it left without " + target)
        + hint(c);
  }

  /** What computes the same on states, for the functions that have an operator. */
  private static String hint(OperatorCall c) {
    List<String> args = new ArrayList<>();
    for (int i = 0; i < c.args().size(); i++) {
      String text = c.args().get(i).text();
      args.add(i < numericInputs(c) ? Lexer.quote(text) : text); // names quoted, numbers not
    }
    String name = c.name().toLowerCase(Locale.ROOT);
    if (name.equals("scale") && args.size() == 2) {
      return "; on states scale an operator's result instead: SELECT scale("
          + args.get(0)
          + ", "
          + args.get(1)
          + ") is "
          + args.get(1)
          + " x sum("
          + args.get(0)
          + ")";
    }
    if (name.equals("ratio") && (args.size() == 2 || args.size() == 3)) {
      String s = args.size() == 3 ? args.get(2) + " x " : "";
      return "; on states take the ratio of sums instead: SELECT ratio("
          + String.join(", ", args)
          + ") is "
          + s
          + "sum("
          + args.get(0)
          + ") / sum("
          + args.get(1)
          + ")";
    }
    return "";
  }

  /**
   * How many of {@code c}'s first arguments are attributes it computes on (the others are numbers);
   * 0 for {@code first(...)}, which copies a state as it would a value.
   */
  private static int numericInputs(OperatorCall c) {
    return switch (c.name().toLowerCase(Locale.ROOT)) {
      case "scale", "truncate" -> 1;
      case "ratio" -> 2;
      default -> 0;
    };
  }
}
