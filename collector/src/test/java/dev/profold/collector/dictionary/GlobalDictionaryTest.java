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
 * {@link GlobalDictionary}'s lifetime rules: strings, attributes and path nodes live while
 * referenced, freed ids wait for {@link GlobalDictionary#recycleRetired} before naming anything
 * else, and the bound counts only entries in use.
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
  void anAttributeLivesWhileAStreamOrAPathNodeHoldsItAndItsIdWaitsForRecycling() {
    GlobalDictionary g = new GlobalDictionary(1_000);
    int path = g.internAttribute("region", AttributeType.PATH, false, "");
    int time = g.internAttribute("time", AttributeType.DOUBLE, true, "seconds");
    assertThat(g.internAttribute("region", AttributeType.PATH, false, ""))
        .as("a second stream's reference")
        .isEqualTo(path);
    int name = g.internString("main");
    int node = g.internPathNode(0, path, name, "compute");
    g.releaseString(name);
    assertThat(g.size()).isEqualTo(4);

    g.releaseAttribute(path);
    g.releaseAttribute(path);
    assertThat(g.attribute(path).name()).as("the node holds it").isEqualTo("region");
    g.releasePathNode(node);
    assertThat(g.attribute(path)).as("freed with the node, its last holder").isNull();
    assertThat(g.size()).isEqualTo(1);
    assertThat(g.freed()).as("node, name, attribute").isEqualTo(3);

    int other = g.internAttribute("bytes", AttributeType.INT, true, "bytes");
    assertThat(other).as("a retired id is not handed out before recycling").isNotEqualTo(path);
    g.recycleRetired();
    int reused = g.internAttribute("queue", AttributeType.STRING, false, "");
    assertThat(reused).isEqualTo(path);
    assertThat(g.attribute(reused))
        .isEqualTo(new Attribute(path, "queue", AttributeType.STRING, false, ""));
    assertThat(g.internAttribute("region", AttributeType.PATH, false, ""))
        .as("interned anew")
        .isNotEqualTo(path);
    assertThat(g.attribute(time).name()).isEqualTo("time");
    g.releaseAttribute(time);
    assertThatThrownBy(() -> g.releaseAttribute(time)).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void theAttributeShareComesFreeAsTheirStreamsEnd() {
    GlobalDictionary small = new GlobalDictionary(100);
    List<Integer> held = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      held.add(small.internAttribute("user_" + i, AttributeType.DOUBLE, true, "seconds"));
    }
    assertThatThrownBy(() -> small.internAttribute("time", AttributeType.DOUBLE, true, "seconds"))
        .isInstanceOf(DictionaryFullException.class)
        .hasMessageContaining("freed when the last stream that defined it ends");
    for (int id : held) {
      small.releaseAttribute(id); // the stream that defined them ended
    }
    assertThat(small.size()).isZero();
    int time = small.internAttribute("time", AttributeType.DOUBLE, true, "seconds");
    assertThat(small.attribute(time).name()).isEqualTo("time");
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
  void streamIdsAreTakenUpToTheLimitAndGivenBack() {
    GlobalDictionary g = new GlobalDictionary(10, 3);
    assertThat(g.maxStreamIds()).isEqualTo(3);
    g.takeStreamId();
    g.takeStreamId();
    g.takeStreamId();
    assertThat(g.streamIds()).isEqualTo(3);
    assertThatThrownBy(g::takeStreamId)
        .isInstanceOf(DictionaryFullException.class)
        .hasMessageContaining("open streams map 3 ids")
        .hasMessageContaining("raise limits.stream_ids");
    g.giveStreamIds(2);
    g.takeStreamId();
    assertThat(g.streamIds()).isEqualTo(2);
    assertThatThrownBy(() -> g.giveStreamIds(3)).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void releasingMoreOftenThanInternedIsACallersBug() {
    int a = d.internString("x");
    d.releaseString(a);
    assertThatThrownBy(() -> d.releaseString(a)).isInstanceOf(IllegalStateException.class);
    d.recycleRetired();
    int b = d.internString("y");
    assertThat(b).as("the id is reused").isEqualTo(a);
    d.releaseString(b);
    assertThat(d.size()).as("the earlier bug left no debt on the id").isEqualTo(1);
  }

  @Test
  void aPathNodeOfAnAttributeOrParentNotInUseIsRefusedWithoutAChange() {
    int name = d.internString("f");
    int freedAttribute = d.internAttribute("other", AttributeType.PATH, false, "");
    d.releaseAttribute(freedAttribute);
    int size = d.size();
    assertThatThrownBy(() -> d.internPathNode(0, 0, name, ""))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> d.internPathNode(0, freedAttribute, name, ""))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> d.internPathNode(12345, region, name, ""))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> d.releaseAttribute(freedAttribute))
        .isInstanceOf(IllegalStateException.class);
    assertThat(d.size()).isEqualTo(size);
    assertThat(d.retired()).isEqualTo(1);
    assertThatThrownBy(() -> d.internString(null)).isInstanceOf(NullPointerException.class);
    assertThat(d.size()).isEqualTo(size);
  }

  /** What a reference held by the test is to. */
  private enum What {
    STRING,
    ATTRIBUTE,
    NODE
  }

  /**
   * One reference held by the test: a string, an attribute (its name) or a path node (its path,
   * under attribute {@code attribute}), with the content it must name.
   */
  private record Held(What what, int id, String content, String attribute) {}

  /**
   * Law: whatever the interleaving of interns, releases and recycling, an id the caller holds names
   * what it was interned for, and the dictionary's size is exactly the entries held directly or
   * through a node (its ancestors, their names and their attribute).
   */
  @Property(tries = 200)
  void heldIdsKeepTheirMeaningAndSizeIsWhatIsReachable(@ForAll long seed) {
    GlobalDictionary g = new GlobalDictionary(1_000_000);
    Random random = new Random(seed);
    List<Held> held = new ArrayList<>();
    for (int step = 0; step < 300; step++) {
      int op = random.nextInt(12);
      if (op < 3) {
        String s = "s" + random.nextInt(6);
        held.add(new Held(What.STRING, g.internString(s), s, ""));
      } else if (op < 5) {
        String a = "a" + random.nextInt(3);
        held.add(
            new Held(What.ATTRIBUTE, g.internAttribute(a, AttributeType.PATH, false, ""), a, a));
      } else if (op < 8) {
        List<Held> names = of(held, What.STRING);
        List<Held> attributes = of(held, What.ATTRIBUTE);
        if (names.isEmpty() || attributes.isEmpty()) {
          continue;
        }
        Held name = pick(names, random);
        List<Held> nodes = of(held, What.NODE);
        Held parent = nodes.isEmpty() || random.nextBoolean() ? null : pick(nodes, random);
        // A child is of its parent's attribute, which the parent holds.
        Held top = parent == null ? pick(attributes, random) : null;
        int attr = parent == null ? top.id() : g.pathNode(parent.id()).attribute();
        String attribute = parent == null ? top.content() : parent.attribute();
        int id = g.internPathNode(parent == null ? 0 : parent.id(), attr, name.id(), "");
        String path = parent == null ? name.content() : parent.content() + "/" + name.content();
        held.add(new Held(What.NODE, id, path, attribute));
      } else if (op < 11) {
        if (held.isEmpty()) {
          continue;
        }
        Held h = held.remove(random.nextInt(held.size()));
        switch (h.what()) {
          case STRING -> g.releaseString(h.id());
          case ATTRIBUTE -> g.releaseAttribute(h.id());
          case NODE -> g.releasePathNode(h.id());
        }
      } else {
        g.recycleRetired();
      }
      Set<String> strings = new HashSet<>();
      Set<String> attributes = new HashSet<>();
      Set<String> paths = new HashSet<>();
      for (Held h : held) {
        switch (h.what()) {
          case STRING -> {
            assertThat(g.string(h.id())).isEqualTo(h.content());
            strings.add(h.content());
          }
          case ATTRIBUTE -> {
            assertThat(g.attribute(h.id()).name()).isEqualTo(h.content());
            attributes.add(h.content());
          }
          case NODE -> {
            assertThat(g.path(h.id())).isEqualTo(h.content());
            assertThat(g.attribute(g.pathNode(h.id()).attribute()).name()).isEqualTo(h.attribute());
            attributes.add(h.attribute());
            String[] segments = h.content().split("/");
            StringBuilder prefix = new StringBuilder();
            for (String segment : segments) {
              prefix.append(prefix.length() == 0 ? "" : "/").append(segment);
              paths.add(h.attribute() + ":" + prefix);
              strings.add(segment);
            }
          }
        }
      }
      assertThat(g.size()).isEqualTo(strings.size() + attributes.size() + paths.size());
    }
  }

  private static List<Held> of(List<Held> held, What what) {
    return held.stream().filter(h -> h.what() == what).toList();
  }

  private static Held pick(List<Held> from, Random random) {
    return from.get(random.nextInt(from.size()));
  }
}
