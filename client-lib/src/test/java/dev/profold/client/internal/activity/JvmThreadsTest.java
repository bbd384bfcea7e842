package dev.profold.client.internal.activity;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class JvmThreadsTest {
  @Test
  void applicationThreadsAreListedButProfoldsAndJfrsAreNot() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    List<Thread> threads =
        List.of(
            new Thread(() -> await(release), "worker-1"),
            new Thread(() -> await(release), "JFR Periodic Tasks"),
            new Thread(() -> await(release), JvmThreads.OWN_PREFIX + "flush"));
    threads.forEach(Thread::start);
    try {
      List<String> names = new JvmThreads().now().stream().map(LiveThread::name).toList();
      assertThat(names).contains("worker-1", Thread.currentThread().getName());
      assertThat(names).doesNotContain("JFR Periodic Tasks", JvmThreads.OWN_PREFIX + "flush");
    } finally {
      release.countDown();
      for (Thread t : threads) {
        t.join();
      }
    }
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
