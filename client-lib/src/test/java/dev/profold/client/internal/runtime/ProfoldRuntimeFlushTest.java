package dev.profold.client.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.ProfoldConfig;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ProfoldRuntimeFlushTest {
  @Test
  void aFlushThatThrowsAnErrorDoesNotEndTheFixedRateSchedule() throws Exception {
    ProfoldRuntime r =
        ProfoldRuntime.start(
            ProfoldConfig.builder()
                .service("s")
                .endpoint("127.0.0.1:1")
                .interval(Duration.ofHours(1)) // its own flushes stay out of the way
                .build());
    ScheduledExecutorService schedule = Executors.newSingleThreadScheduledExecutor();
    try {
      AtomicInteger runs = new AtomicInteger();
      CountDownLatch afterErrors = new CountDownLatch(2);
      schedule.scheduleAtFixedRate(
          () ->
              r.flushSafely(
                  () -> {
                    switch (runs.incrementAndGet()) {
                      case 1 -> throw new StackOverflowError("planted");
                      case 2 -> throw new OutOfMemoryError("planted");
                      case 3 -> throw new IllegalStateException("planted");
                      default -> afterErrors.countDown();
                    }
                  }),
          0,
          1,
          TimeUnit.MILLISECONDS);
      assertThat(afterErrors.await(30, TimeUnit.SECONDS)).as("flushes after the failures").isTrue();
    } finally {
      schedule.shutdownNow();
      r.shutdown(Duration.ofMillis(100));
    }
  }
}
