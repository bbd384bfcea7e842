package dev.profold.client.internal.record;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.internal.ChildJvm;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Real virtual threads (Java 21 and later) record through pooled states: 20,000 of them, 50 at a
 * time, each sleeping inside nested regions (so it leaves its carrier and may come back on
 * another), record every value under as many states as run at once, in the {@code virtual} group.
 *
 * <p>The build runs on Java 17, so the check runs in a child JVM of Java 21 or later ({@link
 * ChildJvm}).
 */
class VirtualThreadsTest {
  @Test
  void twentyThousandVirtualThreadsRecordThroughAsManyStatesAsRunAtOnce() throws Exception {
    Path java = ChildJvm.java21();
    String out =
        ChildJvm.run(
            java,
            "VirtualThreadsProbe",
            120,
            "var encoder = new dev.profold.client.internal.export.DeltaEncoder(",
            "    dev.profold.proto.v1.SourceIdentity.newBuilder().setService(\"s\")",
            "        .setInstance(\"i\").setIncarnationId(1).build());",
            "var recorder = new dev.profold.client.internal.record.Recorder(",
            "    encoder, 1024, Integer.MAX_VALUE);",
            "var gate = new java.util.concurrent.Semaphore(50);",
            "try (var ex = java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor()) {",
            "  for (int i = 0; i < 20_000; i++) {",
            "    ex.submit(() -> {",
            "      gate.acquireUninterruptibly();",
            "      try (var r = recorder.region(\"handle\", dev.profold.client.Kind.COMPUTE)) {",
            "        try (var q = recorder.region(\"db.query\", dev.profold.client.Kind.IO)) {",
            "          Thread.sleep(1);",
            "        }",
            "      } catch (InterruptedException e) {",
            "        throw new IllegalStateException(e);",
            "      } finally {",
            "        gate.release();",
            "      }",
            "    });",
            "  }",
            "}",
            "var snapshots = recorder.collect();",
            "long values = 0;",
            "var groups = new java.util.TreeSet<String>();",
            "for (var t : snapshots) {",
            "  groups.add(t.group());",
            "  for (var c : t.cells()) values += c.state().count();",
            "}",
            "System.out.println(\"states=\" + snapshots.size() + \" values=\" + values",
            "    + \" groups=\" + groups + \" misuse=\" + recorder.misuseCounts().values().stream()",
            "    .mapToLong(Long::longValue).sum());");
    Matcher m =
        Pattern.compile("states=(\\d+) values=(\\d+) groups=\\[(.*)] misuse=(\\d+)").matcher(out);
    assertThat(m.find()).as(out).isTrue();
    assertThat(Integer.parseInt(m.group(1))).as(out).isBetween(1, 50);
    assertThat(Long.parseLong(m.group(2))).as(out).isEqualTo(40_000);
    assertThat(m.group(3)).isEqualTo("virtual");
    assertThat(m.group(4)).isEqualTo("0");
  }
}
