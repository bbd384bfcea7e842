package dev.profold.collector.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.internal.ChildJvm;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * What attaching the agent jar prints into the application's stderr besides its own log lines:
 * nothing from the JVM on the newest JDK next to the build's (Java 24 or later; the test fails
 * under {@code PROFOLD_REQUIRE_EXTERNAL_TOOLS=1} when there is none), where the JVM warns about
 * every library that calls a restricted method such as {@code System.loadLibrary} (the agent's
 * relocated Netty used to, probing for its left-out epoll transport); and with {@code
 * threads.timing=false}, not the class-sharing notice that putting the start-timing hook on the
 * bootstrap class path brings; and on a runtime without the optional modules, that it runs at all.
 * Each run checks that the agent's deltas reach the collector jar.
 */
class AgentStderrIT {
  @Test
  void onJava24AndLaterTheAgentCallsNoRestrictedMethod() throws Exception {
    Path java = ChildJvm.atLeast(24);
    String stderr = runAgent(java, "");
    assertThat(stderr)
        .doesNotContain("restricted method")
        .doesNotContain("WARNING:")
        .doesNotContain("Exception");
  }

  @Test
  void withStartTimingOffTheJvmKeepsSharingTheClassesOfEveryLoader() throws Exception {
    String stderr = runAgent(Path.of(JarDaemon.javaBin()), ",threads.timing=false");
    assertThat(stderr)
        .contains("thread starts are counted but not timed (threads.timing=false)")
        .doesNotContain("Sharing is only supported for boot loader classes")
        .doesNotContain("Exception");
  }

  /**
   * A runtime trimmed to the modules the agent needs at the least (no {@code jdk.random}, no {@code
   * jdk.management}): the agent starts and sends its deltas, reading thread CPU times one at a
   * time.
   */
  @Test
  void onARuntimeWithoutTheOptionalModulesTheAgentStillRuns() throws Exception {
    String stderr =
        runAgent(
            Path.of(JarDaemon.javaBin()),
            "",
            "--limit-modules",
            "java.base,java.instrument,java.logging,java.management,jdk.jfr");
    assertThat(stderr).doesNotContain("could not start").doesNotContain("Exception");
  }

  /**
   * An application with SLF4J and Logback on its class path: the agent's relocated Netty logs
   * through java.util.logging, like the rest of the agent, rather than through the application's
   * SLF4J, which it would otherwise set up before the application configured it.
   */
  @Test
  void theAgentsNettyDoesNotLogThroughTheApplicationsSlf4j() throws Exception {
    List<Path> libraries = new ArrayList<>();
    for (Class<?> c :
        List.of(
            org.slf4j.Logger.class,
            ch.qos.logback.classic.Logger.class,
            ch.qos.logback.core.Appender.class)) {
      libraries.add(Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()));
    }
    AgentApp app =
        AgentApp.start(
            Path.of(JarDaemon.javaBin()),
            NettyLoggingProbe.class,
            libraries,
            "service=probe,endpoint=127.0.0.1:1",
            "JdkLoggerFactory");
    app.kill();
  }

  /**
   * An application that chooses its LogManager in {@code main} gets it: {@code premain} does not
   * set up java.util.logging (the agent's start, on its own thread, logs only later).
   */
  @Test
  void anApplicationChoosingItsLogManagerInMainGetsIt() throws Exception {
    AgentApp app =
        AgentApp.start(LogManagerProbe.class, "service=probe,endpoint=127.0.0.1:1", "Own");
    app.kill();
  }

  /**
   * A collector whose host name does not resolve: the agent says so in its own words, once, and the
   * relocated gRPC does not add a stack trace at every retry (before: 15 warnings of 14 lines each
   * in a minute).
   */
  @Test
  void anUnresolvableCollectorIsSaidOnceWithoutStackTraces() throws Exception {
    AgentApp app =
        AgentApp.start(
            PlantedContention.class,
            "service=probe,interval=1s,max.backoff=1s,endpoint=no-such-host.invalid:7763",
            "planted contention running");
    try {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (System.nanoTime() < deadline && !app.stderr().contains("stream failed")) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(250)); // a poll tick
      }
      // a few more attempts (1 s apart at most): each used to log its stack trace
      LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(4));
      String stderr = app.stderr();
      assertThat(stderr)
          .as("the agent names the failure")
          .contains("the collector at no-such-host.invalid:7763 cannot be reached")
          .contains("stream failed: UNAVAILABLE");
      assertThat(stderr).as("no stack trace:%n%s", stderr).doesNotContain("\tat ");
    } finally {
      app.kill();
    }
  }

  /** Runs a planted program with the agent on {@code java} until its deltas arrive: its stderr. */
  private static String runAgent(Path java, String moreOptions, String... jvmOptions)
      throws Exception {
    JarDaemon collector = JarDaemon.start("--interval", "1s");
    AgentApp app = null;
    try {
      app =
          AgentApp.start(
              java,
              PlantedContention.class,
              "service=stderr,instance=s-1,interval=1s,endpoint=127.0.0.1:"
                  + collector.grpcPort
                  + moreOptions,
              "planted contention running",
              jvmOptions);
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      String metrics = "";
      while (System.nanoTime() < deadline
          && !metrics.contains("profold_client_cpu_seconds_total{instance=\"s-1\"")) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(250));
        metrics = collector.scrape();
      }
      assertThat(metrics)
          .as("the agent's deltas reached the collector; app stderr:%n%s", app.stderr())
          .contains("profold_client_cpu_seconds_total{instance=\"s-1\",service=\"stderr\"}");
      return app.stderr();
    } finally {
      if (app != null) {
        app.kill();
      }
      collector.kill();
    }
  }
}
