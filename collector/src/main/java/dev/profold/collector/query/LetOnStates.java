package dev.profold.collector.query;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Watches the records a query reads for LET arithmetic on pre-aggregated states. {@code scale},
 * {@code ratio} and {@code truncate} compute on single values; an input that is a {@link
 * PreAggregated} state (the records of a scheme, an archive, {@code --partial} output) leaves the
 * record without the derived attribute, and the query's columns on it come out empty. {@link #note}
 * says so, and what works on states instead. Not thread-safe.
 */
public final class LetOnStates {
  private record Input(LetBinding binding, String attribute) {}

  private final List<Input> inputs = new ArrayList<>();
  private Input found;
  private long records;

  public LetOnStates(Query query) {
    for (LetBinding b : query.let()) {
      OperatorCall c = b.function();
      int numeric =
          switch (c.name().toLowerCase(Locale.ROOT)) {
            case "scale", "truncate" -> 1;
            case "ratio" -> 2;
            default -> 0; // first(...) copies a state as it would a value
          };
      for (int i = 0; i < Math.min(numeric, c.args().size()); i++) {
        inputs.add(new Input(b, c.arg(i)));
      }
    }
  }

  /** One record the query read (before LET). */
  public void see(Map<String, ?> record) {
    for (Input in : inputs) {
      if (record.get(in.attribute()) instanceof PreAggregated) {
        if (found == null) {
          found = in;
        }
        records++;
        return;
      }
    }
  }

  /** The note, or empty when no LET input was a state. */
  public String note() {
    if (found == null) {
      return "";
    }
    OperatorCall c = found.binding().function();
    String target = found.binding().target();
    String hint =
        c.name().equalsIgnoreCase("scale") && c.args().size() == 2
            ? "; on states scale an operator's result instead: SELECT scale("
                + found.attribute()
                + ", "
                + c.args().get(1).text()
                + ") is "
                + c.args().get(1).text()
                + " x sum("
                + found.attribute()
                + ")"
            : "";
    return "LET "
        + target
        + " = "
        + c
        + " computes on single values, and '"
        + found.attribute()
        + "' is a pre-aggregated state (many values folded) in "
        + records
        + (records == 1 ? " record" : " records")
        + " read, which it left without '"
        + target
        + "'"
        + hint;
  }
}
