package dev.profold.client.internal.export;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.PathNode;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ValueType;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DeltaEncoderTest {
  private final DeltaEncoder enc =
      new DeltaEncoder(
          SourceIdentity.newBuilder().setService("s").setInstance("i").setIncarnationId(1).build());

  @Test
  void idsAreStableAndDistinct() {
    int region = enc.dimension("region", ValueType.VALUE_TYPE_PATH);
    int time = enc.measurement("time", ValueType.VALUE_TYPE_DOUBLE, "seconds");
    assertThat(enc.dimension("region", ValueType.VALUE_TYPE_PATH)).isEqualTo(region);
    assertThat(time).isNotEqualTo(region);
    int main = enc.pathNode(0, region, "main", RegionKind.REGION_KIND_COMPUTE);
    int child = enc.pathNode(main, region, "db", RegionKind.REGION_KIND_IO);
    assertThat(enc.pathNode(main, region, "db", RegionKind.REGION_KIND_IO)).isEqualTo(child);
    assertThat(enc.pathNode(0, region, "db", RegionKind.REGION_KIND_IO)).isNotEqualTo(child);
  }

  @Test
  void eachReferencedDefinitionTravelsOncePerStreamAndAgainOnANewStream() {
    int region = enc.dimension("region", ValueType.VALUE_TYPE_PATH);
    int main = enc.pathNode(0, region, "main", RegionKind.REGION_KIND_COMPUTE);
    Delta first = enc.prepare(at(1, region, main)).build();
    assertThat(first.hasSource()).isTrue();
    assertThat(first.getDictionary().getStringsMap()).containsValue("main");
    assertThat(first.getDictionary().getAttributesCount()).isEqualTo(1);
    assertThat(first.getDictionary().getPathNodesCount()).isEqualTo(1);

    Delta second = enc.prepare(at(2, region, main)).build();
    assertThat(second.hasSource()).isFalse();
    assertThat(second.hasDictionary()).isFalse();

    int child = enc.pathNode(main, region, "child", RegionKind.REGION_KIND_WAIT);
    int unused = enc.pathNode(0, region, "unused", RegionKind.REGION_KIND_IO);
    Delta third = enc.prepare(at(3, region, child)).build();
    assertThat(third.getDictionary().getStringsMap()).containsOnlyKeys(2).containsValue("child");
    assertThat(third.getDictionary().getPathNodesCount()).isEqualTo(1);
    assertThat(third.getDictionary().getAttributesCount()).isZero();
    assertThat(enc.prepare(at(4, region, main)).build().hasDictionary()).isFalse();

    enc.newStream();
    Delta resent = enc.prepare(at(3, region, child)).build();
    assertThat(resent.hasSource()).isTrue();
    assertThat(resent.getDictionary().getStringsMap().values()).containsExactly("main", "child");
    assertThat(resent.getDictionary().getAttributesCount()).isEqualTo(1);
    // The parent before the child; the node no delta references stays home.
    assertThat(resent.getDictionary().getPathNodesList())
        .extracting(PathNode::getId)
        .containsExactly(main, child)
        .doesNotContain(unused);
  }

  @Test
  void ageingFreesOnlyWhatNoDeltaPinOrRecentLookUpUses() {
    int region = enc.dimension("region", ValueType.VALUE_TYPE_PATH);
    int tenant = enc.dimension("tenant", ValueType.VALUE_TYPE_STRING);
    int main = enc.pathNode(0, region, "main", RegionKind.REGION_KIND_COMPUTE);
    int buffered = enc.pathNode(main, region, "buffered", RegionKind.REGION_KIND_IO);
    int pinned = enc.pathNode(0, region, "pinned", RegionKind.REGION_KIND_WAIT);
    int gone = enc.pathNode(main, region, "gone", RegionKind.REGION_KIND_IO);
    int acme = enc.string("acme");
    int old = enc.string("old-tenant");
    enc.addPinSource(ids -> ids.set(pinned));
    Delta inBuffer =
        at(1, region, buffered)
            .addEntries(
                Entry.newBuilder()
                    .addKey(AttributeValue.newBuilder().setAttributeId(tenant).setStringId(acme)))
            .build();

    assertThat(ageRound(inBuffer)).as("everything was looked up this round").isZero();
    assertThat(ageRound(inBuffer)).as("or in the previous one").isZero();
    assertThat(ageRound(inBuffer)).as("gone, its name and old-tenant").isEqualTo(3);

    assertThat(enc.definitions().getPathNodesList())
        .extracting(PathNode::getId)
        .containsExactlyInAnyOrder(main, buffered, pinned);
    assertThat(enc.definitions().getStringsMap().values())
        .containsExactlyInAnyOrder("main", "buffered", "pinned", "acme");
    assertThat(enc.freed()).isEqualTo(3);

    // Needed again: defined anew, under ids the current stream never mapped to anything else.
    int goneAgain = enc.pathNode(main, region, "gone", RegionKind.REGION_KIND_IO);
    int oldAgain = enc.string("old-tenant");
    assertThat(goneAgain).isNotEqualTo(gone);
    assertThat(oldAgain).isNotEqualTo(old);
    enc.newStream(); // now the freed ids may name something else
    assertThat(enc.pathNode(0, region, "fresh", RegionKind.REGION_KIND_IO)).isEqualTo(gone);
    Delta resent = enc.prepare(at(2, region, goneAgain)).build();
    assertThat(resent.getDictionary().getPathNodesList())
        .extracting(PathNode::getId)
        .containsExactly(main, goneAgain);
  }

  @Test
  void aChildGivenARecycledIdBelowItsParentsIsStillDefinedAfterItsParent() {
    int region = enc.dimension("region", ValueType.VALUE_TYPE_PATH);
    enc.pathNode(0, region, "a", RegionKind.REGION_KIND_IO);
    enc.pathNode(0, region, "b", RegionKind.REGION_KIND_IO);
    int parent = enc.pathNode(0, region, "parent", RegionKind.REGION_KIND_COMPUTE);
    enc.addPinSource(ids -> ids.set(parent)); // a context in use
    for (int round = 0; round < 3; round++) {
      BitSet paths = new BitSet();
      enc.pin(paths);
      enc.age(new BitSet(), paths);
    }
    enc.newStream(); // a and b's ids are free again, both below the parent's
    int child = enc.pathNode(parent, region, "child", RegionKind.REGION_KIND_WAIT);
    assertThat(child).as("a recycled id").isLessThan(parent);

    Delta d = enc.prepare(at(1, region, child)).build();
    List<PathNode> nodes = d.getDictionary().getPathNodesList();
    assertThat(nodes).extracting(PathNode::getId).containsExactlyInAnyOrder(parent, child);
    // protocol §3: a node's parent must be defined earlier in the list (or an earlier delta)
    assertThat(nodes).extracting(PathNode::getId).containsExactly(parent, child);
  }

  @Test
  void theOverflowDefinitionsAreNeverFreed() {
    DeltaEncoder small =
        new DeltaEncoder(SourceIdentity.newBuilder().setService("s").build(), 4096);
    int region = small.dimension("region", ValueType.VALUE_TYPE_PATH);
    int overflowNode = -1;
    for (int i = 0; overflowNode < 0; i++) {
      int node = small.pathNode(0, region, "n" + i + "x".repeat(100), RegionKind.REGION_KIND_IO);
      if (small.definitions().getStringsMap().containsValue(DeltaEncoder.OVERFLOW)) {
        overflowNode = node;
      }
    }
    for (int round = 0; round < 3; round++) {
      small.age(new BitSet(), new BitSet());
    }
    assertThat(small.definitions().getPathNodesList())
        .extracting(PathNode::getId)
        .containsExactly(overflowNode);
    assertThat(small.definitions().getStringsMap().values()).containsExactly(DeltaEncoder.OVERFLOW);
    assertThat(small.ageingDue()).isFalse();
  }

  @Test
  void aChurningProcessAgedEveryOtherIntervalNeverOverflows() {
    DeltaEncoder small =
        new DeltaEncoder(SourceIdentity.newBuilder().setService("s").build(), 16 * 1024);
    int region = small.dimension("region", ValueType.VALUE_TYPE_PATH);
    for (int interval = 0; interval < 500; interval++) {
      int main = small.pathNode(0, region, "main", RegionKind.REGION_KIND_COMPUTE);
      Delta.Builder d = at(interval + 1, region);
      for (int j = 0; j < 10; j++) {
        int node =
            small.pathNode(main, region, "op-" + interval + "-" + j, RegionKind.REGION_KIND_IO);
        d.addEntries(
            Entry.newBuilder()
                .addKey(AttributeValue.newBuilder().setAttributeId(region).setPathNodeId(node)));
      }
      Delta built = d.build();
      if (interval % 2 == 1 && small.ageingDue()) {
        BitSet strings = new BitSet();
        BitSet paths = new BitSet();
        DeltaEncoder.references(built, strings, paths); // the buffer holds the last delta
        small.age(strings, paths);
      }
    }
    assertThat(small.takeLimitCounts()).as("nothing found the dictionary full").isEmpty();
    assertThat(small.freed()).isGreaterThan(4000);
  }

  /** One ageing round, the buffer holding {@code buffered}, the pin sources asked. */
  private int ageRound(Delta buffered) {
    BitSet strings = new BitSet();
    BitSet paths = new BitSet();
    DeltaEncoder.references(buffered, strings, paths);
    enc.pin(paths);
    return enc.age(strings, paths);
  }

  /** A delta with one entry per path node, keyed on {@code attribute}. */
  private static Delta.Builder at(long sequence, int attribute, int... nodes) {
    Delta.Builder d = Delta.newBuilder().setSequence(sequence);
    for (int node : nodes) {
      d.addEntries(
          Entry.newBuilder()
              .addKey(AttributeValue.newBuilder().setAttributeId(attribute).setPathNodeId(node)));
    }
    return d;
  }

  /** A delta with one entry per string, keyed on string dimension {@code attribute}. */
  private static Delta.Builder strings(int attribute, List<Integer> stringIds) {
    Delta.Builder d = Delta.newBuilder().setSequence(1);
    for (int id : stringIds) {
      d.addEntries(
          Entry.newBuilder()
              .addKey(AttributeValue.newBuilder().setAttributeId(attribute).setStringId(id)));
    }
    return d;
  }

  @org.junit.jupiter.api.Test
  void stringsAreCutToTheProtocolsLengthOnACharacterBoundaryAndCounted() {
    DeltaEncoder e = encoder();
    String emoji = "\uD83D\uDE00"; // 4 bytes in UTF-8
    String name = "x".repeat(4094) + emoji + "tail"; // the emoji would end at byte 4098
    int id = e.string(name);
    int thread = e.dimension("thread", ValueType.VALUE_TYPE_STRING);
    Delta d = e.prepare(strings(thread, List.of(id))).build();
    String sent = d.getDictionary().getStringsMap().get(id);
    assertThat(sent).isEqualTo("x".repeat(4094));
    assertThat(sent.getBytes(StandardCharsets.UTF_8).length)
        .isLessThanOrEqualTo(DeltaEncoder.MAX_STRING_BYTES);
    assertThat(e.string(name)).isEqualTo(id);
    assertThat(e.takeLimitCounts()) // each time it was given
        .containsExactly(Map.entry("string_cut", 2L));
    assertThat(e.takeLimitCounts()).isEmpty();
  }

  @org.junit.jupiter.api.Test
  void aFullDictionaryGivesNewStringsTheOverflowStringAndCountsThem() {
    DeltaEncoder e = encoder();
    List<Integer> ids = new ArrayList<>();
    int n = 0;
    while (ids.size() < 2 || !ids.get(ids.size() - 1).equals(ids.get(ids.size() - 2))) {
      ids.add(e.string(String.format("%05d", n++) + "y".repeat(3995))); // 4,000 bytes each
    }
    int overflow = ids.get(ids.size() - 1);
    // 4 MiB hold 1,045 such strings (4,000 bytes and 13 of map entry each); the next two got the
    // overflow string's id.
    assertThat(n).isEqualTo(1045 + 2);
    assertThat(ids.subList(0, 1045)).doesNotHaveDuplicates().doesNotContain(overflow);
    assertThat(e.string(DeltaEncoder.OVERFLOW)).isEqualTo(overflow);
    assertThat(e.string("00000" + "y".repeat(3995))).isEqualTo(ids.get(0)); // ids are kept
    assertThat(e.takeLimitCounts()).containsExactly(Map.entry("dictionary_full", 2L));
    int thread = e.dimension("thread", ValueType.VALUE_TYPE_STRING);
    Delta d = e.prepare(strings(thread, ids)).build(); // a new stream's first message, at most
    assertThat(d.getDictionary().getStringsCount()).isEqualTo(1046);
    assertThat(d.getSerializedSize())
        .isLessThan((int) DeltaEncoder.MAX_DICTIONARY_BYTES + (1 << 20));
  }

  @Test
  void aResetToAMarkMakesTheNextMessageCarryWhatTheUnsentOneWouldHave() {
    int region = enc.dimension("region", ValueType.VALUE_TYPE_PATH);
    int main = enc.pathNode(0, region, "main", RegionKind.REGION_KIND_COMPUTE);
    DeltaEncoder.Mark start = enc.mark();
    Delta unsent = enc.prepare(at(1, region, main)).build();
    int later = enc.pathNode(main, region, "later", RegionKind.REGION_KIND_IO); // defined meanwhile
    enc.reset(start);

    Delta next = enc.prepare(at(2, region, later)).build();
    assertThat(next.getSource()).isEqualTo(unsent.getSource());
    assertThat(next.getDictionary().getPathNodesCount()).isEqualTo(2);
    assertThat(next.getDictionary().getStringsMap()).containsValues("main", "later");

    DeltaEncoder.Mark afterNext = enc.mark();
    Delta third = enc.prepare(at(3, region, main, later)).build();
    assertThat(third.hasSource()).isFalse();
    assertThat(third.hasDictionary()).isFalse();
    enc.reset(afterNext); // nothing was carried since: nothing to carry again
    assertThat(enc.prepare(at(4, region, later)).build().hasDictionary()).isFalse();
  }

  @Test
  void idsThisEncoderDidNotAssignAreLeftAlone() {
    int region = enc.dimension("region", ValueType.VALUE_TYPE_PATH);
    Delta d = enc.prepare(at(1, region, 0, 77)).build(); // no node 0 or 77
    assertThat(d.getDictionary().getPathNodesCount()).isZero();
    assertThat(d.getDictionary().getAttributesCount()).isEqualTo(1);
  }

  @Test
  void theDictionaryBoundCanBeSetBelowTheDefault() {
    DeltaEncoder small =
        new DeltaEncoder(
            SourceIdentity.newBuilder().setService("s").setInstance("i").build(), 16 << 10);
    List<Integer> ids = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      ids.add(small.string(String.format("%05d", i) + "y".repeat(995))); // 1,000 bytes each
    }
    // 16 KiB hold 16 of them; the other 4 got the overflow string's id.
    assertThat(ids.subList(0, 16)).doesNotHaveDuplicates();
    assertThat(ids.subList(16, 20)).containsOnly(small.string(DeltaEncoder.OVERFLOW));
    assertThat(small.takeLimitCounts()).containsExactly(Map.entry("dictionary_full", 4L));
    assertThatThrownBy(() -> new DeltaEncoder(SourceIdentity.getDefaultInstance(), 100))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("maxDictionaryBytes");
  }

  @Test
  void pathNodesBeyondTheBoundGoToTheOverflowNodeOfTheirKindUnderTheRootAndTheMessageStaysSmall() {
    DeltaEncoder small =
        new DeltaEncoder(
            SourceIdentity.newBuilder().setService("s").setInstance("i").build(), 8192);
    int region = small.dimension("region", ValueType.VALUE_TYPE_PATH);
    List<Integer> nodes = new ArrayList<>();
    int parent = 0;
    for (int i = 0; i < 2000; i++) { // a deep chain of short names: nodes, not strings, fill it
      parent = small.pathNode(parent, region, "f" + (i % 50), RegionKind.REGION_KIND_COMPUTE);
      nodes.add(parent);
    }
    int overflow = nodes.get(nodes.size() - 1);
    int firstRefused = nodes.indexOf(overflow);
    assertThat(firstRefused).isBetween(100, 1999);
    assertThat(nodes.subList(0, firstRefused)).doesNotHaveDuplicates();
    assertThat(nodes.subList(firstRefused, 2000)).containsOnly(overflow);
    // Known nodes still resolve; other kinds get their own overflow node.
    assertThat(small.pathNode(0, region, "f0", RegionKind.REGION_KIND_COMPUTE))
        .isEqualTo(nodes.get(0));
    int io = small.pathNode(nodes.get(3), region, "new", RegionKind.REGION_KIND_IO);
    assertThat(io).isNotEqualTo(overflow);
    assertThat(small.pathNode(0, region, "other", RegionKind.REGION_KIND_IO)).isEqualTo(io);
    assertThat(small.takeLimitCounts().get("dictionary_full")).isEqualTo(2000L - firstRefused + 2);

    Delta d =
        small.prepare(at(1, region, nodes.stream().mapToInt(n -> n).distinct().toArray())).build();
    PathNode overflowNode =
        d.getDictionary().getPathNodesList().stream()
            .filter(p -> p.getId() == overflow)
            .findFirst()
            .orElseThrow();
    assertThat(overflowNode.getParentId()).isZero();
    assertThat(d.getDictionary().getStringsMap().get(overflowNode.getNameId()))
        .isEqualTo(DeltaEncoder.OVERFLOW);
    assertThat(d.getDictionary().getSerializedSize()).isLessThan(8192 + 200);
  }

  private static DeltaEncoder encoder() {
    return new DeltaEncoder(
        SourceIdentity.newBuilder().setService("s").setInstance("i").setIncarnationId(1).build());
  }
}
