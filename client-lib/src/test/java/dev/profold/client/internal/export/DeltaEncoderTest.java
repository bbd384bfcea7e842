package dev.profold.client.internal.export;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.PathNode;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ValueType;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
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
  void eachDefinitionTravelsOncePerStreamAndAgainOnANewStream() {
    int region = enc.dimension("region", ValueType.VALUE_TYPE_PATH);
    enc.pathNode(0, region, "main", RegionKind.REGION_KIND_COMPUTE);
    Delta first = enc.prepare(Delta.newBuilder().setSequence(1)).build();
    assertThat(first.hasSource()).isTrue();
    assertThat(first.getDictionary().getStringsMap()).containsValue("main");
    assertThat(first.getDictionary().getAttributesCount()).isEqualTo(1);
    assertThat(first.getDictionary().getPathNodesCount()).isEqualTo(1);

    Delta second = enc.prepare(Delta.newBuilder().setSequence(2)).build();
    assertThat(second.hasSource()).isFalse();
    assertThat(second.hasDictionary()).isFalse();

    enc.pathNode(1, region, "child", RegionKind.REGION_KIND_WAIT);
    Delta third = enc.prepare(Delta.newBuilder().setSequence(3)).build();
    assertThat(third.getDictionary().getStringsMap()).containsOnlyKeys(2).containsValue("child");
    assertThat(third.getDictionary().getPathNodesCount()).isEqualTo(1);
    assertThat(third.getDictionary().getAttributesCount()).isZero();

    enc.newStream();
    Delta resent = enc.prepare(Delta.newBuilder().setSequence(3)).build();
    assertThat(resent.hasSource()).isTrue();
    assertThat(resent.getDictionary().getStringsCount()).isEqualTo(2);
    assertThat(resent.getDictionary().getAttributesCount()).isEqualTo(1);
    assertThat(resent.getDictionary().getPathNodesCount()).isEqualTo(2);
  }

  @org.junit.jupiter.api.Test
  void stringsAreCutToTheProtocolsLengthOnACharacterBoundaryAndCounted() {
    DeltaEncoder e = encoder();
    String emoji = "\uD83D\uDE00"; // 4 bytes in UTF-8
    String name = "x".repeat(4094) + emoji + "tail"; // the emoji would end at byte 4098
    int id = e.string(name);
    Delta d = e.prepare(Delta.newBuilder()).build();
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
    Delta d = e.prepare(Delta.newBuilder()).build();
    assertThat(d.getSerializedSize())
        .isLessThan((int) DeltaEncoder.MAX_DICTIONARY_BYTES + (1 << 20));
  }

  @Test
  void aResetToAMarkMakesTheNextMessageCarryWhatTheUnsentOneWouldHave() {
    int region = enc.dimension("region", ValueType.VALUE_TYPE_PATH);
    enc.pathNode(0, region, "main", RegionKind.REGION_KIND_COMPUTE);
    DeltaEncoder.Mark start = enc.mark();
    Delta unsent = enc.prepare(Delta.newBuilder().setSequence(1)).build();
    enc.pathNode(1, region, "later", RegionKind.REGION_KIND_IO); // defined meanwhile
    enc.reset(start);

    Delta next = enc.prepare(Delta.newBuilder().setSequence(2)).build();
    assertThat(next.getSource()).isEqualTo(unsent.getSource());
    assertThat(next.getDictionary().getPathNodesCount()).isEqualTo(2);
    assertThat(next.getDictionary().getStringsMap()).containsValues("main", "later");

    DeltaEncoder.Mark afterNext = enc.mark();
    Delta third = enc.prepare(Delta.newBuilder().setSequence(3)).build();
    assertThat(third.hasSource()).isFalse();
    assertThat(third.hasDictionary()).isFalse();
    enc.reset(afterNext); // nothing was carried since: nothing to carry again
    assertThat(enc.prepare(Delta.newBuilder().setSequence(4)).build().hasDictionary()).isFalse();
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

    Delta d = small.prepare(Delta.newBuilder()).build();
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
