package dev.profold.client.internal.jfr;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import dev.profold.client.Kind;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.client.internal.record.Recorder;
import dev.profold.client.internal.record.ThreadCpu;
import dev.profold.client.internal.threads.Cell;
import dev.profold.client.internal.threads.ThreadSnapshot;
import dev.profold.proto.v1.SourceIdentity;
import java.util.List;
import java.util.Map;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * CPU samples valued by their thread's measured CPU time at the flush ({@code
 * Recorder.collect(ThreadCpu)}, {@code SampledCpu}), recorded through the agent's sink as JFR
 * samples are.
 */
class SampledCpuTest {
  private static final double PERIOD = 0.020;
  private static final long MS = 1_000_000L;

  private final DeltaEncoder encoder =
      new DeltaEncoder(
          SourceIdentity.newBuilder().setService("s").setInstance("i").setIncarnationId(1).build());
  private final Recorder recorder = new Recorder(encoder, 1024);
  private final JfrSink sink = new JfrSink(recorder);

  private void samples(long thread, int n, String... path) {
    for (int i = 0; i < n; i++) {
      sink.record(
          new Observation(
              EventMapper.EXECUTION_SAMPLE,
              thread,
              "worker-" + thread,
              false,
              List.of(path),
              Kind.COMPUTE,
              false,
              PERIOD));
    }
  }

  private List<Rows.Row> collect(Map<Long, Long> cpu) {
    return Rows.of(encoder, recorder, recorder.collect(ThreadCpu.of(cpu)));
  }

  private static Rows.Row row(long thread, String path, long count, double sum) {
    return new Rows.Row(
        thread, "worker-*", EventMapper.EXECUTION_SAMPLE, path, Kind.COMPUTE, "time", count, sum);
  }

  @Test
  void aThreadsSamplesShareItsCpuTimeInProportionToTheirCounts() {
    samples(7, 3, "Thread.run", "A.work");
    samples(7, 1, "Thread.run", "B.work");
    samples(8, 2, "Thread.run", "A.work");

    // 7: 40 ms over 4 samples (oversubscribed: the nominal 80 ms overstate it); 8: 200 ms over 2
    // (more busy threads than the sampler takes per period: the nominal 40 ms understate it)
    List<Rows.Row> rows = collect(Map.of(7L, 40 * MS, 8L, 200 * MS));

    assertThat(rows)
        .usingRecursiveFieldByFieldElementComparatorIgnoringFields("sum")
        .containsExactlyInAnyOrder(
            row(7, "Thread.run/A.work", 3, 0),
            row(7, "Thread.run/B.work", 1, 0),
            row(8, "Thread.run/A.work", 2, 0));
    for (Rows.Row r : rows) {
      double each = r.threadId() == 7 ? 0.010 : 0.100;
      assertThat(r.sum()).as(r.toString()).isCloseTo(r.count() * each, within(1e-12));
    }
  }

  @Test
  void eachSampleIsOneValueOfItsShareSoMinMaxAndTheHistogramAgree() {
    samples(7, 5, "Thread.run", "A.work");

    ThreadSnapshot t = recorder.collect(ThreadCpu.of(Map.of(7L, 60 * MS))).get(0);

    Cell c = t.cells().get(0);
    assertThat(c.metric()).isEqualTo(recorder.timeMetric());
    assertThat(c.state().count()).isEqualTo(5);
    assertThat(c.state().min()).isCloseTo(0.012, within(1e-15));
    assertThat(c.state().max()).isCloseTo(0.012, within(1e-15));
    assertThat(c.state().sumOfSquares()).isCloseTo(5 * 0.012 * 0.012, within(1e-15));
    assertThat(c.state().histogram().totalCount()).isEqualTo(5);
  }

  @Test
  void samplesOfAThreadWhoseCpuTimeIsUnknownKeepTheirNominalValue() {
    samples(7, 3, "Thread.run", "A.work");
    samples(8, 2, "Thread.run", "A.work");

    assertThat(collect(Map.of(8L, 10 * MS))) // 7 unknown (a virtual thread, no CPU clock)
        .containsExactlyInAnyOrder(
            row(7, "Thread.run/A.work", 3, 3 * PERIOD), row(8, "Thread.run/A.work", 2, 0.010));
    samples(7, 1, "Thread.run", "A.work");
    assertThat(collect(Map.of())).containsExactly(row(7, "Thread.run/A.work", 1, PERIOD));
  }

  @Test
  void cpuTimeOfAnIntervalWithoutSamplesGoesToTheNextIntervalsSamplesOnly() {
    // Samples come up to a second late: a burst at an interval's end is sampled in the next one.
    assertThat(collect(Map.of(7L, 50 * MS))).isEmpty();
    samples(7, 5, "Thread.run", "A.work");
    assertThat(collect(Map.of(7L, 0L))).containsExactly(row(7, "Thread.run/A.work", 5, 0.050));

    // Owed for one interval, not longer: the 30 ms are dropped, the 20 ms taken.
    assertThat(collect(Map.of(7L, 30 * MS))).isEmpty();
    assertThat(collect(Map.of(7L, 20 * MS))).isEmpty();
    samples(7, 2, "Thread.run", "A.work");
    assertThat(collect(Map.of(7L, 4 * MS))).containsExactly(row(7, "Thread.run/A.work", 2, 0.024));
  }

  @Test
  void lateSamplesOfAThreadThatEndedGetWhatItWasOwedAndNoMore() {
    samples(7, 4, "Thread.run", "A.work");
    samples(9, 2, "Thread.run", "A.work");
    assertThat(
            Rows.of(
                encoder,
                recorder,
                recorder.collect(
                    new ThreadCpu(
                        Map.of(7L, 40 * MS, 8L, 30 * MS, 9L, 20 * MS),
                        Set.of(),
                        Set.of(7L, 8L),
                        0))))
        .containsExactlyInAnyOrder(
            row(7, "Thread.run/A.work", 4, 0.040), row(9, "Thread.run/A.work", 2, 0.020));
    // 7 and 8 ended in that interval (reported); their last samples come in the next. 7's CPU
    // time went to its samples already: its late ones weigh nothing (not the nominal period
    // each). 8 had no sample then: its late ones get the 30 ms it was owed. 9 is gone without a
    // report of its end (its CPU time in this interval unknown): nominal, as any unknown thread.
    samples(7, 2, "Thread.run", "A.work");
    samples(8, 3, "Thread.run", "A.work");
    samples(9, 1, "Thread.run", "A.work");
    assertThat(collect(Map.of()))
        .containsExactlyInAnyOrder(
            row(7, "Thread.run/A.work", 2, 0),
            row(8, "Thread.run/A.work", 3, 0.030),
            row(9, "Thread.run/A.work", 1, PERIOD));
  }

  /** {@code cpu} over an interval of {@code length}, {@code ended} the threads that ended in it. */
  private List<Rows.Row> collect(Map<Long, Long> cpu, Set<Long> ended, long length) {
    return Rows.of(
        encoder, recorder, recorder.collect(new ThreadCpu(cpu, Set.of(), ended, length)));
  }

  @Test
  void withShortIntervalsCpuTimeWaitsForItsSamplesTwoSecondsNotOneInterval() {
    long interval = 100 * MS;
    // 30 ms in the first interval, its samples delivered ten intervals (a second) later.
    assertThat(collect(Map.of(7L, 30 * MS), Set.of(), interval)).isEmpty();
    for (int k = 0; k < 9; k++) {
      assertThat(collect(Map.of(7L, 0L), Set.of(), interval)).isEmpty();
    }
    samples(7, 3, "Thread.run", "A.work");
    assertThat(collect(Map.of(7L, 0L), Set.of(), interval))
        .as("before: dropped after one interval, the samples weighing 0")
        .containsExactly(row(7, "Thread.run/A.work", 3, 0.030));

    // Beyond two seconds it is dropped.
    assertThat(collect(Map.of(7L, 50 * MS), Set.of(), interval)).isEmpty();
    for (int k = 0; k < 20; k++) {
      assertThat(collect(Map.of(7L, 0L), Set.of(), interval)).isEmpty();
    }
    samples(7, 1, "Thread.run", "A.work");
    assertThat(collect(Map.of(7L, 0L), Set.of(), interval))
        .containsExactly(row(7, "Thread.run/A.work", 1, 0));
  }

  @Test
  void withShortIntervalsRecentCpuTimeIsNotDroppedWithAnOlderDebt() {
    long interval = 100 * MS;
    assertThat(collect(Map.of(7L, 30 * MS), Set.of(), interval)).isEmpty();
    for (int k = 1; k <= 20; k++) {
      assertThat(collect(Map.of(7L, 10 * MS), Set.of(), interval)).isEmpty();
    }
    samples(7, 1, "Thread.run", "A.work");
    // The first 30 ms are out of reach (two seconds old when the interval after the twentieth
    // closed); the twenty 10 ms parts after them were owed, and this interval's 10 ms: 210 ms.
    List<Rows.Row> rows = collect(Map.of(7L, 10 * MS), Set.of(), interval);
    assertThat(rows).hasSize(1);
    assertThat(rows.get(0).count()).isEqualTo(1);
    assertThat(rows.get(0).sum())
        .as("before the fix: the recent parts went with the oldest, 0.010")
        .isCloseTo(0.210, within(1e-12));
  }

  @Test
  void withShortIntervalsAnEndedThreadsLateSamplesWeighNothingForTwoSeconds() {
    long interval = 100 * MS;
    samples(7, 2, "Thread.run", "A.work");
    assertThat(collect(Map.of(7L, 20 * MS), Set.of(7L), interval))
        .containsExactly(row(7, "Thread.run/A.work", 2, 0.020));
    for (int k = 0; k < 5; k++) {
      assertThat(collect(Map.of(), Set.of(), interval)).isEmpty();
    }
    samples(7, 2, "Thread.run", "A.work");
    assertThat(collect(Map.of(), Set.of(), interval))
        .as("before: nominal after one interval")
        .containsExactly(row(7, "Thread.run/A.work", 2, 0));
  }

  private void virtualSamples(int n) {
    for (int i = 0; i < n; i++) {
      sink.record(
          new Observation(
              EventMapper.EXECUTION_SAMPLE,
              EventMapper.VIRTUAL_THREADS,
              EventMapper.VIRTUAL_THREADS_NAME,
              false,
              List.of("VirtualThread.run", "Handler.serve"),
              Kind.COMPUTE,
              false,
              PERIOD));
    }
  }

  /** The values of every sample of {@code out}, by thread id. */
  private static Map<Long, Double> timeByThread(List<ThreadSnapshot> out) {
    Map<Long, Double> sums = new java.util.HashMap<>();
    for (ThreadSnapshot t : out) {
      for (Cell c : t.cells()) {
        sums.merge(t.threadId(), c.state().sum(), Double::sum);
      }
    }
    return sums;
  }

  @Test
  void virtualThreadsAndTheirCarriersShareTheCarriersCpuTime() {
    // Carriers 20 and 21 ran virtual threads for 100 ms in all; 8 samples of virtual threads, 2
    // of carrier 20's own (its scheduler between two virtual threads). Before: the virtual
    // threads' samples kept 8 x 20 ms, and carrier 20's two samples got all its 60 ms.
    virtualSamples(8);
    samples(20, 2, "ForkJoinWorkerThread.run", "ForkJoinPool.scan");
    samples(9, 1, "Thread.run", "A.work");
    List<ThreadSnapshot> out =
        recorder.collect(
            new ThreadCpu(Map.of(20L, 60 * MS, 21L, 40 * MS, 9L, 7 * MS), Set.of(20L, 21L)));

    Map<Long, Double> time = timeByThread(out);
    assertThat(time.get(EventMapper.VIRTUAL_THREADS)).isCloseTo(0.080, within(1e-12));
    assertThat(time.get(20L)).isCloseTo(0.020, within(1e-12));
    assertThat(time.get(9L)).as("not a carrier").isCloseTo(0.007, within(1e-12));

    // The carriers' time went to the samples: none is owed to the next interval.
    samples(21, 1, "ForkJoinWorkerThread.run", "ForkJoinPool.scan");
    out = recorder.collect(new ThreadCpu(Map.of(20L, 0L, 21L, 0L), Set.of(20L, 21L)));
    assertThat(timeByThread(out).get(21L)).isZero();
  }

  @Test
  void withoutSamplesOfVirtualThreadsACarrierIsValuedAsAnyThread() {
    samples(20, 2, "ForkJoinWorkerThread.run", "ForkJoinPool.scan");
    List<ThreadSnapshot> out =
        recorder.collect(new ThreadCpu(Map.of(20L, 10 * MS, 21L, 40 * MS), Set.of(20L, 21L)));
    assertThat(timeByThread(out).get(20L)).isCloseTo(0.010, within(1e-12));

    // No carrier's CPU time known: the virtual threads' samples keep their nominal values.
    virtualSamples(3);
    out = recorder.collect(new ThreadCpu(Map.of(9L, 10 * MS), Set.of()));
    assertThat(timeByThread(out).get(EventMapper.VIRTUAL_THREADS))
        .isCloseTo(3 * PERIOD, within(1e-12));
  }

  /**
   * The law for virtual threads: in an interval with their samples, the samples of virtual threads
   * and of carriers add up to the carriers' CPU time and what they were owed, all samples alike.
   */
  @Property(tries = 200)
  void virtualAndCarrierSamplesAddUpToTheCarriersCpuTime(
      @ForAll @IntRange(min = 1, max = 50) int virtual,
      @ForAll @Size(min = 3, max = 3) List<@IntRange(min = 0, max = 5) Integer> carrierSamples,
      @ForAll @Size(min = 3, max = 3) List<@LongRange(min = 0, max = 2_000_000_000L) Long> owed,
      @ForAll @Size(min = 3, max = 3) List<@LongRange(min = 0, max = 2_000_000_000L) Long> cpu) {
    SampledCpuTest fresh = new SampledCpuTest();
    Set<Long> carriers = Set.of(20L, 21L, 22L);
    Map<Long, Long> first = new java.util.HashMap<>();
    Map<Long, Long> second = new java.util.HashMap<>();
    long total = 0;
    for (int i = 0; i < 3; i++) {
      first.put(20L + i, owed.get(i)); // no samples: owed to the next interval
      second.put(20L + i, cpu.get(i));
      total += owed.get(i) + cpu.get(i);
    }
    assertThat(fresh.recorder.collect(new ThreadCpu(first, carriers))).isEmpty();
    fresh.virtualSamples(virtual);
    long all = virtual;
    for (int i = 0; i < 3; i++) {
      fresh.samples(20L + i, carrierSamples.get(i), "ForkJoinWorkerThread.run", "A.scan");
      all += carrierSamples.get(i);
    }

    List<ThreadSnapshot> out = fresh.recorder.collect(new ThreadCpu(second, carriers));

    double each = total * 1e-9 / all;
    double sum = 0;
    for (ThreadSnapshot t : out) {
      for (Cell c : t.cells()) {
        assertThat(c.state().min()).isCloseTo(each, within(1e-12));
        assertThat(c.state().max()).isCloseTo(each, within(1e-12));
        sum += c.state().sum();
      }
    }
    assertThat(sum).isCloseTo(total * 1e-9, within(1e-9));
  }

  @Test
  void samplesOfAnIntervalWithoutCpuTimeAreCountedButWeighNothing() {
    samples(7, 4, "Thread.run", "A.work");

    ThreadSnapshot t = recorder.collect(ThreadCpu.of(Map.of(7L, 0L))).get(0);

    assertThat(t.cells()).hasSize(1);
    assertThat(t.cells().get(0).state().count()).isEqualTo(4);
    assertThat(t.cells().get(0).state().sum()).isZero();
    assertThat(t.cells().get(0).state().histogram().zeroCount()).isEqualTo(4);
  }

  @Test
  void otherMeasurementsOfTheThreadAreLeftAsRecorded() {
    samples(7, 2, "Thread.run", "A.work");
    sink.record(
        new Observation(
            "jdk.JavaMonitorEnter",
            7,
            "worker-7",
            false,
            List.of("Thread.run", "A.work"),
            Kind.SYNC,
            false,
            0.5));
    sink.record(
        new Observation(
            "jdk.ObjectAllocationSample",
            7,
            "worker-7",
            false,
            List.of("Thread.run", "A.work"),
            Kind.COMPUTE,
            true,
            4096));

    assertThat(collect(Map.of(7L, 40 * MS)))
        .containsExactlyInAnyOrder(
            row(7, "Thread.run/A.work", 2, 0.040),
            new Rows.Row(
                7,
                "worker-*",
                "jdk.JavaMonitorEnter",
                "Thread.run/A.work",
                Kind.SYNC,
                "time",
                1,
                0.5),
            new Rows.Row(
                7,
                "worker-*",
                "jdk.ObjectAllocationSample",
                "Thread.run/A.work",
                Kind.COMPUTE,
                "allocation",
                1,
                4096));
  }

  /**
   * The law: in every interval in which a thread has samples, its sampled time is its CPU time of
   * the interval plus what the interval before owed (CPU time with no sample then), whatever the
   * counts; the counts are the samples taken.
   */
  @Property(tries = 200)
  void sampledTimeAddsUpToTheCpuTimeOwedAndSpent(
      @ForAll @Size(min = 1, max = 12)
          List<@IntRange(min = 0, max = 40) Integer> samplesPerInterval,
      @ForAll @Size(min = 12, max = 12) List<@LongRange(min = 0, max = 5_000_000_000L) Long> cpu) {
    SampledCpuTest fresh = new SampledCpuTest(); // one recorder per try
    long owed = 0;
    for (int i = 0; i < samplesPerInterval.size(); i++) {
      int n = samplesPerInterval.get(i);
      for (int k = 0; k < n; k++) {
        fresh.samples(7, 1, "Thread.run", k % 3 == 0 ? "A.work" : "B.work");
      }
      List<ThreadSnapshot> out = fresh.recorder.collect(ThreadCpu.of(Map.of(7L, cpu.get(i))));
      long count = 0;
      double sum = 0;
      for (ThreadSnapshot t : out) {
        for (Cell c : t.cells()) {
          assertThat(c.metric()).isEqualTo(fresh.recorder.timeMetric());
          count += c.state().count();
          sum += c.state().sum();
        }
      }
      assertThat(count).isEqualTo(n);
      if (n > 0) {
        assertThat(sum).isCloseTo((cpu.get(i) + owed) * 1e-9, within(1e-9));
        owed = 0;
      } else {
        owed = cpu.get(i);
      }
    }
  }
}
