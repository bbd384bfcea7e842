package dev.profold.collector.dictionary;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;

/**
 * {@link GlobalDictionary}'s lifetime rules: strings and path nodes live while referenced, freed
 * ids wait for {@link GlobalDictionary#recycleRetired} before naming anything else, and the bound
 * counts only entries in use.
 */
class GlobalDictionaryTest {
  private final GlobalDictionary d = new GlobalDictionary(1_000_000);
  private final int region = d.internAttribute("region", AttributeType.PATH, false, "");

  @Test
  void aStringLivesWhileReferencedAndItsIdWaitsForRecyclingOnceFreed() {
    int a = d.internString("tenant-a");
    assertThat(d.internString("tenant-a")).isEqualTo(a);
    d.releaseString(a);
    assertThat(d.string(a)).isEqualTo("tenant-a");
    assertThat(d.size()).isEqualTo(2);

    d.releaseString(a);
    assertThat(d.string(a)).isNull();
    assertThat(d.size()).isEqualTo(1);
    assertThat(d.freed()).isEqualTo(1);
    assertThat(d.retired()).isEqualTo(1);

    int b = d.internString("tenant-b");
    assertThat(b).as("a retired id is not handed out before recycling").isNotEqualTo(a);
    d.recycleRetired();
    assertThat(d.retired()).isZero();
    int c = d.internString("tenant-c");
    assertThat(c).isEqualTo(a);
    assertThat(d.string(c)).isEqualTo("tenant-c");
    assertThat(d.internString("tenant-a")).as("interned anew").isNotEqualTo(a);
  }

  @Test
  void attributesTakeAtMostASixteenthOfTheBoundSoStringsAndPathsKeepTheirRoom() {
    GlobalDictionary small = new GlobalDictionary(160_000);
    assertThat(GlobalDictionary.maxAttributes(160_000)).isEqualTo(10_000);
    assertThat(GlobalDictionary.maxAttributes(1_000_000)).isEqualTo(62_500);
    assertThat(GlobalDictionary.maxAttributes(20_000)).as("at least 4096").isEqualTo(4096);
    assertThat(GlobalDictionary.maxAttributes(100)).as("all of a small one").isEqualTo(100);
    for (int i = 0; i < 10_000; i++) {
      small.internAttribute("m" + i, AttributeType.DOUBLE, true, "seconds");
    }
    assertThat(small.internAttribute("m7", AttributeType.DOUBLE, true, "seconds"))
        .as("a known attribute is still found")
        .isPositive();
    assertThatThrownBy(() -> small.internAttribute("m10000", AttributeType.DOUBLE, true, "seconds"))
        .isInstanceOf(DictionaryFullException.class)
        .hasMessageContaining("holds 10000 attributes")
        .hasMessageContaining("belong in attribute values, not names");
    assertThat(small.size()).isEqualTo(10_000);
    int s = small.internString("still room for strings");
    assertThat(small.string(s)).isEqualTo("still room for strings");
  }

  @Test
  void aPathNodeHoldsItsParentAndNameAndADeepChainIsFreedWithoutRecursion() {
    int name = d.internString("f");
    int parent = 0;
    int depth = 100_000;
    for (int i = 0; i < depth; i++) {
      int node = d.internPathNode(parent, region, name, "compute");
      if (parent != 0) {
        d.releasePathNode(parent); // the child holds it now
      }
      parent = node;
    }
    d.releaseString(name);
    assertThat(d.string(name)).as("the nodes hold their name").isEqualTo("f");
    assertThat(d.pathNode(parent).depth()).isEqualTo(depth);
    assertThat(d.size()).isEqualTo(1 + 1 + depth);

    d.releasePathNode(parent);
    assertThat(d.size()).as("only the attribute is left").isEqualTo(1);
    assertThat(d.freed()).isEqualTo(depth + 1);
    assertThat(d.string(name)).isNull();
  }

  @Test
  void theBoundCountsOnlyEntriesInUse() {
    GlobalDictionary small = new GlobalDictionary(3);
    int a = small.internString("a");
    small.internString("b");
    small.internString("c");
    assertThatThrownBy(() -> small.internString("d"))
        .isInstanceOf(DictionaryFullException.class)
        .hasMessageContaining("limits.dictionary_entries");
    assertThat(small.internString("a")).as("known content needs no room").isEqualTo(a);
    small.releaseString(a);
    small.releaseString(a);
    assertThat(small.string(small.internString("d"))).isEqualTo("d");
  }

  @Test
  void releasingMoreOftenThanInternedIsACallersBug() {
    int a = d.internString("x");
    d.releaseString(a);
    assertThatThrownBy(() -> d.releaseString(a)).isInstanceOf(IllegalStateException.class);
  }

  /** One reference held by the test: a string or a path node, with the content it must name. */
  private record Held(boolean node, int id, String content) {}

  /**
   * Law: whatever the interleaving of interns, releases and recycling, an id the caller holds names
   * what it was interned for, and the dictionary's size is exactly the entries held directly or
   * through a node (its ancestors and their names).
   */
  @Property(tries = 200)
  void heldIdsKeepTheirMeaningAndSizeIsWhatIsReachable(@ForAll long seed) {
    GlobalDictionary g = new GlobalDictionary(1_000_000);
    int attr = g.internAttribute("region", AttributeType.PATH, false, "");
    Random random = new Random(seed);
    List<Held> held = new ArrayList<>();
    for (int step = 0; step < 300; step++) {
      int op = random.nextInt(10);
      if (op < 3) {
        String s = "s" + random.nextInt(6);
        held.add(new Held(false, g.internString(s), s));
      } else if (op < 6) {
        List<Held> names = held.stream().filter(h -> !h.node()).toList();
        if (names.isEmpty()) {
          continue;
        }
        Held name = names.get(random.nextInt(names.size()));
        List<Held> nodes = held.stream().filter(Held::node).toList();
        Held parent = nodes.isEmpty() || random.nextBoolean() ? null : pick(nodes, random);
        int id = g.internPathNode(parent == null ? 0 : parent.id(), attr, name.id(), "");
        String path = parent == null ? name.content() : parent.content() + "/" + name.content();
        held.add(new Held(true, id, path));
      } else if (op < 9) {
        if (held.isEmpty()) {
          continue;
        }
        Held h = held.remove(random.nextInt(held.size()));
        if (h.node()) {
          g.releasePathNode(h.id());
        } else {
          g.releaseString(h.id());
        }
      } else {
        g.recycleRetired();
      }
      Set<String> strings = new HashSet<>();
      Set<String> paths = new HashSet<>();
      for (Held h : held) {
        if (h.node()) {
          assertThat(g.path(h.id())).isEqualTo(h.content());
          String[] segments = h.content().split("/");
          StringBuilder prefix = new StringBuilder();
          for (String segment : segments) {
            prefix.append(prefix.length() == 0 ? "" : "/").append(segment);
            paths.add(prefix.toString());
            strings.add(segment);
          }
        } else {
          assertThat(g.string(h.id())).isEqualTo(h.content());
          strings.add(h.content());
        }
      }
      assertThat(g.size()).isEqualTo(1 + strings.size() + paths.size());
    }
  }

  private static Held pick(List<Held> from, Random random) {
    return from.get(random.nextInt(from.size()));
  }
}
