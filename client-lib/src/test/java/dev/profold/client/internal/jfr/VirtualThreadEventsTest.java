package dev.profold.client.internal.jfr;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.internal.ChildJvm;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * JFR events of virtual threads (Java 21 and later) are recorded into one table for all of them,
 * named and grouped {@code virtual}, not one table per virtual thread (which would grow with the
 * request rate until the tables aged out). Runs 3,000 virtual threads, 100 at a time, each working
 * on the CPU for a few milliseconds (so JFR samples them), under a real JFR stream in a child JVM
 * of Java 21 or later ({@link ChildJvm}).
 */
class VirtualThreadEventsTest {
  @Test
  void eventsOfVirtualThreadsShareOneTable() throws Exception {
    Path java = ChildJvm.java21();
    String out =
        ChildJvm.run(
            java,
            "VirtualThreadEventsProbe",
            180,
            "var encoder = new dev.profold.client.internal.export.DeltaEncoder(",
            "    dev.profold.proto.v1.SourceIdentity.newBuilder().setService(\"s\")",
            "        .setInstance(\"i\").setIncarnationId(1).build());",
            "var recorder = new dev.profold.client.internal.record.Recorder(encoder, 4096);",
            "var activity = new dev.profold.client.internal.activity.ThreadActivity(",
            "    new dev.profold.client.internal.activity.JvmThreads());",
            "var ms1 = java.time.Duration.ofMillis(1);",
            "var settings = dev.profold.client.internal.jfr.JfrSettings.defaults()",
            "    .withSamplePeriod(java.time.Duration.ofMillis(10)).withThresholds(ms1, ms1, ms1);",
            "var profiler = dev.profold.client.internal.jfr.JfrProfiler.start(",
            "    recorder, activity, settings);",
            "if (!profiler.awaitRunning(java.time.Duration.ofSeconds(60))) throw new Error();",
            "var gate = new java.util.concurrent.Semaphore(100);",
            "var sink = new java.util.concurrent.atomic.AtomicLong();",
            "try (var ex = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {",
            "  for (int i = 0; i < 3_000; i++) {",
            "    ex.submit(() -> {",
            "      gate.acquireUninterruptibly();",
            "      try {",
            "        long end = System.nanoTime() + 3_000_000, x = 0;",
            "        while (System.nanoTime() < end) x += x * 31 + 7;",
            "        sink.addAndGet(x);",
            "      } finally {",
            "        gate.release();",
            "      }",
            "    });",
            "  }",
            "}",
            "long deadline = System.nanoTime() + 60_000_000_000L;",
            "long virtualValues = 0;",
            "int tables = 0;",
            "var names = new java.util.TreeSet<String>();",
            "while (virtualValues == 0 && System.nanoTime() < deadline) {",
            "  Thread.sleep(500);",
            "  for (var t : recorder.collect()) {",
            "    tables++;",
            "    if (t.group().equals(\"virtual\")) {",
            "      names.add(t.name() + \"/\" + t.threadId());",
            "      for (var c : t.cells()) virtualValues += c.state().count();",
            "    }",
            "  }",
            "}",
            "profiler.close();",
            "System.out.println(\"tables=\" + tables + \" virtual=\" + names",
            "    + \" values=\" + virtualValues);");
    Matcher m = Pattern.compile("tables=(\\d+) virtual=\\[(.*)] values=(\\d+)").matcher(out);
    assertThat(m.find()).as(out).isTrue();
    assertThat(m.group(2)).as(out).isEqualTo("virtual/" + EventMapper.VIRTUAL_THREADS);
    assertThat(Long.parseLong(m.group(3))).as(out).isPositive();
    assertThat(Integer.parseInt(m.group(1))).as(out).isLessThan(100); // not one per thread
  }
}
