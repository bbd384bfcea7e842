package dev.profold.client.internal.record;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.Kind;
import dev.profold.client.internal.export.DeltaEncoder;
import dev.profold.proto.v1.SourceIdentity;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The agent makes a {@link ForeignThread} for every thread that ends while it listens (its {@code
 * jdk.ThreadEnd} is recorded on its behalf), and each is held until the next flush: a program that
 * starts and ends thousands of threads a second holds that many between two flushes.
 */
class ForeignThreadFootprintTest {
  @Test
  void aForeignThreadThatRecordsOneValueAllocatesAboutAKilobyteNotTen() {
    com.sun.management.ThreadMXBean mx =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    Assumptions.assumeTrue(mx.isThreadAllocatedMemorySupported());
    mx.setThreadAllocatedMemoryEnabled(true);
    Recorder recorder =
        new Recorder(
            new DeltaEncoder(
                SourceIdentity.newBuilder()
                    .setService("s")
                    .setInstance("i")
                    .setIncarnationId(1)
                    .build()),
            1024,
            1024);
    IdHolder holder = recorder.holder();
    int context = recorder.regionContext(holder, 0, "Thread.exit", Kind.THREAD_MGMT);
    int n = 2_000;
    long self = Thread.currentThread().getId();
    for (int i = 0; i < n; i++) { // warm up, then drop them
      recordOneAndRetire(recorder, i, context);
    }
    recorder.collect();

    long before = mx.getThreadAllocatedBytes(self);
    for (int i = 0; i < n; i++) {
      recordOneAndRetire(recorder, n + i, context);
    }
    long perThread = (mx.getThreadAllocatedBytes(self) - before) / n;

    System.out.printf("a foreign thread recording one value allocates %d bytes%n", perThread);
    // Before the foreign states went without the region caches: 8,032 bytes.
    assertThat(perThread).as("bytes allocated per ended thread").isLessThan(2_500);
    assertThat(recorder.collect()).as("each ended thread, with its value").hasSize(n);
  }

  private static void recordOneAndRetire(Recorder recorder, long id, int context) {
    ForeignThread f = recorder.foreign(id + 1_000_000, "churn-" + id, false);
    f.record(context, recorder.timeMetric(), 0);
    f.retire();
  }
}
