package dev.profold.collector.query;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * The JSON Lines reader builds each record from the parser's tokens. It must give exactly what a
 * reference built on a {@link JsonNode} tree of the object gives: same members in the same order
 * (duplicates and nulls included), same value types, same error message for a bad line.
 */
class JsonRecordsReaderTest {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** Member values: every kind the reader distinguishes, valid or not. */
  private static final List<String> VALUES =
      List.of(
          "\"x\"",
          "\"\"",
          "\"\\u00e9\\n\\\"q\\\"\"",
          "0",
          "-0",
          "7",
          "-42",
          "2147483648",
          "9223372036854775807",
          "9223372036854775808",
          "-9223372036854775809",
          "123456789012345678901234567890",
          "1.5",
          "-0.0",
          "1e3",
          "1.5E-7",
          "2.0",
          "1e400",
          "123456789012345678901234567890.125",
          "true",
          "false",
          "null",
          "[]",
          "[\"main\",\"foo\"]",
          "[\"a\",1,true,2.5,-0.0,1e3,12345678901234567890123]",
          "[null]",
          "[\"a\",[1]]",
          "[{\"count\":1}]",
          "{\"count\":2,\"sum\":3,\"min\":1,\"max\":2,\"sumsq\":5}",
          "{\"count\":2,\"sum\":3.5,\"min\":1,\"max\":2.5,\"sumsq\":7.25}",
          "{\"count\":0,\"sum\":0,\"sumsq\":0}",
          "{\"count\":1,\"sum\":1,\"min\":1,\"max\":1,\"sumsq\":1,"
              + "\"histogram\":{\"scale\":0,\"positive\":{\"offset\":-1,\"counts\":[1]}}}",
          "{\"count\":\"x\"}",
          "{\"count\":2,\"sum\":3,\"min\":3,\"max\":1,\"sumsq\":5}",
          "{}",
          "{\"a\":1}");

  /** Broken endings, to check which error wins. */
  private static final List<String> TAILS = List.of("", "}", ",}", ",\"z\":}", ",\"z\":[1,", ":1");

  @Provide
  Arbitrary<String> lines() {
    Arbitrary<String> member =
        Arbitraries.of("a", "b", "time", "count")
            .flatMap(k -> Arbitraries.of(VALUES).map(v -> "\"" + k + "\":" + v));
    Arbitrary<String> body = member.list().ofMaxSize(6).map(m -> "{" + String.join(",", m));
    return body.flatMap(b -> Arbitraries.of(TAILS).map(t -> t.isEmpty() ? b + "}" : b + t));
  }

  @Property(tries = 3000)
  void givesWhatTheTreeGives(@ForAll("lines") String line) throws IOException {
    assertThat(outcome(line)).isEqualTo(reference(line));
  }

  @Test
  void eachValueAloneAndRepeated() throws IOException {
    for (String v : VALUES) {
      for (String line :
          List.of(
              "{\"v\":" + v + "}",
              "{\"v\":" + v + ",\"w\":1,\"v\":2}",
              "{\"v\":null,\"w\":1,\"v\":" + v + "}",
              "{\"v\":1,\"v\":" + v + "}")) {
        assertThat(outcome(line)).as(line).isEqualTo(reference(line));
      }
    }
  }

  @Test
  void keepsMemberOrderOfTheFirstOccurrence() throws Exception {
    String line = "{\"a\":null,\"b\":2,\"a\":1,\"c\":[\"x\"],\"b\":null}";
    assertThat(outcome(line)).isEqualTo(reference(line));
    assertThat(JsonRecords.parseRecord(line).keySet()).containsExactly("a", "c");
  }

  /** The record as a list of entries (so order counts), or the error message. */
  private static Object outcome(String line) throws IOException {
    List<Map<String, Object>> out = new ArrayList<>();
    try {
      JsonRecords.read(new StringReader(line), "t", out::add);
    } catch (RecordFormatException e) {
      return e.getMessage();
    }
    assertThat(out).hasSize(1);
    return ordered(out.get(0));
  }

  private static Object reference(String line) throws IOException {
    try (JsonParser p = MAPPER.createParser(line)) {
      JsonNode node;
      try {
        assertThat(p.nextToken()).isEqualTo(JsonToken.START_OBJECT);
        node = MAPPER.readTree(p);
        if (p.nextToken() != null) {
          return "trailing";
        }
      } catch (JsonProcessingException e) {
        long at = e.getLocation() == null ? 0 : e.getLocation().getLineNr();
        return "t:" + at + ": invalid JSON: " + e.getOriginalMessage();
      }
      Map<String, Object> record = new LinkedHashMap<>();
      for (Map.Entry<String, JsonNode> f : node.properties()) {
        try {
          Object v = treeValue(f.getValue());
          if (v != null) {
            record.put(f.getKey(), v);
          }
        } catch (IllegalArgumentException e) {
          return "t:1: attribute \"" + f.getKey() + "\": " + e.getMessage();
        }
      }
      return ordered(record);
    }
  }

  /** How a tree value becomes an attribute value (states through the reader itself). */
  private static Object treeValue(JsonNode n) {
    if (n.isNull()) {
      return null;
    }
    if (n.isTextual()) {
      return n.textValue();
    }
    if (n.isBoolean()) {
      return n.booleanValue();
    }
    if (n.isIntegralNumber() && n.canConvertToLong()) {
      return n.longValue();
    }
    if (n.isNumber()) {
      if (!Double.isFinite(n.doubleValue())) {
        throw new IllegalArgumentException("a number beyond the range of a double");
      }
      return n.doubleValue();
    }
    if (n.isArray()) {
      List<String> path = new ArrayList<>();
      for (JsonNode e : n) {
        if (e.isContainerNode() || e.isNull()) {
          throw new IllegalArgumentException(
              "a path (array) may hold only strings, numbers and booleans");
        }
        path.add(e.asText());
      }
      return List.copyOf(path);
    }
    try {
      return JsonRecords.parseRecord("{\"s\":" + n + "}").get("s");
    } catch (RecordFormatException e) {
      String message = e.getMessage();
      throw new IllegalArgumentException(message.substring(message.indexOf("\"s\": ") + 5), e);
    }
  }

  private static Object ordered(Map<String, Object> record) {
    Map<String, Object> m = new LinkedHashMap<>(record);
    assertThat(m.values()).allSatisfy(v -> assertThat(v).isNotNull());
    return new ArrayList<>(m.entrySet());
  }
}
