package dev.profold.collector.analysis;

import java.util.ArrayList;
import java.util.List;

/** Ready-made {@link DerivedValues}: none, and several sources seen as one. */
public final class DerivedValueSources {
  private DerivedValueSources() {}

  /** A source that never has values. */
  public static DerivedValues none() {
    return List::of;
  }

  /** The values of every source in {@code sources}, in that order, as one immutable list. */
  public static DerivedValues concat(List<DerivedValues> sources) {
    List<DerivedValues> copy = List.copyOf(sources);
    return () -> {
      List<DerivedValue> out = new ArrayList<>();
      for (DerivedValues s : copy) {
        out.addAll(s.current());
      }
      return List.copyOf(out);
    };
  }
}
