package dev.profold.client.internal.jfr;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.internal.activity.OsThreads;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

class BlockingIoTest {
  private static final long DEADLINE_NANOS = TimeUnit.SECONDS.toNanos(30);

  private static Thread daemon(String name, Runnable body) {
    Thread t = new Thread(body, name);
    t.setDaemon(true);
    t.start();
    return t;
  }

  /** Polls the look until it says {@code expected} or the deadline passes; returns the last. */
  /**
   * Waits (a hang guard of 30 s) until {@code t} is blocked in native code (its top frame) under a
   * frame whose method name contains {@code method}.
   */
  private static void awaitFrame(Thread t, String method) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!blockedIn(t.getStackTrace(), method)) {
      assertThat(System.nanoTime() - deadline)
          .as("%s reached %s within 30 s", t.getName(), method)
          .isNegative();
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
    }
  }

  private static boolean blockedIn(StackTraceElement[] stack, String method) {
    return stack.length > 0
        && stack[0].isNativeMethod()
        && java.util.Arrays.stream(stack).anyMatch(f -> f.getMethodName().contains(method));
  }

  private static boolean lookUntil(String name, boolean expected) {
    long end = System.nanoTime() + DEADLINE_NANOS;
    boolean seen = BlockingIo.anyThreadIn(name::equals);
    while (seen != expected && System.nanoTime() < end) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
      seen = BlockingIo.anyThreadIn(name::equals);
    }
    return seen;
  }

  @Test
  void aThreadBlockedInASocketReadIsInIoAndOneWaitingForAConnectionOrParkedIsNot()
      throws Exception {
    try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
        Socket accepted = server.accept();
        ServerSocket idleServer = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread reader =
          daemon(
              "blocked-reader",
              () -> {
                try {
                  int unused = client.getInputStream().read(); // nothing comes until closed
                } catch (IOException e) {
                  // closed at the end of the test
                }
              });
      Thread acceptor =
          daemon(
              "acceptor",
              () -> {
                try (Socket unused = idleServer.accept()) {
                  // closed at the end of the test
                } catch (IOException e) {
                  // closed at the end of the test
                }
              });
      Thread parked = daemon("parked", () -> LockSupport.parkNanos(DEADLINE_NANOS));
      assertThat(lookUntil("blocked-reader", true)).as("in a blocking socket read").isTrue();
      // Once in accept or parked, they stay there: wait until they are, so that the look below
      // looks at them there.
      awaitFrame(acceptor, "accept");
      awaitFrame(parked, "park");
      assertThat(BlockingIo.anyThreadIn("acceptor"::equals))
          .as("waiting for a connection")
          .isFalse();
      assertThat(BlockingIo.anyThreadIn("parked"::equals)).as("parked").isFalse();
      assertThat(BlockingIo.anyThreadIn(n -> false)).as("no thread looked at").isFalse();
      accepted.close();
      client.close();
      idleServer.close();
      LockSupport.unpark(parked);
      reader.join(10_000);
      acceptor.join(10_000);
    }
  }

  @Test
  void aThreadInAReadFrameCountsUnlessTheOsFindsItRunnable() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        java.nio.file.Files.exists(java.nio.file.Path.of("/proc/thread-self/stat")),
        "OS thread ids and states are read from Linux's /proc");
    try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
        Socket accepted = server.accept()) {
      long[] tid = {0};
      java.util.concurrent.CountDownLatch known = new java.util.concurrent.CountDownLatch(1);
      Thread reader =
          daemon(
              "os-blocked-reader",
              () -> {
                try {
                  tid[0] = RecordedEventsTest.osThreadId();
                  known.countDown();
                  int unused = client.getInputStream().read(); // nothing comes until closed
                } catch (IOException e) {
                  // closed at the end of the test
                }
              });
      assertThat(known.await(30, TimeUnit.SECONDS)).isTrue();
      assertThat(lookUntil("os-blocked-reader", true)).as("in a blocking socket read").isTrue();
      java.util.Map<Long, Long> ids = java.util.Map.of(reader.getId(), tid[0]);
      java.util.function.Predicate<String> it = "os-blocked-reader"::equals;

      assertThat(OsThreads.runnable(tid[0])).as("the OS has it sleeping").isFalse();
      assertThat(BlockingIo.anyThreadIn(it, ids, OsThreads::runnable)).as("waiting").isTrue();
      int[] asked = {0};
      assertThat(
              BlockingIo.anyThreadIn(
                  it,
                  ids,
                  t -> {
                    asked[0]++;
                    return asked[0] == 3; // runnable at the third look: a call in progress
                  }))
          .as("found runnable")
          .isFalse();
      assertThat(asked[0]).isEqualTo(3);
      asked[0] = 0;
      assertThat(BlockingIo.anyThreadIn(it, ids, t -> ++asked[0] < 0)).isTrue();
      assertThat(asked[0]).as("asked at every look").isEqualTo(BlockingIo.LOOKS_AT_STATE);
      assertThat(BlockingIo.anyThreadIn(it, ids, t -> null)).as("the OS cannot say").isTrue();
      assertThat(BlockingIo.anyThreadIn(it, java.util.Map.of(), t -> true))
          .as("its OS thread id not known")
          .isTrue();
      assertThat(BlockingIo.anyThreadIn(n -> false, ids, t -> false))
          .as("no thread looked at")
          .isFalse();
      accepted.close();
      client.close();
      reader.join(10_000);
    }
  }

  @Test
  void theOsHasASpinningThreadRunnable() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        java.nio.file.Files.exists(java.nio.file.Path.of("/proc/thread-self/stat")),
        "OS thread states are read from Linux's /proc");
    long tid = RecordedEventsTest.osThreadId();
    long until = System.nanoTime() + 1_000_000;
    while (System.nanoTime() < until) {
      Thread.onSpinWait();
    }
    assertThat(OsThreads.runnable(tid)).as("a thread reading its own state runs").isTrue();
    assertThat(OsThreads.runnable(Integer.MAX_VALUE)).as("no such thread").isNull();
  }

  @Test
  void aTimedAcceptIsNotIoButATimedReadIs() throws Exception {
    // Both wait in sun.nio.ch.Net.poll: before, a server thread in accept() with a timeout kept
    // JFR's I/O events on for good.
    try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Socket client = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
        Socket accepted = server.accept();
        ServerSocket idleServer = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      idleServer.setSoTimeout(60_000);
      client.setSoTimeout(60_000);
      Thread acceptor =
          daemon(
              "timed-acceptor",
              () -> {
                try (Socket unused = idleServer.accept()) {
                  // closed at the end of the test
                } catch (IOException e) {
                  // closed at the end of the test
                }
              });
      Thread reader =
          daemon(
              "timed-reader",
              () -> {
                try {
                  int unused = client.getInputStream().read();
                } catch (IOException e) {
                  // closed at the end of the test
                }
              });
      assertThat(lookUntil("timed-reader", true)).as("a read with a timeout").isTrue();
      awaitFrame(acceptor, "accept"); // the acceptor is in accept, and stays there
      assertThat(BlockingIo.anyThreadIn("timed-acceptor"::equals))
          .as("an accept with a timeout")
          .isFalse();
      accepted.close();
      client.close();
      idleServer.close();
      reader.join(10_000);
      acceptor.join(10_000);
    }
  }

  @Test
  void framesOfBlockingReadsAndWritesAreIoAndSelectorsAndAcceptsAreNot() {
    assertThat(BlockingIo.isBlockingIo("sun.nio.ch.SocketDispatcher.read0")).isTrue();
    assertThat(BlockingIo.isBlockingIo("sun.nio.ch.Net.poll")).isTrue();
    assertThat(BlockingIo.isBlockingIo("java.io.FileInputStream.readBytes")).isTrue();
    assertThat(BlockingIo.isBlockingIo("sun.nio.ch.UnixFileDispatcherImpl.pwrite0")).isTrue();
    assertThat(BlockingIo.isBlockingIo("sun.nio.ch.EPoll.wait")).isFalse();
    assertThat(BlockingIo.isBlockingIo("sun.nio.ch.Net.accept")).isFalse();
    assertThat(BlockingIo.isBlockingIo("jdk.internal.misc.Unsafe.park")).isFalse();
  }
}
