package dev.profold.collector.query.online;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import org.junit.jupiter.api.Test;

class TimeArgumentTest {
  private static final long S = 1_000_000_000L;
  private static final Instant NOW = Instant.parse("2024-05-01T12:00:00.250Z");
  private static final long NOW_NANOS = NOW.getEpochSecond() * S + 250_000_000L;
  private static final InstantSource CLOCK = InstantSource.fixed(NOW);

  private static long time(String text) {
    return TimeArgument.parseTime(text, CLOCK);
  }

  @Test
  void nowAndRelativeTimesCountFromTheClock() {
    assertThat(time("now")).isEqualTo(NOW_NANOS);
    assertThat(time("NOW")).isEqualTo(NOW_NANOS);
    assertThat(time("-15m")).isEqualTo(NOW_NANOS - 15 * 60 * S);
    assertThat(time("-1h")).isEqualTo(NOW_NANOS - 3600 * S);
    assertThat(time("-1h30m")).isEqualTo(NOW_NANOS - 5400 * S);
    assertThat(time("now-10s")).isEqualTo(NOW_NANOS - 10 * S);
    assertThat(time("-500ms")).isEqualTo(NOW_NANOS - 500_000_000L);
    assertThat(time("-2d")).isEqualTo(NOW_NANOS - 2 * 86_400 * S);
  }

  @Test
  void rfc3339TimesWithAnyOffsetAndFraction() {
    long noon = Instant.parse("2024-05-01T12:00:00Z").getEpochSecond() * S;
    assertThat(time("2024-05-01T12:00:00Z")).isEqualTo(noon);
    assertThat(time("2024-05-01t12:00:00z")).isEqualTo(noon);
    assertThat(time("2024-05-01 12:00:00Z")).isEqualTo(noon);
    assertThat(time("2024-05-01T14:00:00+02:00")).isEqualTo(noon);
    assertThat(time("2024-05-01T12:00:00.000000123Z")).isEqualTo(noon + 123);
  }

  @Test
  void anIntegerIsUnixNanoseconds() {
    assertThat(time("1714564800000000000")).isEqualTo(1_714_564_800_000_000_000L);
    assertThat(time("0")).isZero();
  }

  @Test
  void unixSecondsOrMillisecondsAreRefusedWithTheFix() {
    // 1714564800 (seconds) read as nanoseconds meant 1970: the whole retention, with only a
    // note that the range reaches back.
    assertThatThrownBy(() -> time("1714564800"))
        .hasMessage(
            "'1714564800' would be unix nanoseconds in January 1970; for seconds write the"
                + " nanoseconds (1714564800000000000) or an RFC 3339 time (2024-05-01T12:00:00Z)");
    assertThatThrownBy(() -> time("1714564800000"))
        .hasMessageContaining("for milliseconds write the nanoseconds (1714564800000000000)");
  }

  @Test
  void anythingElseIsRefusedNamingTheForms() {
    for (String bad :
        new String[] {
          "yesterday", "-15", "15m", "2024-05-01T12:00:00", "-1x", "", "99999999999999999999"
        }) {
      assertThatThrownBy(() -> time(bad)).as(bad).isInstanceOf(IllegalArgumentException.class);
    }
    assertThatThrownBy(() -> time("yesterday"))
        .hasMessage(
            "'yesterday' is not a time: use an RFC 3339 time (2024-05-01T12:00:00Z), now, a time"
                + " relative to now (-15m, -1h30m) or unix nanoseconds");
    assertThatThrownBy(() -> time("2300-01-01T00:00:00Z")).hasMessageContaining("years 1677..2262");
    assertThatThrownBy(() -> time("-400000d")).hasMessageContaining("too long a duration");
  }

  @Test
  void durations() {
    assertThat(TimeArgument.parseDuration("10s")).isEqualTo(Duration.ofSeconds(10));
    assertThat(TimeArgument.parseDuration("250ms")).isEqualTo(Duration.ofMillis(250));
    assertThat(TimeArgument.parseDuration("1m30s")).isEqualTo(Duration.ofSeconds(90));
    assertThat(TimeArgument.parseDuration("7us")).isEqualTo(Duration.ofNanos(7000));
    assertThatThrownBy(() -> TimeArgument.parseDuration("10"))
        .hasMessage("'10' is not a duration: use e.g. 10s, 500ms, 2m, 1h30m");
    assertThatThrownBy(() -> TimeArgument.parseDuration("s"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
