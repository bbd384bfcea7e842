package dev.profold.client.internal.activity;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class OsRunQueuesTest {
  private final OsRunQueues queues = new OsRunQueues();

  @Test
  void aThreadThatLearntItsOwnOsThreadIdIsRead() throws Exception {
    assumeTrue(Files.exists(Path.of("/proc/thread-self/schedstat")), "Linux's schedstat");
    CountDownLatch learnt = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(1);
    Thread t =
        new Thread(
            () -> {
              queues.learnCurrentThread();
              learnt.countDown();
              try {
                done.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    t.start();
    try {
      assertThat(learnt.await(10, TimeUnit.SECONDS)).isTrue();
      Map<Long, long[]> read = queues.read(List.of(t.getId(), 999_999L));
      assertThat(read).containsOnlyKeys(t.getId()); // the other one was never learnt
      assertThat(read.get(t.getId())).hasSize(2);
      assertThat(read.get(t.getId())[0]).as("nanoseconds queued").isNotNegative();
      assertThat(read.get(t.getId())[1]).as("times put on a CPU: it ran").isPositive();
    } finally {
      done.countDown();
      t.join();
    }
  }

  @Test
  void threadsNoLongerAliveAreForgottenOnceTwoReadsInARowMissedThem() {
    queues.learn(1, 101);
    queues.learn(2, 102);
    queues.learn(3, -1); // unknown: not kept
    queues.read(List.of(1L)); // 2 ended before the caller looked, or started after it looked
    assertThat(queues.size()).as("one read that misses it is not enough").isEqualTo(2);

    queues.read(List.of(1L, 2L)); // it had started after the look: alive at the next one
    queues.read(List.of(1L));
    assertThat(queues.size()).isEqualTo(2);

    queues.read(List.of(1L)); // and then it ended
    assertThat(queues.size()).isEqualTo(1);
  }

  @Test
  void aThreadLearntBetweenTheCallersLookAndItsReadIsKept() {
    queues.read(List.of()); // some reads before
    queues.learn(7, 107); // learnt after the look that did not see it
    queues.read(List.of()); // the read of that look
    queues.read(List.of(7L)); // the next look sees it
    queues.read(List.of(7L));
    assertThat(queues.size()).isEqualTo(1);
  }

  @Test
  void atMostSoManyIdsAreKept() {
    for (long id = 0; id < OsRunQueues.MAX_THREADS + 10; id++) {
      queues.learn(id, id + 1);
    }
    assertThat(queues.size()).isEqualTo(OsRunQueues.MAX_THREADS);
    queues.learn(5, 77); // a known one is updated all the same
    assertThat(queues.size()).isEqualTo(OsRunQueues.MAX_THREADS);
  }
}
