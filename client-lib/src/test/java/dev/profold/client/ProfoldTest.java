package dev.profold.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.internal.ChildJvm;
import dev.profold.client.internal.runtime.AckingCollector;
import dev.profold.proto.v1.AttributeValue;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.Entry;
import dev.profold.proto.v1.Measurement;
import dev.profold.proto.v1.PathNode;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link Profold}'s static API: nothing it is given makes it throw into the application. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ProfoldTest {
  private AckingCollector collector;

  @AfterEach
  void stop() {
    Profold.shutdown(java.time.Duration.ZERO);
    if (collector != null) {
      collector.close();
    }
  }

  private void start() throws Exception {
    collector = new AckingCollector();
    assertThat(Profold.start(ProfoldConfig.builder().endpoint(collector.endpoint()).build()))
        .isTrue();
  }

  @Test
  void flushWithANullTimeoutWaitsTheDefaultOne() throws Exception {
    start();
    assertThat(Profold.flush(null)).isTrue(); // before the fix: NullPointerException
    assertThat(Profold.runtime().exporterStats().acked()).isEqualTo(1);
  }

  @Test
  void aStoppedRuntimeIsNotKeptByTheThreadsThatRecordedWithIt() throws Exception {
    start();
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(2);
    try {
      for (int i = 0; i < 4; i++) {
        pool.submit(
                () -> {
                  try (Scope s = Profold.with("tenant", "a");
                      Region r = Profold.region("work", Kind.COMPUTE)) {
                    Profold.record("bytes", 10);
                  }
                })
            .get();
      }
      java.lang.ref.WeakReference<Object> runtime =
          new java.lang.ref.WeakReference<>(Profold.runtime());
      java.lang.ref.WeakReference<Object> recorder =
          new java.lang.ref.WeakReference<>(Profold.runtime().recorder());
      Profold.shutdown(java.time.Duration.ofSeconds(10));

      for (int i = 0; i < 20 && (runtime.get() != null || recorder.get() != null); i++) {
        System.gc();
      }

      // Before the fix the pool's threads, alive, kept the recorder and with it the runtime.
      assertThat(recorder.get()).as("the recorder").isNull();
      assertThat(runtime.get()).as("the runtime").isNull();
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void startWithANullConfigurationStaysOff() {
    assertThat(Profold.start(null)).isFalse(); // before the fix: NullPointerException
    assertThat(Profold.isStarted()).isFalse();
  }

  @Test
  void anExplicitShutdownRemovesTheShutdownHookAndTheNextStartRegistersItsOwn() throws Exception {
    // The hook stayed registered for good: in a web container every redeploy left one behind,
    // holding the application's class loader and all it loaded.
    start();
    Thread first = Profold.shutdownHook();
    assertThat(first).isNotNull();
    assertThat(first.getContextClassLoader()).as("it pins no context class loader").isNull();
    Profold.shutdown(java.time.Duration.ZERO);
    assertThat(Profold.shutdownHook()).isNull();
    assertThat(Runtime.getRuntime().removeShutdownHook(first)).as("already removed").isFalse();

    assertThat(Profold.start(ProfoldConfig.builder().endpoint(collector.endpoint()).build()))
        .isTrue();
    assertThat(Profold.shutdownHook()).isNotNull().isNotSameAs(first);
  }

  @Test
  void startingWhileTheJvmShutsDownReturnsFalseAndThrowsNothing() throws Exception {
    String out =
        runMain(
            "StartInHook",
            "Runtime.getRuntime().addShutdownHook(new Thread(() -> {",
            "  try {",
            "    boolean started = dev.profold.client.Profold.start(",
            "        dev.profold.client.ProfoldConfig.builder().endpoint(\"127.0.0.1:9\").build());",
            "    System.out.println(\"started=\" + started);",
            "  } catch (Throwable t) {",
            "    System.out.println(\"thrown=\" + t);",
            "  }",
            "}));");
    // Before the fix: "thrown=java.lang.IllegalStateException: Shutdown in progress".
    assertThat(out).contains("started=false").doesNotContain("thrown=");
  }

  @Test
  void restartingWhileTheJvmShutsDownReturnsFalseThoughTheHookWasRegisteredBefore()
      throws Exception {
    // Profold ran and was shut down, so its one hook is registered already; a start from another
    // hook (the JVM shutting down) must still see the shutdown, or it runs with no hook left to
    // stop it and send its last interval.
    String out =
        runMain(
            "RestartInHook",
            "dev.profold.client.ProfoldConfig config ="
                + " dev.profold.client.ProfoldConfig.builder().endpoint(\"127.0.0.1:9\").build();",
            "System.out.println(\"first=\" + dev.profold.client.Profold.start(config));",
            "dev.profold.client.Profold.shutdown(java.time.Duration.ZERO);",
            "Runtime.getRuntime().addShutdownHook(new Thread(() -> {",
            "  try {",
            "    System.out.println(\"started=\" + dev.profold.client.Profold.start(config));",
            "  } catch (Throwable t) {",
            "    System.out.println(\"thrown=\" + t);",
            "  }",
            "}));");
    // Before the fix: "started=true", the runtime left running with no hook to shut it down.
    assertThat(out).contains("first=true").contains("started=false").doesNotContain("thrown=");
  }

  @Test
  void whatTheShutdownHookCouldNotSendIsSaidWithTheJdksDefaultLogging() throws Exception {
    String out =
        runMain(
            "LostAtExit",
            "dev.profold.client.Profold.start(",
            "    dev.profold.client.ProfoldConfig.builder().endpoint(\"127.0.0.1:9\").build());",
            "try (dev.profold.client.Region r =",
            "    dev.profold.client.Profold.region(\"work\", dev.profold.client.Kind.COMPUTE)) {}");
    // Before the fix nothing: java.util.logging's own shutdown hook had removed its handlers.
    assertThat(out)
        .contains(
            "deltas (an interval each, or part of one) were not acknowledged when the shutdown")
        .contains("bound: 5000 ms");
  }

  @Test
  void aShutdownWithNoTimeSaysTheLastIntervalWasNotSent() throws Exception {
    String out =
        runMain(
            "NoTime",
            "dev.profold.client.Profold.start(",
            "    dev.profold.client.ProfoldConfig.builder().endpoint(\"127.0.0.1:9\").build());",
            "try (dev.profold.client.Region r =",
            "    dev.profold.client.Profold.region(\"work\", dev.profold.client.Kind.COMPUTE)) {}",
            "dev.profold.client.Profold.shutdown(java.time.Duration.ZERO);",
            "System.out.println(\"after shutdown\");");
    // Before the fix: "0 deltas ... were not acknowledged", though the interval was never sent.
    assertThat(out)
        .contains("the last interval was not sent: the shutdown's bound of 0 ms ran out")
        .doesNotContain("0 deltas")
        .doesNotContain("submitted after close");
  }

  /** Runs a class {@code name} whose main method is {@code body}, returning what it printed. */
  private static String runMain(String name, String... body) throws Exception {
    return ChildJvm.run(ChildJvm.current(), name, 50, body);
  }

  @Test
  void beforeStartAnAsyncRegionIsANoOpAnyThreadMayEnd() throws Exception {
    AsyncRegion r = Profold.asyncRegion("call", Kind.WAIT);
    java.util.concurrent.atomic.AtomicReference<Throwable> thrown =
        new java.util.concurrent.atomic.AtomicReference<>();
    Thread t = new Thread(r::end);
    t.setUncaughtExceptionHandler((th, e) -> thrown.set(e));
    t.start();
    t.join();
    r.end(); // twice, on another thread: still nothing
    assertThat(thrown.get()).as("what ending it on another thread threw").isNull();
    assertThat(Profold.isStarted()).isFalse();
    // Started afterwards, the region left nothing behind: the first interval holds no "call".
    collector = new AckingCollector();
    assertThat(
            Profold.start(
                ProfoldConfig.builder()
                    .endpoint(collector.endpoint())
                    .interval(java.time.Duration.ofHours(1))
                    .build()))
        .isTrue();
    assertThat(Profold.flush(java.time.Duration.ofSeconds(30))).isTrue();
    assertThat(collector.received())
        .allSatisfy(
            d -> assertThat(d.getDictionary().getStringsMap().values()).doesNotContain("call"));
  }

  @Test
  void anAsyncRegionClosedOnAnotherThreadArrivesUnderItsPathAndTheClosingThread() throws Exception {
    collector = new AckingCollector();
    assertThat(
            Profold.start(
                ProfoldConfig.builder()
                    .endpoint(collector.endpoint())
                    .interval(java.time.Duration.ofHours(1))
                    .threadAggregation(ThreadAggregation.NONE)
                    .build()))
        .isTrue();
    AsyncRegion[] call = new AsyncRegion[1];
    Thread loop =
        new Thread(
            () -> {
              try (Region r = Profold.region("channel.read", Kind.COMPUTE)) {
                call[0] = Profold.asyncRegion("backend.call", Kind.WAIT);
                Profold.region("write", Kind.IO).close();
              }
            },
            "event-loop-1");
    loop.start();
    loop.join();
    Thread callback = new Thread(() -> call[0].end(), "callback-7");
    callback.start();
    callback.join();
    assertThat(Profold.flush(java.time.Duration.ofSeconds(30))).isTrue();

    Map<String, Long> byPathAndThread = new TreeMap<>();
    Map<Integer, String> strings = new HashMap<>();
    Map<Integer, PathNode> nodes = new HashMap<>();
    Map<Integer, String> attributes = new HashMap<>();
    for (Delta d : collector.received()) {
      strings.putAll(d.getDictionary().getStringsMap());
      d.getDictionary().getPathNodesList().forEach(n -> nodes.put(n.getId(), n));
      d.getDictionary().getAttributesList().forEach(a -> attributes.put(a.getId(), a.getName()));
      for (Entry e : d.getEntriesList()) {
        String path = "";
        String thread = "";
        for (AttributeValue v : e.getKeyList()) {
          if (v.hasPathNodeId()) {
            for (int n = v.getPathNodeId(); n != 0; n = nodes.get(n).getParentId()) {
              String name = strings.get(nodes.get(n).getNameId());
              path = path.isEmpty() ? name : name + "/" + path;
            }
          } else if (attributes.get(v.getAttributeId()).equals("thread")) {
            thread = strings.get(v.getStringId());
          }
        }
        for (Measurement m : e.getMeasurementsList()) {
          String name = attributes.get(m.getAttributeId());
          if (!name.endsWith(".per_thread")) {
            byPathAndThread.merge(
                name + " of " + path + " on " + thread, m.getState().getCount(), Long::sum);
          }
        }
      }
    }
    assertThat(byPathAndThread)
        .containsOnly(
            Map.entry("time of channel.read on event-loop-1", 1L),
            Map.entry("time of channel.read/write on event-loop-1", 1L),
            Map.entry("async_duration of channel.read/backend.call on callback-7", 1L));
  }

  @Test
  void shutdownWithANullTimeoutWaitsTheDefaultOne() throws Exception {
    start();
    Profold.shutdown(null); // before the fix: NullPointerException
    assertThat(Profold.isStarted()).isFalse();
    assertThat(Profold.flush(null)).isFalse(); // not started
  }
}
