package dev.profold.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

class ProfoldConfigTest {
  private static ProfoldConfig env(Map<String, String> env) {
    return ProfoldConfig.fromEnvironment(env, new Properties());
  }

  @Test
  void defaults() {
    ProfoldConfig c = env(Map.of());
    assertThat(c.endpoint()).isEqualTo("127.0.0.1:7763");
    assertThat(c.service()).isEqualTo("unknown_service");
    assertThat(c.instance()).endsWith("-" + ProcessHandle.current().pid());
    assertThat(c.interval()).isEqualTo(Duration.ofSeconds(10));
    assertThat(c.threadAggregation()).isEqualTo(ThreadAggregation.SUM);
    assertThat(c.enabled()).isTrue();
    assertThat(c.labels()).isEmpty();
    assertThat(c.maxBackoff()).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void aNegativeLimitBeyondAnIntIsRefusedAsWritten() {
    // Before: cast to an int first, -4294967232 read as 64 and was taken.
    assertThatThrownBy(() -> env(Map.of("PROFOLD_MAX_CONTEXTS", "-4294967232")))
        .hasMessage(
            "PROFOLD_MAX_CONTEXTS: '-4294967232' is out of range: it must not be" + " negative");
    assertThatThrownBy(() -> env(Map.of("PROFOLD_MAX_CONTEXTS", "-5")))
        .hasMessageContaining("'-5' is refused")
        .hasMessageContaining("be at least 64");
  }

  @Test
  void theLongestWaitBetweenAttemptsIsASetting() {
    assertThat(env(Map.of("PROFOLD_MAX_BACKOFF", "5s")).maxBackoff())
        .isEqualTo(Duration.ofSeconds(5));
    assertThat(env(Map.of("PROFOLD_MAX_BACKOFF", "500ms")).maxBackoff())
        .isEqualTo(ProfoldConfig.MIN_BACKOFF);
    assertThatThrownBy(() -> env(Map.of("PROFOLD_MAX_BACKOFF", "100ms")))
        .hasMessage(
            "PROFOLD_MAX_BACKOFF: '100ms' is refused: it must be from 500ms to 1h (the wait after"
                + " the first failed attempt is 500ms)");
    assertThatThrownBy(() -> env(Map.of("PROFOLD_MAX_BACKOFF", "2h")))
        .hasMessage(
            "PROFOLD_MAX_BACKOFF: '2h' is refused: it must be from 500ms to 1h (the wait after the"
                + " first failed attempt is 500ms)");
    assertThatThrownBy(() -> ProfoldConfig.builder().maxBackoff(Duration.ofMillis(100)))
        .hasMessage(
            "maxBackoff: must be from 500ms to 1h (the wait after the first failed attempt is"
                + " 500ms), was 100ms");
    assertThatThrownBy(() -> ProfoldConfig.builder().maxBackoff(Duration.ofMinutes(61)))
        .hasMessageContaining("must be from 500ms to 1h");
  }

  @Test
  void environmentAndPropertiesOverrideWithPropertiesWinning() {
    Properties p = new Properties();
    p.setProperty("profold.service", "from-property");
    ProfoldConfig c =
        ProfoldConfig.fromEnvironment(
            Map.of(
                "PROFOLD_ENDPOINT", "collector:9000",
                "PROFOLD_SERVICE", "from-env",
                "PROFOLD_INSTANCE", "pod-7",
                "PROFOLD_INTERVAL", "500ms",
                "PROFOLD_THREAD_AGGREGATION", "calltree",
                "PROFOLD_LABELS", "region=eu-west, zone=b",
                "PROFOLD_ENABLED", "false"),
            p);
    assertThat(c.endpoint()).isEqualTo("collector:9000");
    assertThat(c.service()).isEqualTo("from-property");
    assertThat(c.instance()).isEqualTo("pod-7");
    assertThat(c.interval()).isEqualTo(Duration.ofMillis(500));
    assertThat(c.threadAggregation()).isEqualTo(ThreadAggregation.CALLTREE);
    assertThat(c.labels()).containsEntry("region", "eu-west").containsEntry("zone", "b");
    assertThat(c.enabled()).isFalse();
  }

  @Test
  void threadAggregationCanBeSetPerThreadGroup() {
    ProfoldConfig c =
        env(Map.of("PROFOLD_THREAD_AGGREGATION_GROUPS", "http-exec-*=key, worker-*=CALLTREE"));
    assertThat(c.threadAggregationByGroup())
        .containsEntry("http-exec-*", ThreadAggregation.KEY)
        .containsEntry("worker-*", ThreadAggregation.CALLTREE)
        .hasSize(2);
    assertThatThrownBy(() -> env(Map.of("PROFOLD_THREAD_AGGREGATION_GROUPS", "http-exec-*=ALL")))
        .hasMessage(
            "PROFOLD_THREAD_AGGREGATION_GROUPS: 'ALL' is not one of NONE, SUM, SET, KEY, CALLTREE");
    assertThatThrownBy(() -> env(Map.of("PROFOLD_THREAD_AGGREGATION_GROUPS", "KEY")))
        .hasMessageContaining("is not group=MODE");
  }

  /** A group given with digits names the group its threads are in, not a group nobody is in. */
  @Test
  void aThreadGroupGivenWithDigitsIsNormalisedLikeThreadNames() {
    ProfoldConfig c =
        env(Map.of("PROFOLD_THREAD_AGGREGATION_GROUPS", "http-exec-1=KEY,pool-2-thread-*=SET"));
    assertThat(c.threadAggregationByGroup())
        .containsEntry("http-exec-*", ThreadAggregation.KEY)
        .containsEntry("pool-*-thread-*", ThreadAggregation.SET)
        .hasSize(2);
    assertThat(
            ProfoldConfig.builder()
                .threadAggregation("w-1", ThreadAggregation.KEY)
                .threadAggregation("w-*", ThreadAggregation.KEY)
                .build()
                .threadAggregationByGroup())
        .containsExactlyEntriesOf(Map.of("w-*", ThreadAggregation.KEY));
    assertThatThrownBy(() -> env(Map.of("PROFOLD_THREAD_AGGREGATION_GROUPS", "w-1=KEY,w-2=SET")))
        .hasMessageContaining(
            "thread group 'w-*' (from 'w-2'; runs of digits in a group name stand for *) is given"
                + " SET but was given KEY already");
  }

  @Test
  void badSettingsNameTheVariableAndWhatIsExpected() {
    assertThatThrownBy(() -> env(Map.of("PROFOLD_INTERVAL", "10")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("PROFOLD_INTERVAL: '10' is not a duration such as 500ms, 10s, 5m or 1h");
    assertThatThrownBy(() -> env(Map.of("PROFOLD_THREAD_AGGREGATION", "ALL")))
        .hasMessage(
            "PROFOLD_THREAD_AGGREGATION: 'ALL' is not one of NONE, SUM, SET, KEY, CALLTREE");
    assertThatThrownBy(() -> env(Map.of("PROFOLD_ENDPOINT", "nohostport")))
        .hasMessageStartingWith("PROFOLD_ENDPOINT: 'nohostport' is refused: it must be host:port");
    assertThatThrownBy(() -> env(Map.of("PROFOLD_LABELS", "novalue")))
        .hasMessageContaining("PROFOLD_LABELS: 'novalue' is not key=value");
    assertThatThrownBy(() -> env(Map.of("PROFOLD_ENABLED", "yes")))
        .hasMessage("PROFOLD_ENABLED: 'yes' is not true or false");
    assertThatThrownBy(() -> ProfoldConfig.builder().interval(Duration.ofMillis(10)))
        .hasMessageContaining("interval: must be at least 100ms");
    // Numbers a Duration or its milliseconds cannot hold are bad settings too, not arithmetic
    // errors escaping Profold.start into the application.
    assertThatThrownBy(() -> env(Map.of("PROFOLD_INTERVAL", "9999999999999999s")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "PROFOLD_INTERVAL: '9999999999999999s' is out of range; give a duration such as 500ms,"
                + " 10s, 5m or 1h");
    // The runtime schedules in nanoseconds: an interval they cannot hold is out of range too, not
    // an ArithmeticException from Profold.start after the runtime's threads were started.
    assertThatThrownBy(() -> env(Map.of("PROFOLD_INTERVAL", "999999999m")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "PROFOLD_INTERVAL: '999999999m' is out of range; give a duration such as 500ms,"
                + " 10s, 5m or 1h");
    assertThatThrownBy(() -> ProfoldConfig.builder().interval(Duration.ofDays(365L * 300)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("interval: must be at most");
    assertThatThrownBy(() -> ProfoldConfig.builder().interval(Duration.ofSeconds(Long.MAX_VALUE)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("interval: must be at most");
    assertThatThrownBy(() -> env(Map.of("PROFOLD_MAX_CONTEXTS", "lots")))
        .hasMessage("PROFOLD_MAX_CONTEXTS: 'lots' is not a whole number (digits only)");
    assertThatThrownBy(() -> env(Map.of("PROFOLD_MAX_CONTEXTS", "10")))
        .hasMessage("PROFOLD_MAX_CONTEXTS: '10' is refused: it must be at least 64");
    assertThatThrownBy(() -> ProfoldConfig.builder().maxContexts(10))
        .hasMessage("maxContexts: must be at least 64, was 10");
    assertThatThrownBy(() -> env(Map.of("PROFOLD_MAX_CONTEXTS", "3000000000")))
        .hasMessage("PROFOLD_MAX_CONTEXTS: '3000000000' is out of range: at most 2147483647");
    assertThat(env(Map.of("PROFOLD_MAX_CONTEXTS", " 2000 ")).maxContexts()).isEqualTo(2000);
    assertThat(env(Map.of()).maxContexts()).isEqualTo(16_384);
    assertThat(env(Map.of()).maxMessageBytes()).isEqualTo(16L << 20);
    assertThat(env(Map.of("PROFOLD_MAX_MESSAGE_BYTES", "4194304")).maxMessageBytes())
        .isEqualTo(4L << 20);
    assertThatThrownBy(() -> env(Map.of("PROFOLD_MAX_MESSAGE_BYTES", "1000")))
        .hasMessage(
            "PROFOLD_MAX_MESSAGE_BYTES: '1000' is refused: it must be at least 65536 (bytes; set it"
                + " to the collector's limits.max_message_bytes)");
    // Written as the collector's file writes it, which the docs say to copy: before, "16MiB"
    // turned profiling off.
    assertThat(env(Map.of("PROFOLD_MAX_MESSAGE_BYTES", "16MiB")).maxMessageBytes())
        .isEqualTo(16L << 20);
    assertThat(env(Map.of("PROFOLD_MAX_BUFFER_BYTES", " 512KiB ")).maxBufferBytes())
        .isEqualTo(512L << 10);
    assertThat(env(Map.of("PROFOLD_MAX_MESSAGE_BYTES", "1GiB")).maxMessageBytes())
        .isEqualTo(1L << 30);
    assertThatThrownBy(() -> env(Map.of("PROFOLD_MAX_MESSAGE_BYTES", "16MB")))
        .hasMessage(
            "PROFOLD_MAX_MESSAGE_BYTES: '16MB' is not a byte size: a whole number of bytes, or"
                + " one with KiB, MiB or GiB (16MiB)");
    assertThatThrownBy(() -> env(Map.of("PROFOLD_MAX_BUFFER_BYTES", "99999999999GiB")))
        .hasMessageContaining("is out of range");
    assertThatThrownBy(() -> env(Map.of("PROFOLD_INTERVAL", "99999999999999999999ms")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("is out of range");
  }

  @Test
  void aBadSettingNamesWhereItCameFromInTheFormItIsWritten() {
    assertThatThrownBy(() -> env(Map.of("PROFOLD_INTERVAL", "50ms")))
        .hasMessage("PROFOLD_INTERVAL: '50ms' is refused: it must be at least 100ms");
    assertThatThrownBy(() -> ProfoldConfig.builder().interval(Duration.ofMillis(50)))
        .hasMessage("interval: must be at least 100ms, was 50ms");
    Properties props = new Properties();
    props.setProperty("profold.interval", "10");
    assertThatThrownBy(
            () -> ProfoldConfig.fromEnvironment(Map.of("PROFOLD_INTERVAL", "10s"), props))
        .as("the property wins, so it is the property that is named")
        .hasMessage("profold.interval: '10' is not a duration such as 500ms, 10s, 5m or 1h");
    assertThatThrownBy(() -> env(Map.of("PROFOLD_LABELS", "zone=b,k-1=v")))
        .hasMessage(
            "PROFOLD_LABELS: 'zone=b,k-1=v' is refused: it must have a label name matching"
                + " [a-zA-Z_][a-zA-Z0-9_]*, was 'k-1'");
    assertThatThrownBy(() -> env(Map.of("PROFOLD_SERVICE", "  ")))
        .hasMessage(
            "PROFOLD_SERVICE: '  ' is refused: it must be 1..128 characters, not all blank");
  }

  @Test
  void labelsStayWithinTheCollectorsLimits() {
    assertThat(ProfoldConfig.builder().label("zone", "v".repeat(256)).build().labels())
        .containsEntry("zone", "v".repeat(256));
    assertThatThrownBy(() -> ProfoldConfig.builder().label("zone", "v".repeat(257)))
        .hasMessageContaining("have a value of at most 256 characters, was 257 for 'zone'");
    assertThatThrownBy(() -> ProfoldConfig.builder().label("k".repeat(129), "v"))
        .hasMessageContaining("have a label name of at most 128 characters, was 129 characters");
  }

  @Test
  void durationsTakeHoursAndValuesAreTrimmed() {
    assertThat(env(Map.of("PROFOLD_MAX_BACKOFF", "1h")).maxBackoff())
        .isEqualTo(Duration.ofHours(1));
    assertThat(env(Map.of("PROFOLD_INTERVAL", " 1m ")).interval()).isEqualTo(Duration.ofMinutes(1));
    ProfoldConfig c =
        env(
            Map.of(
                "PROFOLD_SERVICE", " checkout ",
                "PROFOLD_INSTANCE", " i-1\t",
                "PROFOLD_ENDPOINT", "collector:7763 "));
    assertThat(c.service()).isEqualTo("checkout");
    assertThat(c.instance()).isEqualTo("i-1");
    assertThat(c.endpoint()).isEqualTo("collector:7763");
  }

  @Test
  void anEndpointIsHostAndPortWithoutScheme() {
    for (String ok :
        List.of(
            "127.0.0.1:7763",
            "collector:1",
            "[::1]:7763",
            "a.b-c:65535",
            "collector.monitoring.svc.cluster.local.:7763",
            "dns:///collector:7763",
            "dns:///[::1]:7763",
            "Collector:7763")) {
      assertThat(ProfoldConfig.builder().endpoint(ok).build().endpoint()).isEqualTo(ok);
    }
    assertThatThrownBy(() -> env(Map.of("PROFOLD_ENDPOINT", "http://collector:7763")))
        .hasMessage(
            "PROFOLD_ENDPOINT: 'http://collector:7763' is refused: it must be host:port without a"
                + " scheme (e.g. collector:7763, not http://collector:7763)");
    for (String bad :
        List.of(
            "dns://8.8.8.8/collector:7763",
            "a b:7763",
            "collector:+7763",
            "collector:0",
            "collector:65536",
            "collector:99999999999",
            "::1:7763",
            ":7763",
            "collector:",
            "-collector:7763",
            "a..b:7763")) { // before: taken, then refused by gRPC as the runtime started
      assertThatThrownBy(() -> ProfoldConfig.builder().endpoint(bad))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("endpoint: must be host:port");
    }
    assertThatThrownBy(() -> ProfoldConfig.builder().endpoint("profold_collector:7763"))
        .hasMessageStartingWith("endpoint: must have a host name without '_', which gRPC refuses");
  }

  @Test
  void notStartedIsANoOpAndADisabledConfigDoesNotStart() {
    assertThat(Profold.isStarted()).isFalse();
    try (Region r = Profold.region("x", Kind.COMPUTE);
        Scope s = Profold.with("k", 1L)) {
      Profold.record("m", 1.0);
      Profold.measure("m", "bytes").record(2.0);
    }
    assertThat(Profold.flush(Duration.ofMillis(10))).isFalse();
    assertThat(Profold.start(ProfoldConfig.builder().enabled(false).build())).isFalse();
    assertThat(Profold.isStarted()).isFalse();
  }

  @Test
  void theOperatorsSwitchTurnsOffAConfigurationBuiltInCodeUnlessTheCodeSetsEnabled() {
    String was = System.getProperty("profold.enabled");
    try {
      System.setProperty("profold.enabled", " FALSE ");
      ProfoldConfig coded = ProfoldConfig.builder().service("checkout").build();
      assertThat(coded.enabled()).isFalse();
      assertThat(coded.disabledBy()).isEqualTo("profold.enabled=false");
      assertThat(Profold.start(coded)).isFalse();
      assertThat(Profold.isStarted()).isFalse();
      assertThat(ProfoldConfig.builder().enabled(true).build().enabled())
          .as("the code's own choice")
          .isTrue();
      assertThat(ProfoldConfig.fromEnvironment(Map.of(), new Properties()).enabled())
          .as("the settings given, not this process's")
          .isTrue();

      System.setProperty("profold.enabled", "ja");
      assertThat(ProfoldConfig.builder().build().disabledBy())
          .isEqualTo("profold.enabled: 'ja' is not true or false, so Profold stays off");
      System.setProperty("profold.enabled", "true");
      assertThat(ProfoldConfig.builder().build().enabled()).isTrue();
    } finally {
      if (was == null) {
        System.clearProperty("profold.enabled");
      } else {
        System.setProperty("profold.enabled", was);
      }
    }
    assertThat(
            ProfoldConfig.fromEnvironment(Map.of("PROFOLD_ENABLED", "False"), new Properties())
                .disabledBy())
        .as("what the start logs")
        .isEqualTo("PROFOLD_ENABLED=false");
    assertThat(ProfoldConfig.switchedOffBy(Map.of("PROFOLD_ENABLED", "false")::get, k -> null))
        .isEqualTo("PROFOLD_ENABLED=false");
    assertThat(ProfoldConfig.switchedOffBy(k -> null, k -> null)).isNull();
    assertThat(
            ProfoldConfig.switchedOffBy(
                k -> {
                  throw new SecurityException("no");
                },
                k -> null))
        .as("unreadable: the configuration given stands")
        .isNull();
  }

  @Test
  void aDefaultInstanceIsMadeEvenWhereTheHostOrThePidCannotBeRead() {
    // A security manager refusing the environment or the process handle: build() threw into the
    // application's own code.
    assertThat(ProfoldConfig.defaultInstance(() -> "web-1", () -> 42)).isEqualTo("web-1-42");
    assertThat(
            ProfoldConfig.defaultInstance(
                () -> {
                  throw new SecurityException("getenv.*");
                },
                () -> 42))
        .isEqualTo("localhost-42");
    assertThat(
            ProfoldConfig.defaultInstance(
                () -> "web-1",
                () -> {
                  throw new SecurityException("manageProcess");
                }))
        .matches("web-1-r[0-9a-f]+");
  }
}
