package dev.profold.client.internal.export;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.RegionKind;
import dev.profold.proto.v1.SourceIdentity;
import dev.profold.proto.v1.ValueType;
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
}
