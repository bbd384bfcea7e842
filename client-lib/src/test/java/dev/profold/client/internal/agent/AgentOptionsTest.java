package dev.profold.client.internal.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.client.ThreadAggregation;
import dev.profold.client.internal.jfr.JfrSettings;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class AgentOptionsTest {
  @Test
  void withNothingSetEverythingHasItsDefault() {
    AgentOptions o = AgentOptions.parse(null, Map.of(), new Properties());
    assertThat(o.jfr()).isEqualTo(JfrSettings.defaults());
    assertThat(o.jfrEnabled()).isTrue();
    assertThat(o.timeThreadStarts()).isTrue();
    assertThat(o.config().endpoint()).isEqualTo("127.0.0.1:7763");
    assertThat(o.config().interval()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void agentOptionsWinOverSystemPropertiesWhichWinOverTheEnvironment() {
    Properties props = new Properties();
    props.setProperty("profold.service", "from-property");
    props.setProperty("profold.jfr.depth", "32");
    Map<String, String> env =
        Map.of(
            "PROFOLD_SERVICE", "from-env",
            "PROFOLD_INTERVAL", "5s",
            "PROFOLD_JFR_DEPTH", "16",
            "PROFOLD_JFR_THRESHOLD_IO", "2ms",
            "PROFOLD_JFR_ALLOCATION", "false",
            "PROFOLD_JFR_IO", "false",
            "PROFOLD_JFR_THREADS_TIMING", "false");
    AgentOptions o =
        AgentOptions.parse(
            "service=from-agent,endpoint=collector:7000,sample.period=5ms,threshold.lock=500us",
            env,
            props);
    assertThat(o.config().service()).isEqualTo("from-agent");
    assertThat(o.config().endpoint()).isEqualTo("collector:7000");
    assertThat(o.config().interval()).isEqualTo(Duration.ofSeconds(5));
    assertThat(o.jfr().maxDepth()).isEqualTo(32);
    assertThat(o.jfr().samplePeriod()).isEqualTo(Duration.ofMillis(5));
    assertThat(o.jfr().lockThreshold()).isEqualTo(Duration.ofNanos(500_000));
    assertThat(o.jfr().ioThreshold()).isEqualTo(Duration.ofMillis(2));
    assertThat(o.jfr().allocation()).isFalse();
    assertThat(o.jfr().io()).isFalse();
    assertThat(o.jfr().ioQuiet()).isEqualTo(Duration.ofSeconds(30));
    assertThat(AgentOptions.parse("io.quiet=0", Map.of(), props).jfr().ioQuiet()).isZero();
    assertThat(
            AgentOptions.parse("io.quiet=10s", Map.of("PROFOLD_JFR_IO_QUIET", "5s"), props)
                .jfr()
                .ioQuiet())
        .isEqualTo(Duration.ofSeconds(10));
    assertThat(o.jfr().threads()).isTrue();
    assertThat(o.timeThreadStarts()).isFalse();
    assertThat(AgentOptions.parse("threads.timing=false", Map.of(), props).timeThreadStarts())
        .isFalse();
    assertThat(props.getProperty("profold.service"))
        .as("the caller's properties are not changed")
        .isEqualTo("from-property");
  }

  /** A thread group named like an option ({@code io}) is told apart by its value, a mode. */
  @Test
  void aGroupNamedLikeAnOptionStaysInTheGroups() {
    AgentOptions o =
        AgentOptions.parse(
            "aggregation.groups=worker-*=KEY,io=SUM,cpu=set,io=false,service=set",
            Map.of(),
            new Properties());
    assertThat(o.config().threadAggregationByGroup())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "worker-*", ThreadAggregation.KEY,
                "io", ThreadAggregation.SUM,
                "cpu", ThreadAggregation.SET));
    assertThat(o.jfr().io()).as("io=false is the option").isFalse();
    assertThat(o.config().service()).as("an option of the client stays one").isEqualTo("set");
  }

  @Test
  void listValuedOptionsKeepTheirCommas() {
    AgentOptions o =
        AgentOptions.parse(
            "labels=region=eu,zone=b,aggregation.groups=http-*=KEY,worker-*=SET,jfr=false",
            Map.of(),
            new Properties());
    assertThat(o.config().labels())
        .containsExactlyInAnyOrderEntriesOf(Map.of("region", "eu", "zone", "b"));
    assertThat(o.config().threadAggregationByGroup())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("http-*", ThreadAggregation.KEY, "worker-*", ThreadAggregation.SET));
    assertThat(o.jfrEnabled()).isFalse();
    assertThat(
            AgentOptions.parse("max.contexts=5000", Map.of(), new Properties())
                .config()
                .maxContexts())
        .isEqualTo(5000);
    assertThat(
            AgentOptions.parse("max.backoff=2s", Map.of(), new Properties()).config().maxBackoff())
        .isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void badOptionsAreRefusedNamingWhatIsWrong() {
    Properties p = new Properties();
    assertThatThrownBy(() -> AgentOptions.parse("servce=x", Map.of(), p))
        .hasMessageContaining("'servce' is unknown");
    assertThatThrownBy(() -> AgentOptions.parse("depth", Map.of(), p))
        .hasMessageContaining("needs a value");
    assertThatThrownBy(() -> AgentOptions.parse("sample.period=20", Map.of(), p))
        .hasMessageContaining("sample.period")
        .hasMessageContaining("'20'");
    // Too large for JFR's nanoseconds: refused naming the option, not wrapped around or thrown
    // as an ArithmeticException (before the fix: 99999999999999999us became a negative duration).
    for (String tooLarge :
        new String[] {
          "threshold.io=99999999999999999us",
          "sample.period=99999999999999999999ms",
          "threshold.lock=9999999999999999s"
        }) {
      String option = tooLarge.substring(0, tooLarge.indexOf('='));
      assertThatThrownBy(() -> AgentOptions.parse(tooLarge, Map.of(), p))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(option)
          .hasMessageContaining("out of range");
    }
    // The option and its property, or the environment variable, as the user gave it (before:
    // "depth: 1..2048 frames, was 0", which named neither).
    assertThatThrownBy(() -> AgentOptions.parse("depth=0", Map.of(), p))
        .hasMessage("depth (profold.jfr.depth): '0' is refused: 1..2048 frames, was 0");
    assertThatThrownBy(() -> AgentOptions.parse("", Map.of("PROFOLD_JFR_DEPTH", "4096"), p))
        .hasMessage("PROFOLD_JFR_DEPTH: '4096' is refused: 1..2048 frames, was 4096");
    assertThatThrownBy(() -> AgentOptions.parse("io.quiet=2s", Map.of(), p))
        .hasMessageContaining("io.quiet")
        .hasMessageContaining("at least 5s")
        .hasMessageEndingWith("was 2s");
    assertThatThrownBy(() -> AgentOptions.parse("sample.period=500us", Map.of(), p))
        .hasMessage(
            "sample.period (profold.jfr.sample.period): '500us' is refused: at least 1ms, was"
                + " 500us"); // was PT0.0005S
    assertThatThrownBy(() -> AgentOptions.parse("cpu=yes", Map.of(), p))
        .hasMessageContaining("not true or false");
    assertThatThrownBy(() -> AgentOptions.parse("interval=10", Map.of(), p))
        .hasMessage(
            "interval (profold.interval): '10' is not a duration such as 500ms, 10s, 5m or 1h");
    assertThatThrownBy(() -> AgentOptions.parse("endpoint=http://c:7763", Map.of(), p))
        .hasMessageStartingWith(
            "endpoint (profold.endpoint): 'http://c:7763' is refused: it must be host:port"
                + " without a scheme");
    assertThatThrownBy(
            () -> AgentOptions.parse(null, Map.of("PROFOLD_SERVICE", " "), new Properties()))
        .as("from the environment, the variable is named")
        .hasMessageStartingWith("PROFOLD_SERVICE: ' ' is refused");
  }

  @Test
  void durationsTakeMinutesAndHoursAsTheClientLibrarysDo() {
    AgentOptions o =
        AgentOptions.parse("io.quiet=5m,threshold.io=0,max.backoff=1h", Map.of(), new Properties());
    assertThat(o.jfr().ioQuiet()).isEqualTo(Duration.ofMinutes(5));
    assertThat(o.jfr().ioThreshold()).isEqualTo(Duration.ZERO);
    assertThat(o.config().maxBackoff()).isEqualTo(Duration.ofHours(1));
  }

  @Test
  void startingWithBadOptionsOrDisabledDoesNotThrowAndStartsNothing() {
    assertThat(ProfoldAgent.start("servce=x")).isNull();
    assertThat(ProfoldAgent.start("enabled=false")).isNull();
    assertThat(dev.profold.client.Profold.isStarted()).isFalse();
  }
}
