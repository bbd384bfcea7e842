package dev.profold.collector.query;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.profold.reduce.ExpHistogram;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.Reader;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Records as JSON: reading JSON Lines input, writing results and partial results. Thread-safe.
 *
 * <p>Input: one JSON object per line (a JSON array of objects, or objects separated by any
 * whitespace, is accepted too). A member is an attribute: string, integer (Long), other number
 * (Double), boolean, an array (a nested path, outermost first; its elements are taken as text), or
 * an object with a {@code count} member, which is a {@link PreAggregated} state; {@code null} means
 * the attribute is absent.
 */
public final class JsonRecords {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private JsonRecords() {}

  /**
   * Reads all records of {@code in}, passing each to {@code sink} in order.
   *
   * @param source the file name used in error messages
   * @throws RecordFormatException at the first malformed record, naming source and line
   */
  public static void read(Reader in, String source, Consumer<Map<String, Object>> sink)
      throws IOException, RecordFormatException {
    try (JsonParser p = MAPPER.createParser(withoutByteOrderMark(in))) {
      JsonToken t = next(p, source);
      if (t == null) {
        return;
      }
      if (t == JsonToken.START_ARRAY) {
        while ((t = next(p, source)) != JsonToken.END_ARRAY) {
          if (t == null) {
            throw new RecordFormatException(source, line(p), "the array of records is not closed");
          }
          sink.accept(object(p, t, source));
        }
        t = next(p, source);
        if (t != null) {
          throw new RecordFormatException(
              source,
              line(p),
              "expected end of input after the array of records, found " + t.asString());
        }
        return;
      }
      while (t != null) {
        sink.accept(object(p, t, source));
        t = next(p, source);
      }
    }
  }

  /** {@code in} past a leading byte-order mark (U+FEFF, which some editors write), if any. */
  private static Reader withoutByteOrderMark(Reader in) throws IOException {
    java.io.PushbackReader r = new java.io.PushbackReader(in, 1);
    int first = r.read();
    if (first != -1 && first != '\uFEFF') {
      r.unread(first);
    }
    return r;
  }

  /** Parses one JSON object into a record (for tests and callers with records in strings). */
  public static Map<String, Object> parseRecord(String json) throws RecordFormatException {
    List<Map<String, Object>> out = new ArrayList<>();
    try {
      read(new StringReader(json), "<string>", out::add);
    } catch (IOException e) {
      throw new IllegalStateException("reading a string", e);
    }
    if (out.size() != 1) {
      throw new RecordFormatException(
          "<string>", 1, "expected one JSON object, found " + out.size());
    }
    return out.get(0);
  }

  private static JsonToken next(JsonParser p, String source)
      throws IOException, RecordFormatException {
    try {
      return p.nextToken();
    } catch (JsonProcessingException e) {
      throw invalid(e, source);
    }
  }

  private static long line(JsonParser p) {
    return p.currentLocation().getLineNr();
  }

  private static RecordFormatException invalid(JsonProcessingException e, String source) {
    JsonLocation at = e.getLocation();
    long line = at == null ? 0 : at.getLineNr();
    if (e instanceof com.fasterxml.jackson.core.io.JsonEOFException) {
      return RecordFormatException.incompleteEnd(source, line);
    }
    return new RecordFormatException(source, line, "invalid JSON: " + e.getOriginalMessage());
  }

  /**
   * Reads one record member by member, straight from the parser's tokens, without building a {@link
   * JsonNode} tree of it (only big numbers and states go through a tree node and {@link #value}).
   * The record is the one the tree of the object would give: a JSON {@code null} or an invalid
   * value is held as a marker until the object ends, so that a later duplicate member replaces it
   * in place as in the tree, and a syntax error anywhere in the object is reported before an
   * invalid value.
   */
  private static Map<String, Object> object(JsonParser p, JsonToken t, String source)
      throws IOException, RecordFormatException {
    long line = p.currentTokenLocation().getLineNr();
    if (t != JsonToken.START_OBJECT) {
      throw new RecordFormatException(
          source, line, "expected a JSON object (a record), found " + describe(t));
    }
    Map<String, Object> record = new LinkedHashMap<>();
    boolean marked = false;
    try {
      // nextFieldName, as Jackson's tree reader does, so that syntax errors read the same
      for (String name = p.nextFieldName(); name != null; name = p.nextFieldName()) {
        Object v = member(p, p.nextToken());
        marked |= v == ABSENT || v instanceof Invalid;
        record.put(name, v);
      }
    } catch (JsonProcessingException e) {
      throw invalid(e, source);
    }
    if (marked) {
      for (var it = record.entrySet().iterator(); it.hasNext(); ) {
        Map.Entry<String, Object> e = it.next();
        if (e.getValue() == ABSENT) {
          it.remove();
        } else if (e.getValue() instanceof Invalid i) {
          throw new RecordFormatException(
              source, line, "attribute \"" + e.getKey() + "\": " + i.message());
        }
      }
    }
    return record;
  }

  /** Marks a member whose value is JSON {@code null}: the attribute is absent. */
  private static final Object ABSENT = new Object();

  /** Why a number such as 1e400 is refused: as a double it is infinite, which aggregates skip. */
  static final String BEYOND_DOUBLE = "a number beyond the range of a double";

  /** Marks a member whose value is not an attribute value, with the reason. */
  private record Invalid(String message) {}

  /** The value of the member at token {@code t}, {@link #ABSENT} or an {@link Invalid}. */
  private static Object member(JsonParser p, JsonToken t) throws IOException {
    Object v =
        switch (t) {
          case VALUE_STRING -> p.getText();
          case VALUE_TRUE -> true;
          case VALUE_FALSE -> false;
          case VALUE_NULL -> ABSENT;
          case VALUE_NUMBER_INT -> {
            JsonParser.NumberType n = p.getNumberType();
            boolean fits = n == JsonParser.NumberType.INT || n == JsonParser.NumberType.LONG;
            yield fits ? (Object) p.getLongValue() : null;
          }
          case VALUE_NUMBER_FLOAT -> {
            JsonParser.NumberTypeFP n = p.getNumberTypeFP();
            boolean plain =
                n != JsonParser.NumberTypeFP.BIG_DECIMAL && n != JsonParser.NumberTypeFP.FLOAT32;
            if (plain && !Double.isFinite(p.getDoubleValue())) {
              // 1e400: beyond a double, where aggregates would skip it without a word
              yield new Invalid(BEYOND_DOUBLE);
            }
            yield plain ? (Object) p.getDoubleValue() : null;
          }
          case START_ARRAY -> path(p);
          default -> null;
        };
    if (v != null) {
      return v;
    }
    // Big numbers and objects (states): through a tree node, as before.
    JsonNode node = MAPPER.readTree(p);
    try {
      Object w = value(node);
      return w == null ? ABSENT : w;
    } catch (IllegalArgumentException e) {
      return new Invalid(e.getMessage());
    }
  }

  /** A path from the array starting at the current token, or an {@link Invalid}. */
  private static Object path(JsonParser p) throws IOException {
    List<String> path = new ArrayList<>();
    boolean invalid = false;
    for (JsonToken e = p.nextToken(); e != JsonToken.END_ARRAY && e != null; e = p.nextToken()) {
      switch (e) {
        case VALUE_STRING -> path.add(p.getText());
        case VALUE_NULL -> invalid = true;
        default -> {
          // numbers and booleans as text, as their tree node prints them; a nested array or
          // object is read (as the tree reads it) and makes the path invalid
          JsonNode n = MAPPER.readTree(p);
          invalid |= n.isContainerNode();
          path.add(n.asText());
        }
      }
    }
    return invalid ? new Invalid(PATH_ELEMENTS) : List.copyOf(path);
  }

  private static final String PATH_ELEMENTS =
      "a path (array) may hold only strings, numbers and booleans";

  private static String describe(JsonToken t) {
    return switch (t) {
      case START_ARRAY -> "an array";
      case VALUE_STRING -> "a string";
      case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "a number";
      case VALUE_TRUE, VALUE_FALSE -> "a boolean";
      case VALUE_NULL -> "null";
      default -> t.asString() == null ? t.name() : "'" + t.asString() + "'";
    };
  }

  private static Object value(JsonNode n) {
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
        throw new IllegalArgumentException(BEYOND_DOUBLE);
      }
      return n.doubleValue();
    }
    if (n.isObject() && n.has("count")) {
      return state(n);
    }
    throw new IllegalArgumentException(
        "expected a string, number, boolean, path array or pre-aggregated state"
            + " {\"count\":..,\"sum\":..,\"min\":..,\"max\":..,\"sumsq\":..}");
  }

  private static PreAggregated state(JsonNode n) {
    long count = integer(n, "count");
    boolean integral = true;
    double sum = number(n, "sum");
    integral &= n.get("sum").isIntegralNumber();
    double sumsq = number(n, "sumsq");
    double min = Double.POSITIVE_INFINITY;
    double max = Double.NEGATIVE_INFINITY;
    if (count > 0) {
      min = number(n, "min");
      max = number(n, "max");
      integral &= n.get("min").isIntegralNumber() && n.get("max").isIntegralNumber();
    }
    ExpHistogram h = null;
    JsonNode hn = n.get("histogram");
    if (hn != null && !hn.isNull()) {
      int scale = smallInteger(hn, "scale");
      if (scale < ExpHistogram.MIN_SCALE || scale > ExpHistogram.MAX_SCALE) {
        throw new IllegalArgumentException(
            "histogram scale must be within "
                + ExpHistogram.MIN_SCALE
                + ".."
                + ExpHistogram.MAX_SCALE
                + ", was "
                + scale);
      }
      long zero = hn.has("zero") ? integer(hn, "zero") : 0;
      if (zero < 0) {
        throw new IllegalArgumentException("histogram zero count must be >= 0, was " + zero);
      }
      Side pos = side(hn.get("positive"));
      Side neg = side(hn.get("negative"));
      h = new ExpHistogram();
      h.mergeRaw(
          scale,
          zero,
          pos.offset,
          pos.counts,
          0,
          pos.counts.length,
          neg.offset,
          neg.counts,
          0,
          neg.counts.length);
    }
    return PreAggregated.of(count, sum, min, max, sumsq, h, integral);
  }

  /** One sign's bucket run of a histogram in JSON. */
  private static final class Side {
    final int offset;
    final long[] counts;

    Side(int offset, long[] counts) {
      this.offset = offset;
      this.counts = counts;
    }
  }

  private static Side side(JsonNode s) {
    if (s == null || s.isNull()) {
      return new Side(0, new long[0]);
    }
    int offset = s.has("offset") ? smallInteger(s, "offset") : 0;
    JsonNode c = s.get("counts");
    if (c == null || !c.isArray()) {
      throw new IllegalArgumentException("histogram side needs a \"counts\" array");
    }
    long[] counts = new long[c.size()];
    for (int i = 0; i < counts.length; i++) {
      JsonNode e = c.get(i);
      if (!e.isIntegralNumber() || !e.canConvertToLong() || e.longValue() < 0) {
        throw new IllegalArgumentException("histogram counts must be non-negative integers");
      }
      counts[i] = e.longValue();
    }
    return new Side(offset, counts);
  }

  private static long integer(JsonNode n, String field) {
    JsonNode f = n.get(field);
    if (f == null || !f.isIntegralNumber() || !f.canConvertToLong()) {
      throw new IllegalArgumentException("state member \"" + field + "\" must be an integer");
    }
    return f.longValue();
  }

  /** {@link #integer}, within an {@code int}: a larger one is refused rather than wrapped. */
  private static int smallInteger(JsonNode n, String field) {
    long v = integer(n, field);
    if (v != (int) v) {
      throw new IllegalArgumentException(
          "state member \""
              + field
              + "\" must be within "
              + Integer.MIN_VALUE
              + ".."
              + Integer.MAX_VALUE
              + ", was "
              + v);
    }
    return (int) v;
  }

  private static double number(JsonNode n, String field) {
    JsonNode f = n.get(field);
    if (f != null && f.isTextual()) {
      // How the writer puts a sum or sum of squares that grew beyond a double (see write).
      switch (f.textValue()) {
        case "Infinity" -> {
          return Double.POSITIVE_INFINITY;
        }
        case "-Infinity" -> {
          return Double.NEGATIVE_INFINITY;
        }
        case "NaN" -> {
          return Double.NaN;
        }
        default -> {
          // not a number: refused below
        }
      }
    }
    if (f == null || !f.isNumber()) {
      throw new IllegalArgumentException("state member \"" + field + "\" must be a number");
    }
    return f.doubleValue();
  }

  // --- writing

  /**
   * Writes {@code result} as a JSON array of row objects, one row per line. Paths print as {@code
   * "main/foo"}; non-finite numbers as the strings {@code "Infinity"}, {@code "-Infinity"}, {@code
   * "NaN"}.
   */
  static void writeResult(QueryResult result, PrintWriter out) throws IOException {
    if (result.rows().isEmpty()) {
      out.println("[]");
      return;
    }
    out.println("[");
    for (int i = 0; i < result.rows().size(); i++) {
      Map<String, Object> row = new LinkedHashMap<>();
      for (Map.Entry<String, Object> e : result.rows().get(i).entrySet()) {
        row.put(e.getKey(), jsonValue(e.getValue(), false));
      }
      out.print("  ");
      out.print(MAPPER.writeValueAsString(row));
      out.println(i + 1 < result.rows().size() ? "," : "");
    }
    out.println("]");
  }

  /**
   * Writes records as JSON Lines, paths as arrays and states as objects: the input format, so a
   * partial result written here can be read back by {@link #read}.
   */
  public static void writeLines(List<Map<String, Object>> records, PrintWriter out)
      throws IOException {
    for (Map<String, Object> r : records) {
      Map<String, Object> row = new LinkedHashMap<>();
      for (Map.Entry<String, Object> e : r.entrySet()) {
        row.put(e.getKey(), jsonValue(e.getValue(), true));
      }
      out.println(MAPPER.writeValueAsString(row));
    }
  }

  /**
   * One result value as JSON text, as {@link OutputFormat#JSON} prints it: a path as {@code
   * "main/foo"}, a histogram or a state as an object, non-finite numbers as strings.
   */
  public static String valueJson(Object value) {
    try {
      return MAPPER.writeValueAsString(jsonValue(value, false));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a result value that Jackson cannot write: " + value, e);
    }
  }

  private static Object jsonValue(Object v, boolean pathsAsArrays) {
    if (v instanceof List<?> l) {
      return pathsAsArrays ? l : Values.pathText(l);
    }
    if (v instanceof PreAggregated p) {
      return p.toMap();
    }
    if (v instanceof HistogramView h) {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("scale", h.scale());
      List<Map<String, Object>> buckets = new ArrayList<>();
      for (HistogramView.Bucket b : h.buckets()) {
        Map<String, Object> bm = new LinkedHashMap<>();
        bm.put("lower", b.lower());
        bm.put("upper", b.upper());
        bm.put("count", b.count());
        buckets.add(bm);
      }
      m.put("buckets", buckets);
      return m;
    }
    return v;
  }
}
