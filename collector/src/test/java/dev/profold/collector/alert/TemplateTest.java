package dev.profold.collector.alert;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TemplateTest {
  private static final Template.Data DATA =
      new Template.Data(
          0.23456,
          Map.of("service", "checkout", "thread_group", "http-exec", "cores", "2500000"),
          Map.of("top_paths", "handle/cart.lock (61%), handle/db.pool (20%)", "seconds", "95"));

  private static String render(String template) throws RuleException {
    return Template.parse(template).render(DATA);
  }

  @Test
  void rendersVariablesAndText() throws Exception {
    assertThat(
            render(
                "{{ $labels.service }}/{{$labels.thread_group}} spends {{ $value | percent }} of"
                    + " thread time in SYNC; top: {{ $context.top_paths }}"))
        .isEqualTo(
            "checkout/http-exec spends 23.5% of thread time in SYNC; top: handle/cart.lock"
                + " (61%), handle/db.pool (20%)");
    assertThat(render("value {{ $value }}")).isEqualTo("value 0.23456");
    assertThat(render("no actions, a single } and { are text"))
        .isEqualTo("no actions, a single } and { are text");
    assertThat(render("")).isEmpty();
  }

  @Test
  void aValueBeyondADoubleRendersAsItsTextThroughEveryFunction() throws Exception {
    // Before: humanize and percent of +Inf threw, and the whole evaluation stopped at that rule.
    for (double v : new double[] {Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, Double.NaN}) {
      Template.Data data = new Template.Data(v, Map.of(), Map.of());
      String text = Template.plain(v);
      assertThat(Template.parse("{{ $value | humanize }}").render(data)).isEqualTo(text);
      assertThat(Template.parse("{{ $value | percent }}").render(data)).isEqualTo(text);
      assertThat(Template.parse("{{ $value | duration }}").render(data)).isEqualTo(text);
    }
    assertThat(Template.plain(Double.POSITIVE_INFINITY)).isEqualTo("+Inf");
    assertThat(Template.percent(1e307)).isEqualTo("+Inf%");
    assertThat(
            Template.parse("{{ $value | humanize }}")
                .render(new Template.Data(1e306, Map.of(), Map.of())))
        .endsWith("E");
  }

  @Test
  void missingLabelsAndContextRenderEmpty() throws Exception {
    assertThat(render("[{{ $labels.tenant }}][{{ $context.nothing | percent }}]"))
        .isEqualTo("[][]");
  }

  @Test
  void functionsFormatNumbersAndLeaveTextAlone() throws Exception {
    assertThat(render("{{ $labels.cores | humanize }}")).isEqualTo("2.5M");
    assertThat(render("{{ $context.seconds | duration }}")).isEqualTo("1m 35s");
    assertThat(render("{{ $labels.service | percent | humanize }}")).isEqualTo("checkout");
    assertThat(render("{{ $value | humanize }}")).isEqualTo("234.6m");
  }

  @ParameterizedTest
  @CsvSource({
    "0, 0%",
    "0.2, 20%",
    "0.07, 7%",
    "0.23456, 23.5%",
    "1.5, 150%",
    "-0.1, -10%",
  })
  void percent(double v, String expected) {
    assertThat(Template.percent(v)).isEqualTo(expected);
  }

  @ParameterizedTest
  @CsvSource({
    "0, 0",
    "1, 1",
    "999, 999",
    "1234567, 1.235M",
    "1000, 1k",
    "0.0123, 12.3m",
    "0.000002, 2µ",
    "-1500, -1.5k",
  })
  void humanize(double v, String expected) {
    assertThat(Template.humanize(v)).isEqualTo(expected);
  }

  @ParameterizedTest
  @CsvSource({
    "0, 0s",
    "0.25, 250ms",
    "0.0000015, 1.5µs",
    "4.5, 4.5s",
    "90, 1m 30s",
    "7205, 2h 0m 5s",
    "97200, 1d 3h 0m 0s",
  })
  void duration(double v, String expected) {
    assertThat(Template.duration(v)).isEqualTo(expected);
  }

  @ParameterizedTest
  @CsvSource(
      delimiterString = " ~ ",
      quoteCharacter = '`',
      value = {
        "summary {{ $value ~ 9 ~ '{{' is not closed with '}}'",
        "{{ }} ~ 4 ~ empty action",
        "{{ $val }} ~ 4 ~ unknown variable '$val'; variables: $value, $labels.NAME, $context.KEY",
        "{{ .Labels.service }} ~ 4 ~ unknown variable '.Labels.service'",
        "x {{ $labels }} ~ 6 ~ name the entry: $labels.NAME",
        "{{ $labels.a-b }} ~ 12 ~ 'a-b' is not a label name",
        "{{ $value | percentage }} ~ 13 ~ unknown function 'percentage'; functions: duration, humanize, percent",
        "{{ $value | }} ~ 13 ~ missing function name after '|'",
        "ok {{ $value | percent | hum }} ~ 26 ~ unknown function 'hum'",
      })
  void refusesWithColumn(String text, int column, String message) {
    assertThatThrownBy(() -> Template.parse(text))
        .isInstanceOf(RuleException.class)
        .hasMessageContaining(message)
        .satisfies(e -> assertThat(((RuleException) e).column()).isEqualTo(column));
  }

  @Test
  void valuesBeyondTheDoubleRangeAreSpelledAsPrometheusDoes() {
    assertThat(Template.plain(Double.POSITIVE_INFINITY)).isEqualTo("+Inf");
    assertThat(Template.plain(Double.NEGATIVE_INFINITY)).isEqualTo("-Inf");
    assertThat(Template.plain(Double.NaN)).isEqualTo("NaN");
    assertThat(Template.plain(2.0)).isEqualTo("2");
  }

  @Test
  void equalBySource() throws Exception {
    assertThat(Template.parse("{{ $value }}")).isEqualTo(Template.parse("{{ $value }}"));
    assertThat(Template.parse("{{ $value }}")).isNotEqualTo(Template.parse("{{$value}}"));
  }
}
