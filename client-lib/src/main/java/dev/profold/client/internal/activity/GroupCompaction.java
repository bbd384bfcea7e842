package dev.profold.client.internal.activity;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * The rule a delta's thread groups follow, whether made by one interval's close or by merging two
 * buffered deltas: largest wall time first (ties by name), at most {@link
 * ThreadActivity#MAX_GROUPS} (the protocol's limit), the smallest beyond it folded into {@link
 * ThreadActivity#OTHER_GROUP}, which comes last. A group already named {@code _other_} takes the
 * fold too, so that no name comes twice. Stateless.
 */
public final class GroupCompaction {
  private GroupCompaction() {}

  /**
   * {@code groups} (by name) in that order and number.
   *
   * @param wall a group's wall time
   * @param name a group's name
   * @param intoOther the one {@code _other_} group holding all the given ones: the existing {@code
   *     _other_} (if any) first, then the groups beyond the limit
   */
  public static <G> List<G> compact(
      Map<String, G> groups,
      ToLongFunction<G> wall,
      Function<G, String> name,
      Function<List<G>, G> intoOther) {
    G other = groups.get(ThreadActivity.OTHER_GROUP);
    List<G> sorted = new ArrayList<>(groups.size());
    for (Map.Entry<String, G> e : groups.entrySet()) {
      if (!e.getKey().equals(ThreadActivity.OTHER_GROUP)) {
        sorted.add(e.getValue());
      }
    }
    sorted.sort(Comparator.comparingLong((G g) -> -wall.applyAsLong(g)).thenComparing(name));
    if (sorted.size() + (other == null ? 0 : 1) > ThreadActivity.MAX_GROUPS) {
      List<G> folded = new ArrayList<>();
      if (other != null) {
        folded.add(other);
      }
      folded.addAll(sorted.subList(ThreadActivity.MAX_GROUPS - 1, sorted.size()));
      other = intoOther.apply(folded);
      sorted = new ArrayList<>(sorted.subList(0, ThreadActivity.MAX_GROUPS - 1));
    }
    if (other != null) {
      sorted.add(other);
    }
    return sorted;
  }
}
