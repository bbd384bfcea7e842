package dev.profold.client.internal.jfr;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;

/**
 * Reading real JFR events: the frame names, cached per method, are what naming every frame afresh
 * gives, across the events of a recording that repeat the same methods.
 */
class RecordedEventsTest {
  private static volatile double sink;

  static void spinA(long nanos) {
    long until = System.nanoTime() + nanos;
    double x = 1;
    while (System.nanoTime() < until) { // mostly arithmetic: a sample in the clock call is lost
      for (int i = 0; i < 10_000; i++) {
        x = x * 1.000001 + 1e-9;
      }
    }
    sink = x;
  }

  static void spinB(long nanos) {
    spinA(nanos / 2);
    spinA(nanos / 2);
  }

  /** The OS thread id of the calling thread (Linux). */
  static long osThreadId() throws java.io.IOException {
    return Long.parseLong(Path.of("/proc/thread-self").toRealPath().getFileName().toString());
  }

  @Test
  void eventsCarryTheirThreadsOsThreadId() throws Exception {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        Files.exists(Path.of("/proc/thread-self")), "OS thread ids are read from Linux's /proc");
    Path file = Files.createTempFile("profold-recorded-events", ".jfr");
    Path written = Files.createTempFile("profold-written", ".bin");
    try {
      try (Recording r = new Recording()) {
        r.enable(EventMapper.FILE_WRITE).withThreshold(Duration.ZERO);
        r.start();
        try (java.io.FileOutputStream out = new java.io.FileOutputStream(written.toFile())) {
          out.write(new byte[] {1, 2, 3});
        }
        r.stop();
        r.dump(file);
      }
      RecordedEvents reader = new RecordedEvents(64);
      List<Long> tids = new ArrayList<>();
      for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
        if (e.getThread() != null
            && e.getThread().getJavaThreadId() == Thread.currentThread().getId()) {
          tids.add(reader.read(e).osThreadId());
        }
      }
      assertThat(tids).as("the test thread's file writes").isNotEmpty().containsOnly(osThreadId());
    } finally {
      Files.deleteIfExists(file);
      Files.deleteIfExists(written);
    }
  }

  @Test
  void cachedFrameNamesAreTheNamesOfEachFrame() throws Exception {
    Path file = Files.createTempFile("profold-recorded-events", ".jfr");
    try {
      try (Recording r = new Recording()) {
        r.enable(EventMapper.EXECUTION_SAMPLE).withPeriod(Duration.ofMillis(10));
        r.start();
        for (int i = 0; i < 75; i++) { // 1.5 s: JFR's sampler takes a while to get going
          spinB(20_000_000);
        }
        r.stop();
        r.dump(file);
      }
      RecordedEvents reader = new RecordedEvents(64);
      int compared = 0;
      int ours = 0;
      for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
        if (e.getStackTrace() == null) {
          continue;
        }
        JfrEvent read = reader.read(e);
        if (read == null) {
          continue; // a frame of the agent's own shaded dependencies (none here)
        }
        List<String> fresh = new ArrayList<>();
        for (RecordedFrame f : e.getStackTrace().getFrames()) {
          if (f.isJavaFrame() && fresh.size() < 64) {
            fresh.add(
                EventMapper.frameName(f.getMethod().getType().getName(), f.getMethod().getName()));
          }
        }
        assertThat(read.frames()).isEqualTo(fresh);
        compared++;
        if (fresh.contains(RecordedEventsTest.class.getName() + ".spinA")) {
          ours++;
        }
      }
      assertThat(compared).as("events with a stack compared").isGreaterThan(10);
      assertThat(ours).as("samples in spinA, of %d compared", compared).isGreaterThan(3);
    } finally {
      Files.deleteIfExists(file);
    }
  }
}
