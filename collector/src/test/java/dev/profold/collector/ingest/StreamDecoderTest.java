package dev.profold.collector.ingest;

import static dev.profold.collector.testing.Deltas.REGION;
import static dev.profold.collector.testing.Deltas.TIME;
import static dev.profold.collector.testing.Deltas.regionKey;
import static dev.profold.collector.testing.Deltas.time;
import static dev.profold.proto.v1.AttributeKind.ATTRIBUTE_KIND_DIMENSION;
import static dev.profold.proto.v1.AttributeKind.ATTRIBUTE_KIND_MEASUREMENT;
import static dev.profold.proto.v1.AttributeKind.ATTRIBUTE_KIND_UNSPECIFIED;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_COMPUTE;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_IO;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_UNSPECIFIED;
import static dev.profold.proto.v1.RegionKind.REGION_KIND_WAIT;
import static dev.profold.proto.v1.ValueType.VALUE_TYPE_BOOL;
import static dev.profold.proto.v1.ValueType.VALUE_TYPE_DOUBLE;
import static dev.profold.proto.v1.ValueType.VALUE_TYPE_INT;
import static dev.profold.proto.v1.ValueType.VALUE_TYPE_PATH;
import static dev.profold.proto.v1.ValueType.VALUE_TYPE_STRING;
import static dev.profold.proto.v1.ValueType.VALUE_TYPE_UNSPECIFIED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.collector.dictionary.Attribute;
import dev.profold.collector.dictionary.AttributeType;
import dev.profold.collector.dictionary.DictionaryFullException;
import dev.profold.collector.dictionary.GlobalDictionary;
import dev.profold.collector.dictionary.PathNode;
import dev.profold.collector.testing.Deltas;
import dev.profold.proto.v1.AttributeDef;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.ExponentialHistogram;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.MetricState;
import dev.profold.proto.v1.ValueType;
import dev.profold.reduce.ExpHistogram;
import dev.profold.sinks.snapshot.OverheadClass;
import java.util.Arrays;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * One test per validation rule of {@link StreamDecoder}: each asserts the exact field path of the
 * {@link InvalidDeltaException} and a meaningful fragment of its message; plus the decoded columns
 * of valid deltas and the per-stream scope of dictionary ids.
 */
class StreamDecoderTest {
  private final GlobalDictionary dictionary = new GlobalDictionary(100_000);
  private final StreamDecoder decoder = new StreamDecoder(dictionary);

  /**
   * A valid first delta: regions main (1) and main/db.query (2), entries[0] on main, entries[1] on
   * main/db.query. Its dictionary holds attributes[0] = region, attributes[1] = time, path_nodes[0]
   * = main, path_nodes[1] = db.query, strings 1 and 2; anything added goes after these.
   */
  private static Deltas.Builder valid() {
    return Deltas.source("checkout", "i-1")
        .incarnation(7)
        .seq(1)
        .region(1, "main", REGION_KIND_COMPUTE)
        .region(2, 1, "db.query", REGION_KIND_IO)
        .entry(1, 0.25, 0.25, 0.5, 1.0)
        .entry(2, 0.25, 0.5);
  }

  private static DecodedDelta decode(StreamDecoder d, Delta delta) throws InvalidDeltaException {
    return d.decode(delta, delta.getSerializedSize());
  }

  private void assertInvalid(Delta delta, String field, String fragment) {
    assertInvalid(decoder, delta, field, fragment);
  }

  private static void assertInvalid(StreamDecoder d, Delta delta, String field, String fragment) {
    assertThatThrownBy(() -> decode(d, delta))
        .isInstanceOfSatisfying(
            InvalidDeltaException.class,
            e -> {
              assertThat(e.field()).isEqualTo(field);
              assertThat(e.getMessage()).startsWith(field + ": ").contains(fragment);
            });
  }

  private static Delta withThirdEntry(Entry.Builder entry) {
    return valid().entry(entry).build();
  }

  /** valid() plus entries[2] = region main with a time measurement of the given state. */
  private static Delta withState(MetricState.Builder state) {
    return withThirdEntry(
        Entry.newBuilder()
            .addKey(regionKey(1))
            .addMeasurements(Measurement.newBuilder().setAttributeId(TIME).setState(state)));
  }

  private static final String STATE = "entries[2].measurements[0].state";

  private static MetricState.Builder state(long count) {
    return MetricState.newBuilder()
        .setCount(count)
        .setSum(count)
        .setMin(1)
        .setMax(1)
        .setSumOfSquares(count);
  }

  @Nested
  @DisplayName("source identity")
  class Source {
    @Test
    void firstDeltaWithoutSourceIsRejected() {
      assertInvalid(valid().withoutSource().build(), "source", "required on the first delta");
      assertThat(decoder.source()).isNull();
    }

    @Test
    void emptyServiceIsRejected() {
      assertInvalid(
          Deltas.source("", "i-1").entry(1, 1.0).region(1, "main", REGION_KIND_COMPUTE).build(),
          "source.service",
          "required, must not be empty");
      assertThat(decoder.source()).isNull();
    }

    @Test
    void serviceLongerThan128CharactersIsRejected() throws Exception {
      assertInvalid(
          Deltas.source("s".repeat(129), "i-1").build(),
          "source.service",
          "at most 128 characters, got 129");
      assertThat(decode(decoder, Deltas.source("s".repeat(128), "i-1").build()).source.service())
          .hasSize(128);
    }

    @Test
    void emptyInstanceIsRejected() {
      assertInvalid(
          Deltas.source("checkout", "").build(), "source.instance", "required, must not be empty");
    }

    @Test
    void instanceLongerThan256CharactersIsRejected() throws Exception {
      assertInvalid(
          Deltas.source("checkout", "i".repeat(257)).build(),
          "source.instance",
          "at most 256 characters, got 257");
      assertThat(decode(decoder, Deltas.source("checkout", "i".repeat(256)).build()).source)
          .isNotNull();
    }

    @Test
    void zeroIncarnationIsRejected() {
      assertInvalid(
          valid().incarnation(0).build(), "source.incarnation_id", "random non-zero 64-bit");
    }

    @ParameterizedTest
    @ValueSource(longs = {0, -1, Long.MIN_VALUE})
    void processStartNotPositiveIsRejected(long start) {
      assertInvalid(
          valid().processStart(start).build(),
          "source.process_start_unix_nanos",
          "must be > 0 (unix epoch nanoseconds), was " + start);
    }

    @Test
    void moreThan32LabelsAreRejected() throws Exception {
      Deltas.Builder b = valid();
      for (int i = 0; i < 32; i++) {
        b.label("l" + i, "v");
      }
      assertThat(decode(new StreamDecoder(dictionary), b.build()).info.labels()).hasSize(32);
      assertInvalid(b.label("l32", "v").build(), "source.labels", "at most 32 labels, got 33");
    }

    @Test
    void sourceTextsLongerThan256CharactersAreRejected() throws Exception {
      String ok = "h".repeat(256);
      String over = "h".repeat(257);
      assertThat(
              decode(new StreamDecoder(dictionary), valid().host(ok).label("zone", ok).build())
                  .info
                  .host())
          .isEqualTo(ok);
      assertInvalid(
          valid().host("h".repeat(1 << 20)).build(),
          "source.host",
          "at most 256 characters, got 1048576");
      assertInvalid(
          valid().label("zone", over).build(),
          "source.labels[\"zone\"]",
          "at most 256 characters, got 257");
      String longName = "k".repeat(129);
      assertInvalid(
          valid().label(longName, "v").build(),
          "source.labels[\"" + longName.substring(0, 64) + "...\"]",
          "label names have at most 128 characters, got 129");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "1abc", "a-b", "a.b", "zone id"})
    void invalidLabelNameIsRejected(String name) {
      assertInvalid(
          valid().label(name, "x").build(),
          "source.labels[\"" + name + "\"]",
          "label names must match [a-zA-Z_][a-zA-Z0-9_]*");
    }

    @Test
    void identityIsKeptInTheDecodedDelta() throws Exception {
      Deltas.Builder b = valid().host("h1").label("zone", "a").processStart(123);
      b.sourceBuilder()
          .setPid(42)
          .setRuntimeVersion("OpenJDK 21")
          .setSdkVersion("profold-java/0.1");
      assertThat(decoder.source()).isNull();
      DecodedDelta d = decode(decoder, b.build());
      assertThat(d.source).isEqualTo(new SourceKey("checkout", "i-1"));
      assertThat(decoder.source()).isEqualTo(new SourceKey("checkout", "i-1"));
      assertThat(d.info)
          .isEqualTo(
              new SourceInfo(
                  7,
                  123,
                  "h1",
                  42,
                  "OpenJDK 21",
                  "profold-java/0.1",
                  java.util.Map.of("zone", "a")));
    }

    @Test
    void anotherInstanceMidStreamIsRejected() throws Exception {
      decode(decoder, valid().build());
      assertInvalid(
          Deltas.source("checkout", "i-2").incarnation(7).seq(2).build(),
          "source",
          "a Push stream carries one source (checkout/i-1, incarnation 7); open a new stream");
    }

    @Test
    void anotherServiceMidStreamIsRejected() throws Exception {
      decode(decoder, valid().build());
      assertInvalid(
          Deltas.source("payments", "i-1").incarnation(7).seq(2).build(),
          "source",
          "carries one source");
    }

    @Test
    void anotherIncarnationMidStreamIsRejected() throws Exception {
      decode(decoder, valid().build());
      assertInvalid(
          Deltas.source("checkout", "i-1").incarnation(8).seq(2).build(),
          "source",
          "open a new stream for another one");
      // The stream keeps its source: a later delta without source still decodes as i-1/7.
      DecodedDelta next = decode(decoder, Deltas.next().seq(2).entry(2, 1.0).build());
      assertThat(next.source).isEqualTo(new SourceKey("checkout", "i-1"));
      assertThat(next.info.incarnation()).isEqualTo(7);
    }

    @Test
    void sameSourceAgainAndDescriptiveChangesAreAccepted() throws Exception {
      decode(decoder, valid().build());
      DecodedDelta same = decode(decoder, valid().seq(2).build());
      assertThat(same.info.host()).isEmpty();
      DecodedDelta moved = decode(decoder, valid().seq(3).host("h2").build());
      assertThat(moved.source).isEqualTo(new SourceKey("checkout", "i-1"));
      assertThat(moved.info.host()).isEqualTo("h2");
      assertThat(moved.info.incarnation()).isEqualTo(7);
    }

    @Test
    void laterDeltaMayOmitSource() throws Exception {
      DecodedDelta first = decode(decoder, valid().build());
      DecodedDelta second = decode(decoder, Deltas.next().seq(2).entry(1, 0.5).build());
      assertThat(second.source).isEqualTo(first.source);
      assertThat(second.info).isEqualTo(first.info);
    }

    @Test
    void incarnationIdIsUnsigned() throws Exception {
      DecodedDelta d = decode(decoder, valid().incarnation(0x8c3e51f07a2b9d14L).build());
      assertThat(Long.toUnsignedString(d.info.incarnation()))
          .isEqualTo(Long.toUnsignedString(0x8c3e51f07a2b9d14L));
    }
  }

  @Nested
  @DisplayName("sequence and interval")
  class SequenceAndInterval {
    @Test
    void sequenceZeroIsRejected() {
      assertInvalid(valid().seq(0).build(), "sequence", "must be > 0 (the first delta is 1)");
    }

    @Test
    void firstSequenceAfterSequenceIsRejected() {
      assertInvalid(valid().seq(3).firstSeq(4).build(), "first_sequence", "4 is after sequence 3");
      // 2^63 read as a signed long is negative: before, it passed, and the fold took the source's
      // last sequence to be 2^63 - 1, so every later delta was acknowledged a duplicate unapplied.
      assertInvalid(
          valid().seq(5).firstSeq(Long.MIN_VALUE).build(),
          "first_sequence",
          "9223372036854775808 must be below 2^63");
    }

    @Test
    void mergedDeltaDecodes() throws Exception {
      DecodedDelta d = decode(decoder, valid().seq(5).firstSeq(2).build());
      assertThat(d.sequence).isEqualTo(5);
      assertThat(d.firstSequence).isEqualTo(2);
      assertThat(d.coveredFrom()).isEqualTo(2);
      DecodedDelta single = decode(decoder, valid().seq(6).firstSeq(6).build());
      assertThat(single.coveredFrom()).isEqualTo(6);
      DecodedDelta plain = decode(decoder, valid().seq(7).build());
      assertThat(plain.coveredFrom()).isEqualTo(7);
    }

    @ParameterizedTest
    @ValueSource(longs = {0, -1, Long.MIN_VALUE})
    void intervalStartNotPositiveIsRejected(long start) {
      assertInvalid(
          valid().interval(start, 10).build(),
          "interval_start_unix_nanos",
          "must be > 0 (unix epoch nanoseconds), was " + start);
    }

    @ParameterizedTest
    @ValueSource(longs = {1000, 999, 1})
    void intervalEndNotAfterStartIsRejected(long end) {
      assertInvalid(
          valid().interval(1000, end).build(),
          "interval_end_unix_nanos",
          "must be after interval_start_unix_nanos (1000), was " + end);
    }

    @Test
    void oneNanosecondIntervalIsAccepted() throws Exception {
      DecodedDelta d = decode(decoder, valid().interval(1000, 1001).build());
      assertThat(d.startUnixNanos).isEqualTo(1000);
      assertThat(d.endUnixNanos).isEqualTo(1001);
    }
  }

  @Nested
  @DisplayName("dictionary: strings")
  class Strings {
    @Test
    void aStreamCannotDefineMoreIdsThanTheCollectorsDictionaryHolds() throws Exception {
      GlobalDictionary small = new GlobalDictionary(50);
      StreamDecoder d = new StreamDecoder(small);
      decode(d, valid().build()); // 2 strings, 2 attributes, 2 path nodes
      // A client naming the same string with ever new ids: the collector's dictionary holds it
      // once, the stream one id per definition, until the stream holds 50 ids.
      for (int id = 1000; id < 1044; id++) {
        decode(d, Deltas.next().seq(id).string(id, "same").build());
      }
      assertThatThrownBy(() -> decode(d, Deltas.next().seq(1044).string(1044, "same").build()))
          .isInstanceOf(DictionaryFullException.class)
          .hasMessageContaining("this stream has defined 50 ids");
      assertThat(small.size()).isEqualTo(7);
      // Ids already defined can still be defined again and used.
      decode(d, Deltas.next().seq(1045).string(1000, "same").entry(1, 1.0).build());
    }

    @Test
    void theOpenStreamsMapAtMostStreamIdsTogetherAndGiveThemBackWhenTheyEnd() throws Exception {
      GlobalDictionary shared = new GlobalDictionary(1000, 15);
      StreamDecoder first = new StreamDecoder(shared);
      StreamDecoder second = new StreamDecoder(shared);
      decode(first, valid().build()); // 6 ids: 2 strings, 2 attributes, 2 path nodes
      decode(second, valid().build()); // the same content: 6 ids more, no new entry
      assertThat(shared.streamIds()).isEqualTo(12);
      assertThat(shared.size()).isEqualTo(6);
      decode(second, Deltas.next().seq(2).string(1000, "a").string(1001, "b").build());
      int entries = shared.size();
      // The 15th id is the last: the attribute after it is refused, and not kept.
      assertThatThrownBy(
              () ->
                  decode(
                      first,
                      Deltas.next()
                          .seq(2)
                          .string(1000, "c")
                          .attribute(
                              3, "queue_wait", VALUE_TYPE_DOUBLE, ATTRIBUTE_KIND_MEASUREMENT, "s")
                          .build()))
          .isInstanceOf(DictionaryFullException.class)
          .hasMessageContaining("open streams map 15 ids")
          .hasMessageContaining("limits.stream_ids");
      assertThat(shared.streamIds()).isEqualTo(15);
      assertThat(shared.size()).as("the string kept, the attribute not").isEqualTo(entries + 1);

      second.release();
      assertThat(shared.streamIds()).isEqualTo(7);
      decode(
          first,
          Deltas.next()
              .seq(3)
              .attribute(3, "queue_wait", VALUE_TYPE_DOUBLE, ATTRIBUTE_KIND_MEASUREMENT, "s")
              .build());
      assertThat(shared.streamIds()).isEqualTo(8);
      first.release();
      assertThat(shared.streamIds()).isZero();
      assertThat(shared.size()).isZero();
    }

    @Test
    void aDefinitionRefusedByAFullDictionaryKeepsNoStreamId() throws Exception {
      GlobalDictionary full = new GlobalDictionary(8);
      decode(new StreamDecoder(full), valid().string(1000, "a").string(1001, "b").build()); // 8
      StreamDecoder d = new StreamDecoder(full);
      decode(d, valid().build()); // the same content: no entry more, 6 ids more
      for (int seq = 2; seq < 5; seq++) {
        Delta more =
            Deltas.next()
                .seq(seq)
                .string(1000, "new")
                .attribute(3, "bytes", VALUE_TYPE_INT, ATTRIBUTE_KIND_MEASUREMENT, "bytes")
                .build();
        assertThatThrownBy(() -> decode(d, more))
            .isInstanceOf(DictionaryFullException.class)
            .hasMessageContaining("dictionary is full");
      }
      assertThat(full.streamIds()).isEqualTo(14);
      d.release();
      assertThat(full.streamIds()).isEqualTo(8);
    }

    @Test
    void stringIdZeroIsRejected() {
      assertInvalid(
          valid().string(0, "x").build(), "dictionary.strings[0]", "string id 0 is reserved");
    }

    @Test
    void stringLongerThan4096IsRejected() throws Exception {
      assertInvalid(
          valid().string(1000, "x".repeat(4097)).build(),
          "dictionary.strings[1000]",
          "longer than 4096");
      decode(decoder, valid().string(1000, "x".repeat(4096)).build());
    }

    @Test
    void stringOver4096Utf8BytesIsRejected() {
      // 3000 characters, 6000 UTF-8 bytes.
      assertInvalid(
          valid().string(1000, "é".repeat(3000)).build(), "dictionary.strings[1000]", "4096");
    }

    @Test
    void largeUnsignedStringIdIsAccepted() throws Exception {
      int id = 0xFFFFFFF0; // 4294967280 as uint32
      DecodedDelta d =
          decode(
              decoder,
              valid()
                  .string(id, "big")
                  .pathNode(Deltas.pathNode(3, 0, REGION, id, REGION_KIND_WAIT))
                  .entry(3, 1.0)
                  .build());
      assertThat(dictionary.path((int) d.keyValue[2])).isEqualTo("big");
    }

    @Test
    void redefiningStringWithDifferentContentIsRejected() throws Exception {
      decode(decoder, valid().build());
      assertInvalid(
          Deltas.next().seq(2).string(1, "other").build(),
          "dictionary.strings[1]",
          "already defined in this stream as \"main\"; ids cannot be redefined");
    }

    @Test
    void aRedefinitionIsSaidAsSuchWhenTheDictionaryIsFull() throws Exception {
      // The new content was interned first: with no room, the client was told "dictionary full"
      // (retry in a minute) for a redefinition no retry can cure.
      GlobalDictionary full = new GlobalDictionary(6); // what valid() defines, and no more
      StreamDecoder d = new StreamDecoder(full);
      decode(d, valid().build());
      assertInvalid(
          d,
          Deltas.next().seq(2).string(1, "other").build(),
          "dictionary.strings[1]",
          "already defined in this stream as \"main\"");
      assertInvalid(
          d,
          Deltas.next().seq(3).region(1, "main", REGION_KIND_IO).build(),
          "dictionary.path_nodes[0].id",
          "path node 1 is already defined in this stream with different content");
      decode(d, Deltas.next().seq(4).region(1, "main", REGION_KIND_COMPUTE).entry(1, 1.0).build());
    }

    @Test
    void redefiningStringWithSameContentIsAllowed() throws Exception {
      decode(decoder, valid().build());
      decode(decoder, Deltas.next().seq(2).string(1, "main").string(2, "db.query").build());
    }
  }

  @Nested
  @DisplayName("dictionary: attributes")
  class Attributes {
    private static final String A = "dictionary.attributes[2]";

    @Test
    void attributeIdZeroIsRejected() {
      assertInvalid(
          valid().attribute(0, "x", VALUE_TYPE_INT, ATTRIBUTE_KIND_DIMENSION, "").build(),
          A + ".id",
          "attribute id 0 is reserved");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "1abc", "a-b", "a b", "zeit€", ".x"})
    void invalidAttributeNameIsRejected(String name) {
      assertInvalid(
          valid().attribute(3, name, VALUE_TYPE_INT, ATTRIBUTE_KIND_DIMENSION, "").build(),
          A + ".name",
          "\"" + name + "\" is not a valid attribute name");
    }

    @Test
    void attributeNameLongerThan128IsRejected() throws Exception {
      assertInvalid(
          valid()
              .attribute(3, "a".repeat(129), VALUE_TYPE_INT, ATTRIBUTE_KIND_DIMENSION, "")
              .build(),
          A + ".name",
          "at most 128 characters");
      decode(
          decoder,
          valid()
              .attribute(
                  3, "a.b_C9" + "x".repeat(122), VALUE_TYPE_INT, ATTRIBUTE_KIND_DIMENSION, "")
              .build());
    }

    @Test
    void unspecifiedTypeIsRejected() {
      assertInvalid(
          valid()
              .attribute(3, "shard", VALUE_TYPE_UNSPECIFIED, ATTRIBUTE_KIND_DIMENSION, "")
              .build(),
          A + ".type",
          "must be set (STRING, INT, DOUBLE, BOOL or PATH)");
    }

    @Test
    void unknownTypeIsRejected() {
      AttributeDef def =
          AttributeDef.newBuilder()
              .setId(3)
              .setName("shard")
              .setTypeValue(99)
              .setKind(ATTRIBUTE_KIND_DIMENSION)
              .build();
      assertInvalid(valid().attribute(def).build(), A + ".type", "must be set");
    }

    @Test
    void unspecifiedKindIsRejected() {
      assertInvalid(
          valid().attribute(3, "shard", VALUE_TYPE_INT, ATTRIBUTE_KIND_UNSPECIFIED, "").build(),
          A + ".kind",
          "must be ATTRIBUTE_KIND_DIMENSION or ATTRIBUTE_KIND_MEASUREMENT");
    }

    @ParameterizedTest
    @ValueSource(strings = {"VALUE_TYPE_STRING", "VALUE_TYPE_BOOL", "VALUE_TYPE_PATH"})
    void nonNumericMeasurementIsRejected(String type) {
      assertInvalid(
          valid()
              .attribute(3, "bytes", ValueType.valueOf(type), ATTRIBUTE_KIND_MEASUREMENT, "")
              .build(),
          A + ".type",
          "a MEASUREMENT attribute must be VALUE_TYPE_INT or VALUE_TYPE_DOUBLE");
    }

    @Test
    void intMeasurementIsAccepted() throws Exception {
      DecodedDelta d =
          decode(
              decoder,
              valid()
                  .attribute(3, "allocated", VALUE_TYPE_INT, ATTRIBUTE_KIND_MEASUREMENT, "bytes")
                  .entry(
                      Entry.newBuilder()
                          .addKey(regionKey(1))
                          .addMeasurements(Deltas.measurement(3, 64, 128)))
                  .build());
      Attribute a = dictionary.attribute(d.measAttr[2]);
      assertThat(a).isEqualTo(new Attribute(a.id(), "allocated", AttributeType.INT, true, "bytes"));
      assertThat(d.sum[2]).isEqualTo(192.0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"Seconds", "ms!", "per-second", "µs", "bytes2"})
    void invalidUnitIsRejected(String unit) {
      assertInvalid(
          valid().attribute(3, "wall", VALUE_TYPE_DOUBLE, ATTRIBUTE_KIND_MEASUREMENT, unit).build(),
          A + ".unit",
          "\"" + unit + "\" is not a base-unit word");
    }

    @Test
    void unitLongerThan32IsRejected() {
      assertInvalid(
          valid()
              .attribute(3, "wall", VALUE_TYPE_DOUBLE, ATTRIBUTE_KIND_MEASUREMENT, "s".repeat(33))
              .build(),
          A + ".unit",
          "is not a base-unit word");
    }

    @Test
    void aStreamDefinesAtMost4096AttributesAndTheOneMoreIsNotInterned() throws Exception {
      Delta firstDelta = valid().build();
      decode(decoder, firstDelta);
      Deltas.Builder flood = Deltas.next().seq(2);
      int first = 1000;
      int room =
          StreamDecoder.MAX_STREAM_ATTRIBUTES - firstDelta.getDictionary().getAttributesCount();
      for (int i = 0; i < room; i++) {
        flood.attribute(
            first + i,
            "latency_user" + i,
            VALUE_TYPE_DOUBLE,
            ATTRIBUTE_KIND_MEASUREMENT,
            "seconds");
      }
      decode(decoder, flood.build());
      int attributesBefore = dictionary.size();

      assertInvalid(
          Deltas.next()
              .seq(3)
              .attribute(
                  first + room,
                  "latency_user" + room,
                  VALUE_TYPE_DOUBLE,
                  ATTRIBUTE_KIND_MEASUREMENT,
                  "seconds")
              .build(),
          "dictionary.attributes[0]",
          "a stream defines at most 4096 attributes (dimensions and measurements), and this is"
              + " one more (\"latency_user"
              + room
              + "\")");
      assertThat(dictionary.size()).as("not interned").isEqualTo(attributesBefore);
    }

    @Test
    void redefiningAttributeWithDifferentContentInOneDeltaIsRejected() {
      assertInvalid(
          valid()
              .attribute(TIME, "time", VALUE_TYPE_DOUBLE, ATTRIBUTE_KIND_MEASUREMENT, "bytes")
              .build(),
          A + ".id",
          "2 is already defined in this stream as");
    }

    @Test
    void redefiningAttributeWithDifferentContentLaterIsRejected() throws Exception {
      decode(decoder, valid().build());
      assertInvalid(
          Deltas.next()
              .seq(2)
              .attribute(REGION, "region", VALUE_TYPE_STRING, ATTRIBUTE_KIND_DIMENSION, "")
              .build(),
          "dictionary.attributes[0].id",
          "ids cannot be redefined with different content");
    }

    @Test
    void aRefusedRedefinitionAddsNothingToTheDictionary() throws Exception {
      decode(decoder, valid().build());
      int before = dictionary.size();
      for (int i = 0; i < 100; i++) {
        // Each a new name for an id already defined: refused, and the name never interned (it
        // would stay until the stream ends).
        assertInvalid(
            Deltas.next()
                .seq(2)
                .attribute(
                    TIME, "time_" + i, VALUE_TYPE_DOUBLE, ATTRIBUTE_KIND_MEASUREMENT, "seconds")
                .build(),
            "dictionary.attributes[0].id",
            "ids cannot be redefined with different content");
      }
      assertThat(dictionary.size()).isEqualTo(before);
    }

    @Test
    void redefiningEverythingWithSameContentIsAllowed() throws Exception {
      DecodedDelta first = decode(decoder, valid().build());
      DecodedDelta second = decode(decoder, valid().seq(2).build());
      assertThat(second.keyValue).containsExactly(first.keyValue);
      assertThat(second.measAttr).containsExactly(first.measAttr);
    }
  }

  @Nested
  @DisplayName("dictionary: path nodes")
  class PathNodes {
    private static final String P = "dictionary.path_nodes[2]";

    @Test
    void pathNodeIdZeroIsRejected() {
      assertInvalid(
          valid().pathNode(Deltas.pathNode(0, 0, REGION, 1, REGION_KIND_IO)).build(),
          P + ".id",
          "path node id 0 is reserved");
    }

    @Test
    void undefinedParentIsRejected() {
      assertInvalid(
          valid().region(5, 9, "x", REGION_KIND_IO).build(),
          P + ".parent_id",
          "path node 9 is not defined yet (define parents before children)");
    }

    @Test
    void parentDefinedLaterInTheListIsRejected() {
      assertInvalid(
          Deltas.source("checkout", "i-1")
              .region(5, 6, "child", REGION_KIND_IO)
              .region(6, "parent", REGION_KIND_COMPUTE)
              .build(),
          "dictionary.path_nodes[0].parent_id",
          "path node 6 is not defined yet");
    }

    @Test
    void pathLongerThanTheLimitIsRejected() throws Exception {
      // 256 levels of a 4096-character name: 256 * 4097 - 1 = 1048831 characters.
      Deltas.Builder b = Deltas.source("checkout", "i-1").string(1000, "n".repeat(4096));
      for (int id = 1; id <= 256; id++) {
        b.pathNode(Deltas.pathNode(id, id - 1, REGION, 1000, REGION_KIND_COMPUTE));
      }
      assertInvalid(
          b.build(),
          "dictionary.path_nodes[255]",
          "the path of node 256 would be 1048831 characters long; at most 1048576");
    }

    @Test
    void pathDeeperThanTheLimitIsRejectedAndOneAtTheLimitAccepted() throws Exception {
      Deltas.Builder b = Deltas.source("checkout", "i-1").string(1000, "f");
      for (int id = 1; id <= StreamDecoder.MAX_PATH_DEPTH; id++) {
        b.pathNode(Deltas.pathNode(id, id - 1, REGION, 1000, REGION_KIND_COMPUTE));
      }
      b.entry(StreamDecoder.MAX_PATH_DEPTH, 1.0);
      DecodedDelta d = decode(decoder, b.build());
      assertThat(dictionary.path((int) d.keyValue[0]))
          .hasSize(2 * StreamDecoder.MAX_PATH_DEPTH - 1); // 4096 names "f" and 4095 '/'

      int deeper = StreamDecoder.MAX_PATH_DEPTH + 1;
      assertInvalid(
          Deltas.next()
              .seq(2)
              .pathNode(
                  Deltas.pathNode(
                      deeper, StreamDecoder.MAX_PATH_DEPTH, REGION, 1000, REGION_KIND_COMPUTE))
              .build(),
          "dictionary.path_nodes[0]",
          "the path of node 4097 would have 4097 names; at most 4096 (the Java agent's deepest"
              + " setting is 2048 frames)");
    }

    @Test
    void pathAtTheLimitIsAccepted() throws Exception {
      // 255 levels of 4096 characters and one of 3841: 255 * 4097 + 3841 = 1048576 characters.
      Deltas.Builder b =
          Deltas.source("checkout", "i-1")
              .string(1000, "n".repeat(4096))
              .string(1001, "n".repeat(3841));
      for (int id = 1; id <= 255; id++) {
        b.pathNode(Deltas.pathNode(id, id - 1, REGION, 1000, REGION_KIND_COMPUTE));
      }
      b.pathNode(Deltas.pathNode(256, 255, REGION, 1001, REGION_KIND_COMPUTE)).entry(256, 1.0);
      DecodedDelta d = decode(decoder, b.build());
      assertThat(dictionary.path((int) d.keyValue[0])).hasSize(StreamDecoder.MAX_PATH_CHARS);
    }

    @Test
    void parentFromEarlierDeltaIsAccepted() throws Exception {
      decode(decoder, valid().build());
      DecodedDelta d =
          decode(
              decoder,
              Deltas.next().seq(2).region(3, 2, "fetch", REGION_KIND_WAIT).entry(3, 1.0).build());
      PathNode node = dictionary.pathNode((int) d.keyValue[0]);
      assertThat(dictionary.path(node.id())).isEqualTo("main/db.query/fetch");
      assertThat(node.depth()).isEqualTo(3);
      assertThat(node.kind()).isEqualTo("wait");
    }

    @Test
    void nonPathAttributeIsRejected() {
      assertInvalid(
          valid()
              .string(1000, "x")
              .pathNode(Deltas.pathNode(5, 0, TIME, 1000, REGION_KIND_IO))
              .build(),
          P + ".attribute_id",
          "attribute \"time\" is DOUBLE, a path node needs a PATH one");
    }

    @Test
    void undefinedAttributeIsRejected() {
      assertInvalid(
          valid().pathNode(Deltas.pathNode(5, 0, 99, 1, REGION_KIND_IO)).build(),
          P + ".attribute_id",
          "attribute 99 is not defined in this stream's dictionary");
    }

    @Test
    void undefinedNameIsRejected() {
      assertInvalid(
          valid().pathNode(Deltas.pathNode(5, 0, REGION, 777, REGION_KIND_IO)).build(),
          P + ".name_id",
          "string 777 is not defined in this stream");
    }

    @Test
    void parentOfAnotherPathAttributeIsRejected() {
      assertInvalid(
          valid()
              .attribute(3, "frame", VALUE_TYPE_PATH, ATTRIBUTE_KIND_DIMENSION, "")
              .string(1000, "f")
              .pathNode(Deltas.pathNode(5, 1, 3, 1000, REGION_KIND_UNSPECIFIED))
              .build(),
          P + ".parent_id",
          "the parent belongs to another path attribute");
    }

    @Test
    void pathAttributeWithLargeUnsignedIdIsAccepted() throws Exception {
      int big = 0x80000001; // 2147483649 as uint32, a valid id
      DecodedDelta d =
          decode(
              decoder,
              Deltas.source("checkout", "i-1")
                  .withoutBaseAttributes()
                  .attribute(big, "region", VALUE_TYPE_PATH, ATTRIBUTE_KIND_DIMENSION, "")
                  .attribute(TIME, "time", VALUE_TYPE_DOUBLE, ATTRIBUTE_KIND_MEASUREMENT, "seconds")
                  .string(1000, "main")
                  .pathNode(Deltas.pathNode(1, 0, big, 1000, REGION_KIND_COMPUTE))
                  .pathNode(Deltas.pathNode(2, 1, big, 1000, REGION_KIND_IO))
                  .entry(
                      Entry.newBuilder()
                          .addKey(AttributeValue.newBuilder().setAttributeId(big).setPathNodeId(2))
                          .addMeasurements(time(1.0)))
                  .build());
      assertThat(dictionary.path((int) d.keyValue[0])).isEqualTo("main/main");
    }

    @Test
    void redefiningPathNodeWithDifferentKindIsRejected() throws Exception {
      decode(decoder, valid().build());
      assertInvalid(
          Deltas.next().seq(2).region(1, "main", REGION_KIND_IO).build(),
          "dictionary.path_nodes[0].id",
          "path node 1 is already defined in this stream with different content");
    }

    @Test
    void redefiningPathNodeWithDifferentParentIsRejected() throws Exception {
      decode(decoder, valid().build());
      assertInvalid(
          Deltas.next().seq(2).region(2, 0, "db.query", REGION_KIND_IO).build(),
          "dictionary.path_nodes[0].id",
          "path node 2 is already defined in this stream with different content");
    }

    @Test
    void redefiningPathNodeWithDifferentNameIsRejected() throws Exception {
      decode(decoder, valid().build());
      assertInvalid(
          Deltas.next()
              .seq(2)
              .string(1000, "other")
              .pathNode(Deltas.pathNode(1, 0, REGION, 1000, REGION_KIND_COMPUTE))
              .build(),
          "dictionary.path_nodes[0].id",
          "different content");
    }

    @Test
    void redefiningPathNodeWithSameContentIsAllowed() throws Exception {
      DecodedDelta first = decode(decoder, valid().build());
      DecodedDelta second =
          decode(
              decoder,
              Deltas.next()
                  .seq(2)
                  .region(1, "main", REGION_KIND_COMPUTE)
                  .region(2, 1, "db.query", REGION_KIND_IO)
                  .entry(2, 1.0)
                  .build());
      assertThat(second.keyValue[0]).isEqualTo(first.keyValue[1]);
    }
  }

  @Nested
  @DisplayName("entries")
  class Entries {
    private static final String K = "entries[2].key[0]";

    /** valid() plus dimensions 3 tenant (STRING), 4 shard (INT), 5 ratio (DOUBLE), 6 sampled. */
    private Deltas.Builder withDimensions() {
      return valid()
          .attribute(3, "tenant", VALUE_TYPE_STRING, ATTRIBUTE_KIND_DIMENSION, "")
          .attribute(4, "shard", VALUE_TYPE_INT, ATTRIBUTE_KIND_DIMENSION, "")
          .attribute(5, "ratio", VALUE_TYPE_DOUBLE, ATTRIBUTE_KIND_DIMENSION, "")
          .attribute(6, "sampled", VALUE_TYPE_BOOL, ATTRIBUTE_KIND_DIMENSION, "")
          .attribute(7, "frame", VALUE_TYPE_PATH, ATTRIBUTE_KIND_DIMENSION, "")
          .string(1000, "acme");
    }

    private Delta keyed(AttributeValue.Builder... key) {
      Entry.Builder e = Entry.newBuilder().addMeasurements(time(1.0));
      for (AttributeValue.Builder k : key) {
        e.addKey(k);
      }
      return withDimensions().entry(e).build();
    }

    private AttributeValue.Builder key(int attribute) {
      return AttributeValue.newBuilder().setAttributeId(attribute);
    }

    @Test
    void keyWithUndefinedAttributeIsRejected() {
      assertInvalid(
          keyed(key(99).setPathNodeId(1)),
          K + ".attribute_id",
          "attribute 99 is not defined in this stream's dictionary");
    }

    @Test
    void measurementAttributeAsKeyIsRejected() {
      assertInvalid(
          keyed(key(TIME).setDoubleValue(1.0)),
          K + ".attribute_id",
          "\"time\" is a MEASUREMENT; keys hold DIMENSION attributes");
    }

    @Test
    void dimensionAsMeasurementIsRejected() {
      assertInvalid(
          withThirdEntry(
              Entry.newBuilder()
                  .addMeasurements(
                      Measurement.newBuilder().setAttributeId(REGION).setState(Deltas.state(1.0)))),
          "entries[2].measurements[0].attribute_id",
          "\"region\" is a DIMENSION; measurements need MEASUREMENT attributes");
    }

    @Test
    void measurementWithUndefinedAttributeIsRejected() {
      // The Python interop script's --bad case, at entries[1].
      Delta bad =
          Deltas.source("checkout", "pod-1")
              .region(1, "main", REGION_KIND_COMPUTE)
              .entry(1, 1.0)
              .entry(
                  Entry.newBuilder()
                      .addKey(regionKey(1))
                      .addMeasurements(Deltas.measurement(99, 1.0)))
              .build();
      assertInvalid(bad, "entries[1].measurements[0].attribute_id", "attribute 99 is not defined");
    }

    @Test
    void valueCaseNotMatchingPathTypeIsRejected() {
      assertInvalid(
          keyed(key(REGION).setStringId(1000)),
          K,
          "attribute \"region\" is PATH, so the value must be set as path_node_id (got string_id)");
    }

    @Test
    void valueNotSetIsRejected() {
      assertInvalid(keyed(key(4)), K, "must be set as int_value (got value_not_set)");
    }

    @Test
    void valueCaseNotMatchingOtherTypesIsRejected() {
      assertInvalid(
          keyed(key(3).setIntValue(1)), K, "is STRING, so the value must be set as string_id");
      assertInvalid(
          keyed(key(4).setDoubleValue(1)), K, "is INT, so the value must be set as int_value");
      assertInvalid(
          keyed(key(5).setBoolValue(true)), K, "must be set as double_value (got bool_value)");
      assertInvalid(
          keyed(key(6).setPathNodeId(1)), K, "must be set as bool_value (got path_node_id)");
    }

    @Test
    void undefinedPathNodeInKeyIsRejected() {
      assertInvalid(
          keyed(key(REGION).setPathNodeId(42)),
          K + ".path_node_id",
          "path node 42 is not defined in this stream's dictionary");
    }

    @Test
    void pathNodeOfAnotherAttributeInKeyIsRejected() {
      assertInvalid(
          keyed(key(7).setPathNodeId(1)),
          K + ".path_node_id",
          "the node belongs to another path attribute");
    }

    @Test
    void undefinedStringInKeyIsRejected() {
      assertInvalid(
          keyed(key(3).setStringId(4242)),
          K + ".string_id",
          "string 4242 is not defined in this stream's dictionary");
    }

    @Test
    void nonFiniteDoubleInKeyIsRejected() {
      assertInvalid(
          keyed(key(5).setDoubleValue(Double.NaN)), K + ".double_value", "must be finite");
      assertInvalid(
          keyed(key(5).setDoubleValue(Double.NEGATIVE_INFINITY)), K + ".double_value", "finite");
    }

    @Test
    void duplicateKeyAttributeIsRejected() {
      assertInvalid(
          keyed(key(REGION).setPathNodeId(1), key(4).setIntValue(3), key(REGION).setPathNodeId(2)),
          "entries[2].key[2].attribute_id",
          "\"region\" appears twice in this key");
    }

    @Test
    void oneNameTwiceInAKeyAsAttributesOfDifferentTypesIsRejected() {
      // Groups have one label per name: before, {tenant="a", tenant=5} and {tenant="b",
      // tenant=5} both folded into the group tenant=5.
      Delta d =
          withDimensions()
              .attribute(8, "tenant", VALUE_TYPE_INT, ATTRIBUTE_KIND_DIMENSION, "")
              .entry(
                  Entry.newBuilder()
                      .addMeasurements(time(1.0))
                      .addKey(key(3).setStringId(1000))
                      .addKey(key(8).setIntValue(5)))
              .build();
      assertInvalid(
          d,
          "entries[2].key[1].attribute_id",
          "\"tenant\" appears twice in this key, as attributes of different types or units");
    }

    @Test
    void moreThan64KeyValuesAreRejected() {
      AttributeValue.Builder[] key = new AttributeValue.Builder[65];
      Arrays.setAll(key, i -> key(REGION).setPathNodeId(1));
      assertInvalid(keyed(key), "entries[2].key", "at most 64 values, got 65");
    }

    @Test
    void entryWithoutMeasurementsIsRejected() {
      assertInvalid(
          withThirdEntry(Entry.newBuilder().addKey(regionKey(1))),
          "entries[2].measurements",
          "an entry needs at least one measurement");
    }

    @Test
    void duplicateMeasurementAttributeIsRejected() {
      assertInvalid(
          withThirdEntry(
              Entry.newBuilder()
                  .addKey(regionKey(1))
                  .addMeasurements(time(1.0))
                  .addMeasurements(time(2.0))),
          "entries[2].measurements[1].attribute_id",
          "\"time\" appears twice in this entry");
    }

    @Test
    void measurementWithoutStateIsRejected() {
      assertInvalid(
          withThirdEntry(
              Entry.newBuilder()
                  .addKey(regionKey(1))
                  .addMeasurements(Measurement.newBuilder().setAttributeId(TIME))),
          "entries[2].measurements[0].state",
          "required");
    }

    @Test
    void aMillionMeasurementsWithoutStateAreRefusedBeforeTheColumnsAreAllocated() {
      // Two bytes on the wire each: before, the decoder sized its columns (about 72 bytes per
      // measurement) from the counts, 72 MB here, and only then found the first one invalid.
      Entry.Builder entry = Entry.newBuilder().addKey(regionKey(1));
      Measurement empty = Measurement.newBuilder().setAttributeId(TIME).build();
      for (int j = 0; j < 1_000_000; j++) {
        entry.addMeasurements(empty);
      }
      Delta delta = withThirdEntry(entry);
      com.sun.management.ThreadMXBean mx =
          (com.sun.management.ThreadMXBean)
              java.lang.management.ManagementFactory.getThreadMXBean();
      long before = mx.getCurrentThreadAllocatedBytes();

      assertInvalid(delta, "entries[2].measurements[0].state", "required");

      assertThat(mx.getCurrentThreadAllocatedBytes() - before)
          .as("bytes allocated to refuse it")
          .isLessThan(8_000_000);
    }

    @Test
    void keysOfEveryTypeDecode() throws Exception {
      DecodedDelta d =
          decode(
              decoder,
              keyed(
                  key(3).setStringId(1000),
                  key(4).setIntValue(-5),
                  key(5).setDoubleValue(0.5),
                  key(6).setBoolValue(true),
                  key(REGION).setPathNodeId(2)));
      int from = d.keyStart[2];
      assertThat(d.keyStart[3] - from).isEqualTo(5);
      assertThat(dictionary.attribute(d.keyAttr[from]).name()).isEqualTo("tenant");
      assertThat(dictionary.string((int) d.keyValue[from])).isEqualTo("acme");
      assertThat(d.keyValue[from + 1]).isEqualTo(-5);
      assertThat(d.keyValue[from + 2]).isEqualTo(Double.doubleToLongBits(0.5));
      assertThat(d.keyValue[from + 3]).isEqualTo(1);
      assertThat(dictionary.path((int) d.keyValue[from + 4])).isEqualTo("main/db.query");
    }

    @Test
    void deltaWithoutEntriesDecodes() throws Exception {
      DecodedDelta d = decode(decoder, Deltas.source("checkout", "i-1").build());
      assertThat(d.entries).isZero();
      assertThat(d.measurements()).isZero();
      assertThat(d.keyStart).containsExactly(0);
      assertThat(d.measStart).containsExactly(0);
    }

    @Test
    void entryWithEmptyKeyDecodes() throws Exception {
      DecodedDelta d = decode(decoder, valid().entryWithoutKey(1.0).build());
      assertThat(d.keyStart[2]).isEqualTo(d.keyStart[3]);
      assertThat(d.measStart[3] - d.measStart[2]).isEqualTo(1);
    }
  }

  @Nested
  @DisplayName("metric states")
  class States {
    @Test
    void countZeroIsRejected() {
      assertInvalid(
          withState(state(0)), STATE + ".count", "must be > 0 (leave out measurements without");
    }

    @Test
    void countAbove2To63IsRejected() {
      assertInvalid(
          withState(state(Long.MIN_VALUE)),
          STATE + ".count",
          "9223372036854775808 is too large: at most 2^53");
    }

    /** 2^63 - 1 and then 1 used to wrap the cumulative count to a negative number. */
    @Test
    void countAbove2To53IsRejected() {
      assertInvalid(
          withState(state(Long.MAX_VALUE)),
          STATE + ".count",
          "too large: at most 2^53 (9007199254740992) values per measurement and delta, was"
              + " 9223372036854775807");
      assertInvalid(
          withState(
              state((1L << 53) + 1)
                  .setHistogram(ExponentialHistogram.newBuilder().setZeroCount((1L << 53) + 1))),
          STATE + ".count",
          "at most 2^53");
    }

    @Test
    void countOf2To53IsAccepted() throws Exception {
      DecodedDelta d = decode(decoder, withState(state(1L << 53)));
      assertThat(d.count[2]).isEqualTo(1L << 53);
    }

    @Test
    void aNaNSumOrSumOfSquaresIsRejected() {
      assertInvalid(
          withState(state(1).setSum(Double.NaN)),
          STATE + ".sum",
          "must be a number (or an infinity from an overflow), was NaN");
      assertInvalid(
          withState(state(1).setSumOfSquares(Double.NaN)),
          STATE + ".sum_of_squares",
          "must be a number (or an infinity from an overflow), was NaN");
    }

    @Test
    void aSumOrSumOfSquaresBeyondADoubleIsAccepted() throws Exception {
      // One value of 2e154 squares to +Infinity: before, the whole delta was refused, and with
      // it every other entry of the interval.
      DecodedDelta d =
          decode(
              decoder,
              withState(
                  state(1)
                      .setSum(Double.POSITIVE_INFINITY)
                      .setSumOfSquares(Double.POSITIVE_INFINITY)));
      assertThat(d.sum[2]).isEqualTo(Double.POSITIVE_INFINITY);
      assertThat(d.sumOfSquares[2]).isEqualTo(Double.POSITIVE_INFINITY);
    }

    @Test
    void nonFiniteMinMaxAreRejected() {
      assertInvalid(
          withState(state(1).setMin(Double.NEGATIVE_INFINITY)), STATE + ".min", "finite number");
      assertInvalid(withState(state(1).setMax(Double.NaN)), STATE + ".max", "finite number");
    }

    @Test
    void minAboveMaxIsRejected() {
      assertInvalid(
          withState(state(2).setMin(2.0).setMax(1.0)),
          STATE + ".min",
          "min (2.0) is greater than max (1.0)");
    }

    @Test
    void negativeSumOfSquaresIsRejected() {
      assertInvalid(
          withState(state(1).setSumOfSquares(-0.5)), STATE + ".sum_of_squares", "must be >= 0");
    }

    @ParameterizedTest
    @ValueSource(ints = {21, -11, 100, Integer.MIN_VALUE})
    void histogramScaleOutOfRangeIsRejected(int scale) {
      assertInvalid(
          withState(
              state(1)
                  .setHistogram(ExponentialHistogram.newBuilder().setScale(scale).setZeroCount(1))),
          STATE + ".histogram.scale",
          "must be within -10..20, was " + scale);
    }

    @ParameterizedTest
    @ValueSource(ints = {-10, 0, 20})
    void histogramScaleAtTheLimitsIsAccepted(int scale) throws Exception {
      DecodedDelta d =
          decode(
              decoder,
              withState(
                  state(1)
                      .setHistogram(
                          ExponentialHistogram.newBuilder().setScale(scale).setZeroCount(1))));
      assertThat(d.scale[2]).isEqualTo(scale);
      assertThat(d.zeroCount[2]).isEqualTo(1);
    }

    @Test
    void histogramTotalNotEqualToCountIsRejected() {
      assertInvalid(
          withState(
              state(4)
                  .setHistogram(
                      ExponentialHistogram.newBuilder()
                          .setScale(0)
                          .setZeroCount(1)
                          .setPositive(buckets(-3, 1, 1)))),
          STATE + ".histogram",
          "zero_count plus all bucket counts is 3 but count is 4");
      assertInvalid(
          withState(
              state(1)
                  .setHistogram(
                      ExponentialHistogram.newBuilder()
                          .setScale(0)
                          .setPositive(buckets(-3, 1))
                          .setNegative(buckets(0, 1)))),
          STATE + ".histogram",
          "bucket counts is 2 but count is 1");
    }

    @Test
    void emptyHistogramMessageIsRejected() {
      assertInvalid(
          withState(state(1).setHistogram(ExponentialHistogram.newBuilder().setScale(3))),
          STATE + ".histogram",
          "is 0 but count is 1");
    }

    @Test
    void tooManyPositiveBucketsAreRejected() {
      long[] ones = LongStream.generate(() -> 1).limit(4097).toArray();
      assertInvalid(
          withState(
              state(4097)
                  .setHistogram(
                      ExponentialHistogram.newBuilder().setScale(0).setPositive(buckets(0, ones)))),
          STATE + ".histogram.positive.counts",
          "at most 4096 buckets, got 4097");
    }

    @Test
    void tooManyNegativeBucketsAreRejected() {
      long[] ones = LongStream.generate(() -> 1).limit(4097).toArray();
      assertInvalid(
          withState(
              state(4097)
                  .setHistogram(
                      ExponentialHistogram.newBuilder().setScale(0).setNegative(buckets(0, ones)))),
          STATE + ".histogram.negative.counts",
          "at most 4096 buckets, got 4097");
    }

    @Test
    void aRunOfTooManyBucketsIsRefusedBeforeTheColumnsAreSized() {
      // The columns were sized for 12 bytes per bucket of the run, then the run refused: a 16 MiB
      // message of one-byte counts made the decoder allocate 192 MiB first.
      long[] ones = LongStream.generate(() -> 1).limit(2_000_000).toArray();
      Delta delta =
          withState(
              state(2_000_000)
                  .setHistogram(
                      ExponentialHistogram.newBuilder().setScale(0).setPositive(buckets(0, ones))));
      com.sun.management.ThreadMXBean mx =
          (com.sun.management.ThreadMXBean)
              java.lang.management.ManagementFactory.getThreadMXBean();
      long self = Thread.currentThread().getId();
      long before = mx.getThreadAllocatedBytes(self);
      assertInvalid(
          delta, STATE + ".histogram.positive.counts", "at most 4096 buckets, got 2000000");
      assertThat(mx.getThreadAllocatedBytes(self) - before).isLessThan(4L << 20);
    }

    /** At scale 1, buckets -2048..2047 are all ones doubles have (at scale 0 only -1075..1023). */
    @Test
    void exactly4096BucketsAreAccepted() throws Exception {
      long[] ones = LongStream.generate(() -> 1).limit(4096).toArray();
      DecodedDelta d =
          decode(
              decoder,
              withState(
                  state(4096)
                      .setHistogram(
                          ExponentialHistogram.newBuilder()
                              .setScale(1)
                              .setPositive(buckets(-2048, ones)))));
      assertThat(d.posLen[2]).isEqualTo(4096);
      assertThat(d.bucketIndex[d.posFrom[2]]).isEqualTo(-2048);
      assertThat(d.bucketIndex[d.posFrom[2] + 4095]).isEqualTo(2047);
    }

    @Test
    void zeroCountAbove2To63IsRejected() {
      assertInvalid(
          withState(
              state(1)
                  .setHistogram(ExponentialHistogram.newBuilder().setZeroCount(Long.MIN_VALUE))),
          STATE + ".histogram.zero_count",
          "too large");
    }

    @Test
    void bucketCountAbove2To63IsRejected() {
      assertInvalid(
          withState(
              state(1)
                  .setHistogram(
                      ExponentialHistogram.newBuilder()
                          .setPositive(buckets(0, 0, Long.MIN_VALUE)))),
          STATE + ".histogram.positive.counts[1]",
          "too large");
    }

    @Test
    void bucketCountsOverflowingTogetherAreRejected() {
      assertInvalid(
          withState(
              state(Long.MAX_VALUE)
                  .setHistogram(
                      ExponentialHistogram.newBuilder()
                          .setZeroCount(1L << 62)
                          .setPositive(buckets(0, 1L << 62, 1L << 62)))),
          STATE + ".histogram",
          "bucket counts add up to more than 2^63 - 1");
    }

    @Test
    void bucketOffsetOverflowIsRejected() {
      assertInvalid(
          withState(
              state(2)
                  .setHistogram(
                      ExponentialHistogram.newBuilder()
                          .setPositive(buckets(Integer.MAX_VALUE, 1, 1)))),
          STATE + ".histogram.positive.offset",
          "offset + bucket count overflows");
    }

    /** Scale 0, bucket 2000: its bound 2^2001 is no double (it broke every scrape). */
    @Test
    void bucketAboveTheLargestDoubleIsRejected() {
      assertInvalid(
          withState(
              state(1)
                  .setHistogram(
                      ExponentialHistogram.newBuilder().setScale(0).setPositive(buckets(2000, 1)))),
          STATE + ".histogram.positive.counts[0]",
          "bucket 2000 (offset 2000 + 0) is outside -1075..1023, the buckets finite doubles have"
              + " at scale 0");
      assertInvalid(
          withState(
              state(1)
                  .setHistogram(
                      ExponentialHistogram.newBuilder()
                          .setScale(0)
                          .setNegative(buckets(1022, 0, 0, 1)))),
          STATE + ".histogram.negative.counts[2]",
          "bucket 1024 (offset 1022 + 2) is outside -1075..1023");
    }

    /** Runs near Integer.MAX_VALUE and MIN_VALUE at scale -10 drove a group below MIN_SCALE. */
    @Test
    void bucketsFarOutsideTheDoublesAtScaleMinus10AreRejected() {
      assertInvalid(
          withState(
              state(1)
                  .setHistogram(
                      ExponentialHistogram.newBuilder()
                          .setScale(-10)
                          .setPositive(buckets(Integer.MAX_VALUE - 10, 1)))),
          STATE + ".histogram.positive.counts[0]",
          "is outside -2..0, the buckets finite doubles have at scale -10");
      assertInvalid(
          withState(
              state(1)
                  .setHistogram(
                      ExponentialHistogram.newBuilder()
                          .setScale(-10)
                          .setPositive(buckets(Integer.MIN_VALUE, 1)))),
          STATE + ".histogram.positive.counts[0]",
          "bucket -2147483648 (offset -2147483648 + 0) is outside -2..0");
      assertInvalid(
          withState(
              state(1)
                  .setHistogram(
                      ExponentialHistogram.newBuilder()
                          .setScale(20)
                          .setPositive(buckets(ExpHistogram.minIndex(20) - 1, 1)))),
          STATE + ".histogram.positive.counts[0]",
          "is outside " + ExpHistogram.minIndex(20) + ".." + ExpHistogram.maxIndex(20));
    }

    /** Zero counts hold no value: a run may reach past the doubles' buckets with them. */
    @Test
    void bucketsOfTheSmallestAndLargestDoublesAreAccepted() throws Exception {
      DecodedDelta d =
          decode(
              decoder,
              withState(
                  state(4)
                      .setHistogram(
                          ExponentialHistogram.newBuilder()
                              .setScale(-10)
                              .setPositive(buckets(-3, 0, 1, 0, 1, 0))
                              .setNegative(buckets(-2, 1, 0, 1)))));
      assertThat(d.bucketIndex[d.posFrom[2]]).isEqualTo(-2);
      assertThat(d.bucketIndex[d.posFrom[2] + 1]).isZero();
      assertThat(d.negLen[2]).isEqualTo(2);
      int top = ExpHistogram.maxIndex(20);
      DecodedDelta fine =
          decode(
              decoder,
              withState(
                  state(2)
                      .setHistogram(
                          ExponentialHistogram.newBuilder()
                              .setScale(20)
                              .setPositive(buckets(top, 1))
                              .setNegative(buckets(ExpHistogram.minIndex(20), 1)))));
      assertThat(fine.bucketIndex[fine.posFrom[2]]).isEqualTo(top);
    }

    @Test
    void stateWithoutHistogramDecodes() throws Exception {
      DecodedDelta d =
          decode(
              decoder,
              withState(state(3).setSum(1.5).setMin(0.25).setMax(1.0).setSumOfSquares(1.125)));
      assertThat(d.count[2]).isEqualTo(3);
      assertThat(d.sum[2]).isEqualTo(1.5);
      assertThat(d.min[2]).isEqualTo(0.25);
      assertThat(d.max[2]).isEqualTo(1.0);
      assertThat(d.sumOfSquares[2]).isEqualTo(1.125);
      assertThat(d.scale[2]).isEqualTo(ExpHistogram.MAX_SCALE);
      assertThat(d.zeroCount[2]).isZero();
      assertThat(d.posLen[2]).isZero();
      assertThat(d.negLen[2]).isZero();
      assertThat(d.posFrom[2]).isEqualTo(d.negFrom[2]);
    }

    private ExponentialHistogram.Buckets buckets(int offset, long... counts) {
      ExponentialHistogram.Buckets.Builder b =
          ExponentialHistogram.Buckets.newBuilder().setOffset(offset);
      for (long c : counts) {
        b.addCounts(c);
      }
      return b.build();
    }
  }

  @Nested
  @DisplayName("decoded columns")
  class Columns {
    @Test
    void validDeltaDecodesIntoGlobalColumns() throws Exception {
      double[][] values = {{0.25, 0.25, 0.5, 1.0}, {0.25, 0.5}, {-0.5, 0.0, 0.75, -2.0, 0.0}};
      Delta delta =
          valid()
              .entryWithoutKey(values[2])
              .overhead(1000, 3, 4096, java.util.Map.of("closed_twice", 2L))
              .interval(5_000_000_000L, 15_000_000_000L)
              .build();
      DecodedDelta d = decoder.decode(delta, 777);

      assertThat(d.source).isEqualTo(new SourceKey("checkout", "i-1"));
      assertThat(d.sequence).isEqualTo(1);
      assertThat(d.firstSequence).isZero();
      assertThat(d.startUnixNanos).isEqualTo(5_000_000_000L);
      assertThat(d.endUnixNanos).isEqualTo(15_000_000_000L);
      assertThat(d.clientCpuNanos).isEqualTo(1000);
      assertThat(d.clientEventsDropped).isEqualTo(3);
      assertThat(d.clientBytesHeld).isEqualTo(4096);
      assertThat(d.clientMisuse).containsExactly(java.util.Map.entry("closed_twice", 2L));
      assertThat(d.serializedBytes).isEqualTo(777);

      // Global ids: interning the same definitions again returns the ids already used.
      int region = dictionary.internAttribute("region", AttributeType.PATH, false, "");
      int time = dictionary.internAttribute("time", AttributeType.DOUBLE, true, "seconds");
      assertThat(dictionary.attribute(time))
          .isEqualTo(new Attribute(time, "time", AttributeType.DOUBLE, true, "seconds"));

      assertThat(d.entries).isEqualTo(3);
      assertThat(d.keyStart).containsExactly(0, 1, 2, 2);
      assertThat(d.keyAttr).containsExactly(region, region);
      PathNode main = dictionary.pathNode((int) d.keyValue[0]);
      PathNode query = dictionary.pathNode((int) d.keyValue[1]);
      assertThat(main).isEqualTo(new PathNode(main.id(), 0, region, "main", "compute", 1, 4));
      assertThat(query)
          .isEqualTo(new PathNode(query.id(), main.id(), region, "db.query", "io", 2, 13));
      assertThat(dictionary.path(query.id())).isEqualTo("main/db.query");

      assertThat(d.measStart).containsExactly(0, 1, 2, 3);
      assertThat(d.measurements()).isEqualTo(3);
      assertThat(d.measAttr).containsExactly(time, time, time);
      assertThat(d.count).containsExactly(4, 2, 5);
      assertThat(d.sum).containsExactly(2.0, 0.75, -1.75);
      assertThat(d.min).containsExactly(0.25, 0.25, -2.0);
      assertThat(d.max).containsExactly(1.0, 0.5, 0.75);
      assertThat(d.sumOfSquares).containsExactly(1.375, 0.3125, 4.8125);

      // Histograms: the slab holds each state's non-zero positive then negative buckets (index
      // and count), states in order.
      int slab = 0;
      for (int j = 0; j < 3; j++) {
        ExponentialHistogram h = Deltas.state(values[j]).getHistogram();
        assertThat(d.scale[j]).as("scale %d", j).isEqualTo(h.getScale());
        assertThat(d.zeroCount[j]).as("zero %d", j).isEqualTo(h.getZeroCount());
        assertThat(d.posFrom[j]).as("posFrom %d", j).isEqualTo(slab);
        assertThat(sparse(d, d.posFrom[j], d.posLen[j])).isEqualTo(nonZero(h.getPositive()));
        slab += d.posLen[j];
        assertThat(d.negFrom[j]).as("negFrom %d", j).isEqualTo(slab);
        assertThat(sparse(d, d.negFrom[j], d.negLen[j])).isEqualTo(nonZero(h.getNegative()));
        slab += d.negLen[j];
      }
      assertThat(d.zeroCount[2]).isEqualTo(2);
      assertThat(d.negLen[2]).isPositive();
      assertThat(d.negLen[0]).isZero();
    }

    @Test
    void secondDeltaMayOmitSourceAndDictionary() throws Exception {
      DecodedDelta first = decode(decoder, valid().build());
      DecodedDelta second =
          decode(decoder, Deltas.next().seq(2).entry(2, 0.5).entry(1, 1.0, 1.0).build());
      assertThat(second.source).isEqualTo(first.source);
      assertThat(second.info.incarnation()).isEqualTo(7);
      assertThat(second.sequence).isEqualTo(2);
      assertThat(second.keyAttr).containsExactly(first.keyAttr);
      assertThat(second.keyValue).containsExactly(first.keyValue[1], first.keyValue[0]);
      assertThat(second.measAttr).containsExactly(first.measAttr);
      assertThat(second.count).containsExactly(1, 2);
      assertThat(second.sum).containsExactly(0.5, 2.0);
    }

    @Test
    void dictionaryIdsAreScopedToOneDecoder() throws Exception {
      decode(decoder, valid().build());
      StreamDecoder other = new StreamDecoder(dictionary);
      // A new stream with the same source but without definitions: nothing is known.
      assertInvalid(
          other,
          Deltas.source("checkout", "i-1")
              .incarnation(7)
              .withoutBaseAttributes()
              .seq(2)
              .entry(2, 1.0)
              .build(),
          "entries[0].key[0].attribute_id",
          "attribute 1 is not defined in this stream's dictionary (definitions are scoped to one"
              + " Push stream");
      // With attributes but not the path nodes: the node is unknown.
      assertInvalid(
          other,
          Deltas.source("checkout", "i-1").incarnation(7).seq(2).entry(2, 1.0).build(),
          "entries[0].key[0].path_node_id",
          "path node 2 is not defined");
      // A path node whose name string was defined only on the first stream.
      assertInvalid(
          other,
          Deltas.source("checkout", "i-1")
              .incarnation(7)
              .seq(2)
              .pathNode(Deltas.pathNode(1, 0, REGION, 1, REGION_KIND_COMPUTE))
              .build(),
          "dictionary.path_nodes[0].name_id",
          "string 1 is not defined in this stream");
    }

    @Test
    void differentClientIdsForTheSameDefinitionsShareGlobalIds() throws Exception {
      DecodedDelta a = decode(decoder, valid().build());
      StreamDecoder other = new StreamDecoder(dictionary);
      DecodedDelta b =
          decode(
              other,
              Deltas.source("checkout", "i-2")
                  .withoutBaseAttributes()
                  .attribute(10, "region", VALUE_TYPE_PATH, ATTRIBUTE_KIND_DIMENSION, "")
                  .attribute(20, "time", VALUE_TYPE_DOUBLE, ATTRIBUTE_KIND_MEASUREMENT, "seconds")
                  .string(30, "db.query")
                  .string(31, "main")
                  .pathNode(Deltas.pathNode(41, 0, 10, 31, REGION_KIND_COMPUTE))
                  .pathNode(Deltas.pathNode(40, 41, 10, 30, REGION_KIND_IO))
                  .entry(
                      Entry.newBuilder()
                          .addKey(AttributeValue.newBuilder().setAttributeId(10).setPathNodeId(40))
                          .addMeasurements(Deltas.measurement(20, 1.0)))
                  .build());
      assertThat(b.keyAttr[0]).isEqualTo(a.keyAttr[1]);
      assertThat(b.keyValue[0]).isEqualTo(a.keyValue[1]);
      assertThat(b.measAttr[0]).isEqualTo(a.measAttr[1]);
    }

    @Test
    void rejectedDeltaKeepsDefinitionsReadBeforeTheError() throws Exception {
      Delta bad = withState(state(0));
      assertInvalid(bad, STATE + ".count", "must be > 0");
      // The source and the dictionary of the rejected delta were kept.
      assertThat(decoder.source()).isEqualTo(new SourceKey("checkout", "i-1"));
      DecodedDelta d = decode(decoder, Deltas.next().seq(1).entry(2, 1.0).build());
      assertThat(dictionary.path((int) d.keyValue[0])).isEqualTo("main/db.query");
    }

    @Test
    void decoderKnowsNoSourceBeforeTheFirstValidIdentity() throws Exception {
      assertThat(decoder.source()).isNull();
      assertInvalid(valid().incarnation(0).build(), "source.incarnation_id", "non-zero");
      assertThat(decoder.source()).isNull();
      assertInvalid(valid().seq(0).build(), "sequence", "must be > 0");
      assertThat(decoder.source()).isEqualTo(new SourceKey("checkout", "i-1"));
    }

    private long[] toArray(ExponentialHistogram.Buckets b) {
      return b.getCountsList().stream().mapToLong(Long::longValue).toArray();
    }
  }

  /** "index=count" of the decoded sparse run. */
  static List<String> sparse(DecodedDelta d, int from, int len) {
    List<String> out = new java.util.ArrayList<>();
    for (int k = from; k < from + len; k++) {
      out.add(d.bucketIndex[k] + "=" + d.bucketCount[k]);
    }
    return out;
  }

  /** "index=count" of the non-zero buckets of a dense wire run. */
  static List<String> nonZero(ExponentialHistogram.Buckets b) {
    List<String> out = new java.util.ArrayList<>();
    for (int i = 0; i < b.getCountsCount(); i++) {
      if (b.getCounts(i) != 0) {
        out.add((b.getOffset() + i) + "=" + b.getCounts(i));
      }
    }
    return out;
  }

  @Nested
  @DisplayName("thread activity")
  class ThreadActivity {
    private static final long S = 1_000_000_000L; // valid()'s interval is 10 s

    private dev.profold.proto.v1.ThreadGroupActivity.Builder pool() {
      return dev.profold.proto.v1.ThreadGroupActivity.newBuilder()
          .setThreadGroup("pool-*")
          .setThreads(2)
          .setWallNanos(20 * S)
          .setComputeNanos(8 * S)
          .setSyncNanos(4 * S)
          .setIdleNanos(8 * S)
          .setCpuMinNanos(3 * S)
          .setCpuSumNanos(8 * S)
          .setCpuMaxNanos(5 * S);
    }

    private Delta with(dev.profold.proto.v1.ThreadGroupActivity.Builder... groups) {
      Deltas.Builder b = valid();
      for (dev.profold.proto.v1.ThreadGroupActivity.Builder g : groups) {
        b.threads(g.build());
      }
      return b.build();
    }

    @Test
    void validActivityIsDecoded() throws Exception {
      DecodedDelta d = decode(decoder, with(pool(), pool().setThreadGroup("main").setThreads(2)));
      assertThat(d.threadActivity).hasSize(2);
      GroupActivity g = d.threadActivity.get(0);
      assertThat(g.group()).isEqualTo("pool-*");
      assertThat(g.wallNanos()).isEqualTo(20 * S);
      assertThat(g.classes().get(dev.profold.sinks.snapshot.OverheadClass.SYNC)).isEqualTo(4 * S);
      assertThat(g.cpuMaxNanos()).isEqualTo(5 * S);
    }

    @Test
    void timeWaitingForACpuIsSplitOutOfTheIdleTimeThatHoldsIt() throws Exception {
      DecodedDelta d = decode(decoder, with(pool().setCpuWaitNanos(3 * S)));
      assertThat(d.threadActivity.get(0).classes().get(OverheadClass.CPU_WAIT)).isEqualTo(3 * S);
      assertThat(d.threadActivity.get(0).classes().get(OverheadClass.IDLE)).isEqualTo(5 * S);
      assertThat(d.threadActivity.get(0).classes().sum()).isEqualTo(20 * S);
      assertInvalid(
          with(pool().setCpuWaitNanos(9 * S)),
          "thread_activity[0].cpu_wait_nanos",
          "9000000000 ns is more than idle_nanos (8000000000 ns)");
    }

    @Test
    void classesMustAddUpToTheWallTime() {
      assertInvalid(
          with(pool().setIdleNanos(7 * S)),
          "thread_activity[0]",
          "class times add up to 19000000000 ns but wall_nanos is 20000000000");
    }

    @Test
    void groupNamesAreRequiredAndUnique() {
      assertInvalid(
          with(pool().setThreadGroup("")), "thread_activity[0].thread_group", "1..128 characters");
      assertInvalid(
          with(pool(), pool()), "thread_activity[1].thread_group", "'pool-*' appears twice");
    }

    @Test
    void threadsMustBePositiveAndTheirWallTimeFitTheInterval() {
      assertInvalid(with(pool().setThreads(0)), "thread_activity[0].threads", "must be > 0");
      assertInvalid(
          with(pool().setThreads(1)), "thread_activity[0].wall_nanos", "exceeds their interval");
    }

    @Test
    void theCpuSpreadMustBeConsistent() {
      assertInvalid(
          with(pool().setCpuMinNanos(6 * S)),
          "thread_activity[0]",
          "cpu_min_nanos <= cpu_max_nanos <= cpu_sum_nanos");
    }

    @Test
    void timesBeyond2To63AreRejectedNamingTheField() {
      assertInvalid(
          with(pool().setIoNanos(-1)),
          "thread_activity[0].io_nanos",
          "18446744073709551615 ns: must be below 2^63 nanoseconds");
      assertInvalid(
          with(pool().setCpuMaxNanos(-1)),
          "thread_activity[0].cpu_max_nanos",
          "must be below 2^63 nanoseconds");
    }

    @Test
    void threadsFrom2To31AreRejectedAsTooMany() {
      // Before: "must be > 0 (leave out empty groups)" for 2^31 threads.
      assertInvalid(
          with(pool().setThreads(Integer.MIN_VALUE)),
          "thread_activity[0].threads",
          "2147483648 is too many: at most 2^31 - 1");
    }

    private dev.profold.proto.v1.IoObservation io(long unobservedNanos) {
      return dev.profold.proto.v1.IoObservation.newBuilder()
          .setUnobservedNanos(unobservedNanos)
          .build();
    }

    @Test
    void theTimeIoWentUnobservedIsDecodedAndAtMostTheIntervalsLength() throws Exception {
      Delta ok = with(pool()).toBuilder().setIoObservation(io(10 * S)).build();
      assertThat(decode(decoder, ok).ioUnobservedNanos).isEqualTo(10 * S);
      assertThat(decode(new StreamDecoder(dictionary), with(pool())).ioUnobservedNanos)
          .as("not set: the client does not say")
          .isEqualTo(-1);
      Delta zero = with(pool()).toBuilder().setIoObservation(io(0)).build();
      assertThat(decode(new StreamDecoder(dictionary), zero).ioUnobservedNanos).isZero();
      assertInvalid(
          with(pool()).toBuilder().setIoObservation(io(10 * S + 1)).build(),
          "io_observation.unobserved_nanos",
          "10000000001 ns is longer than the interval (10000000000 ns)");
      assertInvalid(
          with(pool()).toBuilder().setIoObservation(io(-1)).build(),
          "io_observation.unobserved_nanos",
          "18446744073709551615 ns is longer than the interval");
    }

    @Test
    void atMost256Groups() {
      dev.profold.proto.v1.ThreadGroupActivity.Builder[] many =
          new dev.profold.proto.v1.ThreadGroupActivity.Builder[257];
      for (int i = 0; i < many.length; i++) {
        many[i] = pool().setThreadGroup("g" + i);
      }
      assertInvalid(with(many), "thread_activity", "257 thread groups; at most 256");
    }
  }

  @Test
  void clientMisuseKindsAreValidatedAndCappedSoAClientCannotGrowLabelSets() {
    java.util.Map<String, Long> reported = new java.util.HashMap<>();
    for (int i = 0; i < 40; i++) {
      reported.put(String.format("kind_%02d", i), 1L);
    }
    reported.put("Bad-Kind", 5L);
    reported.put("x".repeat(41), 5L);
    reported.put("zero", 0L);
    java.util.Map<String, Long> kept = StreamDecoder.misuse(reported);
    assertThat(kept).hasSize(StreamDecoder.MAX_MISUSE_KINDS);
    assertThat(kept.keySet()).allMatch(k -> k.startsWith("kind_"));
    assertThat(kept).containsEntry("kind_00", 1L).doesNotContainKey("kind_16");
  }

  @Test
  void uint64CountsOfTwoToTheSixtyThreeAndMoreAreHeldAtTheLargestLong() {
    assertThat(StreamDecoder.unsigned(-1L)).isEqualTo(Long.MAX_VALUE); // 2^64 - 1 on the wire
    assertThat(StreamDecoder.unsigned(5L)).isEqualTo(5L);
    assertThat(StreamDecoder.misuse(java.util.Map.of("table_full", -2L)))
        .containsExactly(java.util.Map.entry("table_full", Long.MAX_VALUE));
  }
}
