package dev.profold.collector.alert;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.collector.analysis.DerivedValue;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RuleExpressionTest {
  private static DerivedValue v(String name, double value, String... labels) {
    Map<String, String> m = new java.util.HashMap<>();
    for (int i = 0; i < labels.length; i += 2) {
      m.put(labels[i], labels[i + 1]);
    }
    return DerivedValue.of(name, m, value);
  }

  @Test
  void aPatternThatOverflowsTheStackOnALongPathSelectsItNeitherWay() throws Exception {
    // Java's regex engine recurses once per repetition of the group: a path of thousands of
    // characters overflows the stack. Before, the overflow ended alert evaluation for good.
    String path = "a/".repeat(100_000) + "handleRequest";
    RuleExpression matches = RuleExpression.parse("x{path=~\"(\\w|/)*handleRequest\"} > 0");
    RuleExpression notMatches = RuleExpression.parse("x{path!~\"(\\w|/)*handleRequest\"} > 0");
    LabelMatcher m = matches.matchers().get(0);
    LabelMatcher n = notMatches.matchers().get(0);
    assertThat(m.matches(Map.of("path", path))).isFalse();
    assertThat(n.matches(Map.of("path", path))).isFalse();
    // A short value is decided as usual.
    assertThat(m.matches(Map.of("path", "a/handleRequest"))).isTrue();
    assertThat(n.matches(Map.of("path", "a/other"))).isTrue();
  }

  @Test
  void parsesNameMatchersComparisonAndNumber() throws Exception {
    RuleExpression e =
        RuleExpression.parse(
            "  thread_class_ratio{class=\"sync\", service!='x', thread_group=~\"http-.*\","
                + " instance!~\"canary-\\\\d+\",} >= 2.5e-1 ");
    assertThat(e.valueName()).isEqualTo("thread_class_ratio");
    assertThat(e.matchers())
        .extracting(LabelMatcher::label, LabelMatcher::op, LabelMatcher::operand)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("class", LabelMatcher.Op.EQUAL, "sync"),
            org.assertj.core.groups.Tuple.tuple("service", LabelMatcher.Op.NOT_EQUAL, "x"),
            org.assertj.core.groups.Tuple.tuple("thread_group", LabelMatcher.Op.MATCHES, "http-.*"),
            org.assertj.core.groups.Tuple.tuple(
                "instance", LabelMatcher.Op.NOT_MATCHES, "canary-\\d+"));
    assertThat(e.comparison()).isEqualTo(Comparison.GREATER_OR_EQUAL);
    assertThat(e.threshold()).isEqualTo(0.25);
    // The canonical text parses back to an equal expression.
    assertThat(RuleExpression.parse(e.toString())).isEqualTo(e);
  }

  @Test
  void withoutMatchersAndWithEveryComparison() throws Exception {
    double[][] cases = {{0.1, 1, 0}, {0.2, 0, 0}, {0.3, 0, 1}};
    String[] ops = {">", ">=", "<", "<=", "==", "!="};
    boolean[][] expected = {
      {false, false, true, true, false, true}, // 0.1 vs 0.2
      {false, true, false, true, true, false}, // 0.2 vs 0.2
      {true, true, false, false, false, true} // 0.3 vs 0.2
    };
    for (int i = 0; i < cases.length; i++) {
      for (int j = 0; j < ops.length; j++) {
        RuleExpression e = RuleExpression.parse("x " + ops[j] + " 0.2");
        assertThat(e.matchers()).isEmpty();
        assertThat(e.holds(cases[i][0]))
            .as("%s %s 0.2", cases[i][0], ops[j])
            .isEqualTo(expected[i][j]);
      }
    }
    assertThat(RuleExpression.parse("x != 1").holds(Double.NaN)).isFalse();
    assertThat(RuleExpression.parse("x>-3").threshold()).isEqualTo(-3);
  }

  @Test
  void selectsByNameAndMatchersWithPromqlSemantics() throws Exception {
    RuleExpression e = RuleExpression.parse("r{service=\"checkout\", group=~\"http.*\"} > 0");
    assertThat(e.selects(v("r", 1, "service", "checkout", "group", "http-exec"))).isTrue();
    assertThat(e.selects(v("other", 1, "service", "checkout", "group", "http-exec"))).isFalse();
    assertThat(e.selects(v("r", 1, "service", "checkout", "group", "xhttp"))).isFalse();
    // Regexes are anchored: "http.*" does not match "my-http".
    assertThat(e.selects(v("r", 1, "service", "checkout", "group", "my-http"))).isFalse();
    // A missing label matches as the empty string.
    assertThat(RuleExpression.parse("r{tenant=\"\"} > 0").selects(v("r", 1))).isTrue();
    assertThat(RuleExpression.parse("r{tenant!=\"\"} > 0").selects(v("r", 1))).isFalse();
    assertThat(RuleExpression.parse("r{tenant!~\"a|b\"} > 0").selects(v("r", 1, "tenant", "a")))
        .isFalse();
    assertThat(RuleExpression.parse("r{tenant!~\"a|b\"} > 0").selects(v("r", 1, "tenant", "ab")))
        .isTrue();
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '`',
      value = {
        "``                              | 1  | the expression is empty",
        "Ratio > 1                       | 1  | names are lower case",
        "thread.ratio > 1                | 7  | '.' is not allowed in a name ([a-z_][a-z0-9_]*), after 'thread'",
        "r{class=\"sync\"}               | 16 | expected a comparison (>, >=, <, <=, ==, !=) and a number, found end of expression",
        "r > high                        | 5  | expected a number after the comparison",
        "r{class=sync} > 1               | 9  | expected a quoted value after class's operator",
        "r{class==\"sync\"} > 1          | 8  | a label matcher uses '=', not '=='",
        "r{class~\"x\"} > 1              | 8  | expected a matcher operator (=, !=, =~, !~) after label 'class', found '~\"x\"}'",
        "r{class=\"sync} > 1             | 9  | the quoted value is not closed",
        "r{class=\"a\" kind=\"b\"} > 1   | 13 | expected ',' or '}' after the matcher on 'class'",
        "r{class=~\"(a\"} > 1            | 10 | invalid regular expression for label 'class'",
        "r = 1                           | 3  | use '==' to compare for equality",
        "r > 20%                         | 7  | write shares as fractions: 0.2 rather than 20%",
        "r > 0.2 and s > 1               | 9  | unexpected 'and' after the number",
        "r > 1e999                       | 5  | the number is out of range",
        "r{1a=\"x\"} > 1                 | 3  | expected a label name ([a-z_][a-z0-9_]*) or '}', found '1a=\"x\"}'",
      })
  void refusesWithColumnAndHint(String text, int column, String message) {
    assertThatThrownBy(() -> RuleExpression.parse(text))
        .isInstanceOf(RuleException.class)
        .hasMessageContaining(message)
        .satisfies(e -> assertThat(((RuleException) e).column()).isEqualTo(column));
  }

  @Test
  void matchersAreComparedByDefinition() throws Exception {
    assertThat(RuleExpression.parse("r{a=\"1\"} > 0.2"))
        .isEqualTo(RuleExpression.parse("r { a = '1' } >0.20"))
        .isNotEqualTo(RuleExpression.parse("r{a=~\"1\"} > 0.2"));
    assertThat(List.of(RuleExpression.parse("r > 1").toString())).containsExactly("r > 1.0");
  }
}
