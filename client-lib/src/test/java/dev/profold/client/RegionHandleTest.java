package dev.profold.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.internal.record.Recorder;
import dev.profold.client.internal.threads.Cell;
import dev.profold.client.internal.threads.ThreadSnapshot;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class RegionHandleTest {
  private static final RegionHandle QUERY = Profold.regionHandle("db.query", Kind.IO);

  @AfterEach
  void stop() {
    Profold.shutdown(Duration.ofMillis(100));
  }

  private static void start() {
    assertThat(
            Profold.start(
                ProfoldConfig.builder()
                    .endpoint("127.0.0.1:1") // unreachable on purpose: nothing is sent
                    .service("test")
                    .interval(Duration.ofMinutes(10))
                    .build()))
        .isTrue();
  }

  /** Region counts of the calling thread by context id, from the running recorder. */
  private static Map<Integer, Long> regionCounts() {
    Recorder recorder = Profold.runtime().recorder();
    Map<Integer, Long> out = new HashMap<>();
    for (ThreadSnapshot t : recorder.collect()) {
      if (t.threadId() == Thread.currentThread().getId()) {
        for (Cell c : t.cells()) {
          if (c.metric() == recorder.timeMetric()) {
            out.merge(c.context(), c.state().count(), Long::sum);
          }
        }
      }
    }
    return out;
  }

  @Test
  void beforeStartAHandleOpensTheNoOpRegion() {
    assertThat(Profold.isStarted()).isFalse();
    Region r = QUERY.enter();
    assertThat(r).isSameAs(Profold.region("db.query", Kind.IO));
    r.close();
    r.close();
    assertThat(Profold.regionHandle(null, null).enter()).isSameAs(r);
  }

  @Test
  void aHandleOpensTheSameRegionAsTheName() {
    start();
    try (Region a = QUERY.enter()) {
      assertThat(a).isNotSameAs(Profold.noop());
    }
    try (Region b = Profold.region("db.query", Kind.IO)) {
      assertThat(b).isNotSameAs(Profold.noop());
    }
    try (Region outer = Profold.region("handle", Kind.COMPUTE);
        Region c = QUERY.enter()) {
      assertThat(c).isNotSameAs(Profold.noop());
    }
    Map<Integer, Long> counts = regionCounts();
    Recorder recorder = Profold.runtime().recorder();
    int query = recorder.regionContext(0, "db.query", Kind.IO);
    int handle = recorder.regionContext(0, "handle", Kind.COMPUTE);
    int nested = recorder.regionContext(handle, "db.query", Kind.IO);
    assertThat(counts)
        .containsEntry(query, 2L)
        .containsEntry(handle, 1L)
        .containsEntry(nested, 1L)
        .hasSize(3);
  }

  @Test
  void aHandleFollowsARestart() {
    start();
    QUERY.enter().close();
    Profold.shutdown(Duration.ofMillis(100));
    start();
    Recorder recorder = Profold.runtime().recorder();
    // Intern other regions first, so this recorder's ids differ from the first one's.
    int other = recorder.regionContext(0, "other", Kind.WAIT);
    QUERY.enter().close();
    QUERY.enter().close();
    int query = recorder.regionContext(0, "db.query", Kind.IO);
    assertThat(query).isNotEqualTo(other);
    assertThat(regionCounts()).containsEntry(query, 2L).hasSize(1);
  }

  @Test
  void aBadNameOrKindIsReplacedAndCounted() {
    start();
    RegionHandle bad = Profold.regionHandle(null, null);
    bad.enter().close();
    bad.enter().close();
    Recorder recorder = Profold.runtime().recorder();
    assertThat(recorder.misuseCounts()).containsEntry("bad_argument", 1L);
    int replaced = recorder.regionContext(0, "null", Kind.COMPUTE);
    assertThat(regionCounts()).containsEntry(replaced, 2L).hasSize(1);
  }

  @Test
  void handleNameAndKind() {
    assertThat(QUERY.name()).isEqualTo("db.query");
    assertThat(QUERY.kind()).isEqualTo(Kind.IO);
  }
}
