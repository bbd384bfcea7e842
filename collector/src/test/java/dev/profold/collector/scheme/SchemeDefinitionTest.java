package dev.profold.collector.scheme;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class SchemeDefinitionTest {
  static SchemeDefinition compile(String name, String query) throws SchemeException {
    return SchemeDefinition.compile(name, query, Duration.ofSeconds(10), 100, 10);
  }

  @Test
  void groupingAttributesBecomeLabelsWithDotsAsUnderscores() throws Exception {
    SchemeDefinition d =
        compile("threads", "SELECT sum(time) WHERE kind=sync GROUP BY service, thread.group");
    assertThat(d.groupBy()).containsExactly("service", "thread.group");
    assertThat(d.labelNames()).containsExactly("service", "thread_group");
    assertThat(d.whereAttributes()).containsExactly("kind");
    assertThat(d.perInstance()).isFalse();
    assertThat(compile("x", "SELECT sum(time) GROUP BY prop:nested").groupBy())
        .containsExactly("region");
    assertThat(compile("y", "SELECT service, count()").groupBy()).containsExactly("service");
    assertThat(SchemeDefinition.builtIn(Duration.ofSeconds(1), 5).perInstance()).isTrue();
  }

  @Test
  void refusesWhatCannotBecomeMetrics() {
    assertThatThrownBy(() -> compile("x", "SELECT count() GROUP BY a.b, a_b"))
        .hasMessage(
            "scheme 'x': GROUP BY attributes 'a.b' and 'a_b' both become label 'a_b'; group by"
                + " one of them");
    assertThatThrownBy(() -> compile("x", "SELECT count() GROUP BY le"))
        .hasMessageContaining("GROUP BY attribute 'le' cannot be a Prometheus label name");
    assertThatThrownBy(() -> compile("9x", "SELECT count()"))
        .hasMessageContaining("scheme name '9x' must be lower-case letters");
    assertThatThrownBy(() -> compile("source", "SELECT count()"))
        .hasMessageContaining("scheme 'source': the name is taken");
    assertThatThrownBy(() -> compile("x", "SELECT count( GROUP BY a"))
        .hasMessageStartingWith("scheme 'x': query at column ");
    assertThatThrownBy(
            () -> SchemeDefinition.compile("x", "SELECT count()", Duration.ofMillis(10), 1, 1))
        .hasMessageContaining("interval must be at least 100ms");
  }

  @Test
  void sameAsComparesTheDefinitionNotTheObject() throws Exception {
    SchemeDefinition a = compile("a", "SELECT sum(time) GROUP BY path");
    assertThat(a.sameAs(compile("a", "SELECT sum(time) GROUP BY path"))).isTrue();
    assertThat(a.sameAs(compile("a", "SELECT max(time) GROUP BY path"))).isFalse();
    assertThat(
            a.sameAs(
                SchemeDefinition.compile(
                    "a", "SELECT sum(time) GROUP BY path", Duration.ofSeconds(10), 100, 11)))
        .isFalse();
  }
}
