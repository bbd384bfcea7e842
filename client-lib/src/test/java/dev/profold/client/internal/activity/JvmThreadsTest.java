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

  @Test
  void theEndReportsAskTheSameAsTheLook() {
    ThreadGroup system = new ThreadGroup("system"); // as the JDK's process reaper's group
    assertThat(JvmThreads.isApplicationThread(new Thread(system, () -> {}, "process reaper")))
        .isFalse();
    assertThat(JvmThreads.isApplicationThread(new Thread(() -> {}, "JFR Event Stream 1")))
        .isFalse();
    assertThat(JvmThreads.isApplicationThread(new Thread(() -> {}, JvmThreads.OWN_PREFIX + "x")))
        .isFalse();
    assertThat(JvmThreads.isApplicationThread(new Thread(() -> {}, "worker-1"))).isTrue();
  }

  @Test
  void aThreadEnteringAHeldMonitorOrParkedOnAHeldLockIsInTheSameBlockAtEveryLook()
      throws Exception {
    Object monitor = new Object();
    java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock();
    Thread entering =
        new Thread(
            () -> {
              synchronized (monitor) {
                Thread.onSpinWait();
              }
            },
            "entering");
    Thread parked = new Thread(lock::lock, "parked");
    CountDownLatch never = new CountDownLatch(1);
    Thread latch = new Thread(() -> await(never), "latch");
    lock.lock();
    try {
      synchronized (monitor) {
        entering.start();
        parked.start();
        latch.start();
        JvmThreads jvm = new JvmThreads();
        LiveThread.Block first = blockOf(jvm, "entering", Thread.State.BLOCKED, entering);
        LiveThread.Block onLock = blockOf(jvm, "parked", Thread.State.WAITING, parked);
        assertThat(first.monitor()).isTrue();
        assertThat(first.lockClass()).isEqualTo("java.lang.Object");
        assertThat(first.lockIdentity()).isEqualTo(System.identityHashCode(monitor));
        assertThat(onLock.monitor()).isFalse();
        assertThat(onLock.lockClass())
            .isEqualTo("java.util.concurrent.locks.ReentrantLock$NonfairSync");
        assertThat(blockOf(jvm, "entering", Thread.State.BLOCKED, entering)).isEqualTo(first);
        assertThat(blockOf(jvm, "parked", Thread.State.WAITING, parked)).isEqualTo(onLock);
        assertThat(blockOf(jvm, Thread.currentThread().getName(), null, null))
            .as("a running thread")
            .isNull();
        assertThat(blockOf(jvm, "latch", Thread.State.WAITING, latch))
            .as("a latch has no owner: often awaited for long by design, not a lock held up")
            .isNull();
      }
    } finally {
      lock.unlock();
      never.countDown();
      latch.join();
      entering.join();
      parked.join();
    }
  }

  /**
   * The JDK's blocking accept holds a lock while it waits, so of two idle acceptors on one server
   * socket the second parks on that lock for as long as no client comes: idle, not a lock held up.
   */
  @Test
  void idleAcceptorsQueuedOnTheJdksAcceptLockAreNotCountedStuck() throws Exception {
    try (java.net.ServerSocket server =
        new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      List<Thread> acceptors = new java.util.ArrayList<>();
      for (int k = 1; k <= 2; k++) {
        Thread t =
            new Thread(
                () -> {
                  try {
                    server.accept().close();
                  } catch (java.io.IOException e) {
                    // the server socket closed: the test is over
                  }
                },
                "acceptor-" + k);
        acceptors.add(t);
        t.start();
      }
      long deadline = System.nanoTime() + 30_000_000_000L; // a hang guard, not a timing bound
      while (acceptors.stream().noneMatch(t -> t.getState() == Thread.State.WAITING)) {
        assertThat(System.nanoTime() - deadline).as("an acceptor waits within 30 s").isNegative();
        Thread.sleep(1); // a poll tick: the second acceptor is on its way to the lock
      }
      ThreadActivity activity = new ThreadActivity(new JvmThreads());
      activity.countStuckLocks(c -> c.endsWith("Sync"));
      long s = 1_000_000_000L;
      activity.close(0, 0);
      activity.close(0, 10 * s);
      long sync =
          activity.close(10 * s, 20 * s).stream()
              .filter(g -> g.getThreadGroup().equals("acceptor-*"))
              .findFirst()
              .orElseThrow()
              .getSyncNanos();
      assertThat(sync).as("before the fix: 10 s of the waiting acceptor's").isZero();
      server.close();
      for (Thread t : acceptors) {
        t.join();
      }
    }
  }

  /** The block of the thread named {@code name}, once {@code t} is in {@code state}. */
  private static LiveThread.Block blockOf(JvmThreads jvm, String name, Thread.State state, Thread t)
      throws InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L; // a hang guard, not a timing bound
    while (t != null && t.getState() != state) {
      assertThat(System.nanoTime() - deadline).as("%s is %s within 30 s", name, state).isNegative();
      Thread.sleep(1); // a poll tick: the thread is on its way into the block
    }
    return jvm.now().stream().filter(l -> l.name().equals(name)).findFirst().orElseThrow().block();
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
