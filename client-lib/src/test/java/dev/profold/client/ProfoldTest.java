package dev.profold.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.internal.runtime.AckingCollector;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link Profold}'s static API: nothing it is given makes it throw into the application. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ProfoldTest {
  private AckingCollector collector;

  @AfterEach
  void stop() {
    Profold.shutdown(java.time.Duration.ZERO);
    if (collector != null) {
      collector.close();
    }
  }

  private void start() throws Exception {
    collector = new AckingCollector();
    assertThat(Profold.start(ProfoldConfig.builder().endpoint(collector.endpoint()).build()))
        .isTrue();
  }

  @Test
  void flushWithANullTimeoutWaitsTheDefaultOne() throws Exception {
    start();
    assertThat(Profold.flush(null)).isTrue(); // before the fix: NullPointerException
    assertThat(Profold.runtime().exporterStats().acked()).isEqualTo(1);
  }

  @Test
  void shutdownWithANullTimeoutWaitsTheDefaultOne() throws Exception {
    start();
    Profold.shutdown(null); // before the fix: NullPointerException
    assertThat(Profold.isStarted()).isFalse();
    assertThat(Profold.flush(null)).isFalse(); // not started
  }
}
