package dev.profold.client.internal.jfr;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class IoEventGateTest {
  private static final long Q = 30_000_000_000L; // the quiet time, 30 s

  private static final long MS = 1_000_000L;

  private final List<String> switched = new ArrayList<>();
  private final java.util.Map<Long, Long> runQueue = new java.util.HashMap<>(); // tid: waited
  private int reads; // of the run queue
  private boolean threadsInIo; // what the gate's look at the threads finds
  private int looks;
  private long now = 1_000; // any origin: the gate only takes differences

  private IoEventGate gate(long quiet) {
    return new IoEventGate(
        quiet,
        on -> switched.add((on ? "on@" : "off@") + (now / 1_000_000_000L)),
        () -> {
          looks++;
          return threadsInIo;
        },
        tid -> -1,
        now);
  }

  /** A gate that reads the threads' run-queue wait from {@link #runQueue} (-1 when absent). */
  private IoEventGate judgingGate() {
    return new IoEventGate(
        Q,
        on -> switched.add((on ? "on@" : "off@") + (now / 1_000_000_000L)),
        () -> {
          looks++;
          return threadsInIo;
        },
        tid -> {
          reads++;
          return runQueue.getOrDefault(tid, -1L);
        },
        now);
  }

  /**
   * Ticks once a second for {@code seconds}; each second thread {@code tid} reports {@code io} of
   * I/O in one event and waits {@code queued} for a CPU.
   */
  private void runWithIo(IoEventGate g, long seconds, long tid, long io, long queued) {
    for (long s = 0; s < seconds; s++) {
      now += 1_000_000_000L;
      runQueue.merge(tid, queued, Long::sum);
      g.eventSeen(now, tid, io);
      g.tick(now);
    }
  }

  /** Ticks once a second for {@code seconds}, as JFR's batches come. */
  private void run(IoEventGate g, long seconds) {
    for (long s = 0; s < seconds; s++) {
      now += 1_000_000_000L;
      g.tick(now);
    }
  }

  @Test
  void onAtStartAndOffAfterTheQuietTimeWithoutAnEvent() {
    IoEventGate g = gate(Q);
    assertThat(g.isOn()).isTrue();
    run(g, 29);
    assertThat(g.isOn()).isTrue();
    assertThat(switched).isEmpty();
    run(g, 1);
    assertThat(g.isOn()).isFalse();
    assertThat(switched).containsExactly("off@30");
    assertThat(switched).filteredOn(x -> x.startsWith("off")).as("turned off once").hasSize(1);
  }

  @Test
  void eventsKeepThemOnAndTheQuietTimeCountsFromTheLastOne() {
    IoEventGate g = gate(Q);
    for (int k = 0; k < 10; k++) {
      run(g, 20);
      g.eventSeen(now, -1, 0);
    }
    assertThat(switched).isEmpty();
    run(g, 29);
    assertThat(g.isOn()).isTrue();
    run(g, 1);
    assertThat(switched).containsExactly("off@230");
  }

  @Test
  void probesThatFindNothingComeLessOftenUpToTenQuietTimes() {
    IoEventGate g = gate(Q);
    run(g, 30); // off at 30 s
    run(g, 30); // probe at 60 s for 30 s: off at 90, then 60 s off
    run(g, 30);
    run(g, 60);
    assertThat(switched).containsExactly("off@30", "on@60", "off@90", "on@150");
    switched.clear();
    run(g, 30 + 120 + 30 + 240 + 30 + 300 + 30 + 300);
    // off periods 120, 240, then 300 (ten quiet times) from then on
    assertThat(switched)
        .containsExactly(
            "off@180", "on@300", "off@330", "on@570", "off@600", "on@900", "off@930", "on@1230");
  }

  @Test
  void aProbeThatFindsAnEventStaysOnAndOffPeriodsStartAgain() {
    IoEventGate g = gate(Q);
    run(g, 30 + 30 + 30 + 60); // off, probe, off 60 s, probe on at 150
    assertThat(g.isOn()).isTrue();
    run(g, 10);
    g.eventSeen(now, -1, 0); // at 160
    run(g, 29);
    assertThat(g.isOn()).isTrue();
    run(g, 1); // 30 s after the event
    assertThat(g.isOn()).isFalse();
    switched.clear();
    run(g, 30); // the off period is the quiet time again, not 120 s
    assertThat(switched).containsExactly("on@220");
  }

  @Test
  void eventsArrivingWhileOffChangeNothing() {
    IoEventGate g = gate(Q);
    run(g, 30);
    g.eventSeen(now, -1, 0); // delivered late, from before the switch
    run(g, 29);
    assertThat(g.isOn()).isFalse();
    run(g, 1);
    assertThat(g.isOn()).isTrue();
  }

  @Test
  void ioOfAThreadThatWaitedLongerForACpuDoesNotKeepThemOn() {
    IoEventGate g = judgingGate();
    runQueue.put(7L, 0L);
    // A saturated event loop: a 12 ms non-blocking write a second, preempted, while the thread
    // waits 500 ms a second for a CPU. Its first event counts (nothing to judge it by yet).
    runWithIo(g, 30, 7, 12 * MS, 500 * MS);
    assertThat(g.isOn()).isTrue();
    runWithIo(g, 1, 7, 12 * MS, 500 * MS);
    assertThat(switched).containsExactly("off@31");
  }

  @Test
  void ioOfAThreadThatWaitedLessForACpuOverTwoBatchesKeepsThemOn() {
    IoEventGate g = judgingGate();
    runQueue.put(7L, 0L);
    // Real I/O waits: 300 ms a second against 200 ms waiting for a CPU.
    runWithIo(g, 100, 7, 300 * MS, 200 * MS);
    assertThat(g.isOn()).isTrue();
    assertThat(switched).isEmpty();
    runWithIo(g, 30, 7, 12 * MS, 12 * MS); // 24 ms against 24 ms over two batches: not I/O
    assertThat(g.isOn()).as("found at 101: 300 + 12 ms against 200 + 12 ms").isTrue();
    runWithIo(g, 1, 7, 12 * MS, 12 * MS);
    assertThat(switched).containsExactly("off@131");
  }

  @Test
  void manyThreadsWithRarePreemptedCallsStillLetThemGoOff() {
    IoEventGate g = judgingGate();
    for (long t = 1; t <= 8; t++) {
      runQueue.put(t, 0L);
    }
    // Eight threads, each with one preempted 12 ms call every 8 s, all waiting 500 ms a second
    // for a CPU: each one's first event counts, the later ones are judged.
    for (int s = 1; s <= 120; s++) {
      now += 1_000_000_000L;
      for (long t = 1; t <= 8; t++) {
        runQueue.merge(t, 500 * MS, Long::sum);
      }
      g.eventSeen(now, 1 + s % 8, 12 * MS);
      g.tick(now);
    }
    assertThat(switched).first().isEqualTo("off@38"); // 30 s after the last first event, at 8 s
  }

  @Test
  void followedThreadsAreReadWhileOffSoThatAProbeJudgesAtOnce() {
    IoEventGate g = judgingGate();
    runQueue.put(7L, 0L);
    runWithIo(g, 31, 7, 12 * MS, 500 * MS); // off at 31
    run(g, 30); // the probe at 61
    assertThat(switched).containsExactly("off@31", "on@61");
    switched.clear();
    int read = reads;
    runWithIo(g, 30, 7, 12 * MS, 500 * MS); // preempted calls during the probe: judged, not found
    assertThat(switched).containsExactly("off@91");
    assertThat(reads - read).as("one reading per tick").isEqualTo(30);
  }

  @Test
  void threadsWithPreemptedCallsRarerThanTheQuietTimeStayFollowed() {
    IoEventGate g = judgingGate();
    for (long t = 1; t <= 8; t++) {
      runQueue.put(t, 0L);
    }
    // Eight threads, each with one preempted 12 ms call every 40 s (one every 5 s in all), all
    // waiting 500 ms a second for a CPU.
    for (int s = 1; s <= 400; s++) {
      now += 1_000_000_000L;
      for (long t = 1; t <= 8; t++) {
        runQueue.merge(t, 500 * MS, Long::sum);
      }
      if (s % 5 == 0) {
        g.eventSeen(now, 1 + (s / 5) % 8, 12 * MS);
      }
      g.tick(now);
    }
    assertThat(switched).first().isEqualTo("off@70"); // 30 s after the last first event, at 40 s
    assertThat(switched).as("probes find nothing: off periods grow").contains("on@100", "on@190");
  }

  @Test
  void beyondTheLimitANewThreadTakesThePlaceOfOneQuietForAQuietTime() {
    IoEventGate g = judgingGate();
    for (long t = 1; t <= IoEventGate.MAX_JUDGED_THREADS + 1; t++) {
      runQueue.put(t, 0L);
    }
    for (long t = 1; t <= IoEventGate.MAX_JUDGED_THREADS; t++) {
      g.eventSeen(now, t, 12 * MS); // all followed from 0 s; thread 1 is the quietest after
    }
    for (int s = 0; s < 20; s++) {
      now += 1_000_000_000L;
      for (long t = 2; t <= IoEventGate.MAX_JUDGED_THREADS; t++) {
        runQueue.merge(t, 500 * MS, Long::sum);
        g.eventSeen(now, t, 12 * MS);
      }
      g.tick(now);
    }
    long extra = IoEventGate.MAX_JUDGED_THREADS + 1;
    g.eventSeen(now, extra, 12 * MS); // at 20 s: no place yet (thread 1 quiet for 20 s): found
    run(g, 10);
    g.eventSeen(now, extra, 12 * MS); // at 30 s: found again, and takes thread 1's place
    runQueue.merge(extra, 500 * MS, Long::sum);
    run(g, 1);
    runQueue.merge(extra, 500 * MS, Long::sum);
    g.eventSeen(now, extra, 12 * MS); // at 31 s: followed now, judged as preempted
    run(g, 28);
    assertThat(g.isOn()).isTrue();
    run(g, 1);
    assertThat(switched).as("30 s after its last event that counted").containsExactly("off@60");
  }

  @Test
  void aProbeJudgesRealIoAgainstTheWaitOfTheLastTwoBatchesNotTheOffPeriod() {
    IoEventGate g = judgingGate();
    runQueue.put(7L, 0L);
    runWithIo(g, 31, 7, 12 * MS, 500 * MS); // off at 31
    for (int s = 0; s < 30; s++) { // off: no events, 100 ms a second waiting for a CPU
      now += 1_000_000_000L;
      runQueue.merge(7L, 100 * MS, Long::sum);
      g.tick(now);
    }
    assertThat(switched).containsExactly("off@31", "on@61");
    runWithIo(g, 40, 7, 300 * MS, 100 * MS); // real I/O during the probe
    assertThat(g.isOn()).as("found, not judged against 30 s of waiting").isTrue();
  }

  @Test
  void aThreadWhoseRunQueueCannotBeReadCountsAsBefore() {
    IoEventGate g = judgingGate(); // thread 9 has no reading: -1
    for (int k = 0; k < 10; k++) {
      run(g, 20);
      g.eventSeen(now, 9, 12 * MS);
    }
    run(g, 29);
    assertThat(g.isOn()).isTrue();
    assertThat(switched).isEmpty();
    runQueue.put(5L, 0L);
    g.eventSeen(now, 5, 12 * MS); // followed from now
    runQueue.remove(5L); // then it ends: its wait cannot be read
    g.eventSeen(now, 5, 12 * MS);
    run(g, 1);
    run(g, 29);
    assertThat(g.isOn()).as("the ended thread's I/O counted as found at 230 s").isTrue();
    run(g, 1);
    assertThat(switched).containsExactly("off@260");
  }

  @Test
  void aQuietTimeOfZeroKeepsThemOnForever() {
    IoEventGate g = gate(0);
    long start = now;
    run(g, 10_000);
    assertThat(g.isOn()).isTrue();
    assertThat(switched).isEmpty();
    assertThat(g.offNanos(now)).isZero();
    assertThat(now - start).isPositive();
  }

  @Test
  void theTimeOffAddsUpEveryOffPeriodIncludingTheCurrentOne() {
    IoEventGate g = gate(Q);
    long s = 1_000_000_000L;
    run(g, 30); // off at 30
    assertThat(g.offNanos(now)).isZero();
    run(g, 10);
    assertThat(g.offNanos(now)).as("the current off period, up to now").isEqualTo(10 * s);
    assertThat(g.offNanos(now + 5 * s)).isEqualTo(15 * s);
    run(g, 20); // probe on at 60: off 30 s
    assertThat(g.offNanos(now)).isEqualTo(30 * s);
    run(g, 30); // off again at 90
    assertThat(g.offNanos(now)).as("nothing while on").isEqualTo(30 * s);
    run(g, 60); // probe on at 150: off 60 s more
    assertThat(switched).containsExactly("off@30", "on@60", "off@90", "on@150");
    assertThat(g.offNanos(now)).isEqualTo(90 * s);
    assertThat(g.offNanos(now + 100 * s)).as("on: the time off no longer grows").isEqualTo(90 * s);
  }

  @Test
  void aThreadInABlockingReadKeepsThemOnPastTheQuietTime() {
    IoEventGate g = gate(Q);
    threadsInIo = true; // a read longer than the quiet time: JFR records it only if on throughout
    run(g, 300);
    assertThat(g.isOn()).isTrue();
    assertThat(switched).isEmpty();
    assertThat(looks).as("one look per quiet time").isEqualTo(10);
    threadsInIo = false;
    run(g, 30);
    assertThat(switched).containsExactly("off@330");
  }

  @Test
  void whileOffALookPerQuietTimeTurnsThemOnWhenAThreadIsInABlockingRead() {
    IoEventGate g = gate(Q);
    run(g, 30 + 30 + 30); // off at 30, probe at 60, off at 90 with 60 s to wait
    int before = looks;
    run(g, 29);
    assertThat(looks).as("no look within a quiet time of the switch").isEqualTo(before);
    threadsInIo = true;
    run(g, 1); // 120: a quiet time since the switch off, the next probe at 150
    assertThat(switched).containsExactly("off@30", "on@60", "off@90", "on@120");
    threadsInIo = false;
    run(g, 30);
    assertThat(g.isOn()).isFalse();
    switched.clear();
    run(g, 30); // it counted as finding something: the off period is the quiet time again
    assertThat(switched).containsExactly("on@180");
  }
}
