package dev.profold.client.internal.jfr;

import static org.assertj.core.api.Assertions.assertThat;

import dev.profold.client.Kind;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class EventMapperTest {
  private final EventMapper mapper = new EventMapper(JfrSettings.defaults());

  private static JfrEvent event(String type, long nanos, String detail, String... innermostFirst) {
    return new JfrEvent(
        type, 12, "http-exec-3", false, List.of(innermostFirst), false, nanos, detail, 0, -1, -1);
  }

  @Test
  void executionSamplesAreComputeTimeOfOnePeriodAtTheStackOutermostFirst() {
    Observation o =
        mapper.map(event(EventMapper.EXECUTION_SAMPLE, 0, null, "A.leaf", "A.mid", "Thread.run"));
    assertThat(o.path()).containsExactly("Thread.run", "A.mid", "A.leaf");
    assertThat(o.kind()).isEqualTo(Kind.COMPUTE);
    assertThat(o.value()).isEqualTo(0.020);
    assertThat(o.bytes()).isFalse();
    assertThat(o.threadId()).isEqualTo(12);
    assertThat(o.threadName()).isEqualTo("http-exec-3");
    assertThat(o.event()).isEqualTo("jdk.ExecutionSample");
    assertThat(
            new EventMapper(JfrSettings.defaults().withSamplePeriod(Duration.ofMillis(5)))
                .map(event(EventMapper.EXECUTION_SAMPLE, 0, null, "A.leaf"))
                .value())
        .isEqualTo(0.005);
  }

  @Test
  void cpuSamplesInThreadAndExecutorCodeAreThreadManagementButTasksUnderAPoolAreNot() {
    Observation queueing =
        mapper.map(
            event(
                EventMapper.EXECUTION_SAMPLE,
                0,
                null,
                "java.util.concurrent.LinkedBlockingQueue.offer",
                "java.util.concurrent.ThreadPoolExecutor.execute",
                "app.Server.handle"));
    assertThat(queueing.kind()).isEqualTo(Kind.THREAD_MGMT);
    Observation task =
        mapper.map(
            event(
                EventMapper.EXECUTION_SAMPLE,
                0,
                null,
                "java.util.HashMap.get",
                "app.Task.run",
                "java.util.concurrent.ThreadPoolExecutor.runWorker"));
    assertThat(task.kind()).isEqualTo(Kind.COMPUTE);
    assertThat(EventMapper.inThreadManagement(List.of("java.lang.Thread.start", "app.Main.main")))
        .isTrue();
    assertThat(EventMapper.inThreadManagement(List.of())).isFalse();
    assertThat(
            EventMapper.inThreadStart(
                List.of("java.lang.Thread.start0", "java.lang.Thread.start", "app.Main.main")))
        .isTrue();
    assertThat(
            EventMapper.inThreadStart(
                List.of("java.util.concurrent.ThreadPoolExecutor.execute", "app.Main.main")))
        .as("management, not a start")
        .isFalse();
    assertThat(EventMapper.inThreadStart(List.of("app.Main.main", "java.lang.Thread.start")))
        .as("application code first: compute")
        .isFalse();
    assertThat(
            EventMapper.inThreadStart(
                List.of("java.lang.Thread.startVirtualThread", "app.Main.main")))
        .as("starting a virtual thread is management, but no timed start")
        .isFalse();
    assertThat(
            EventMapper.inThreadLifecycle(
                List.of("java.lang.Thread.startVirtualThread", "app.Main.main")))
        .isTrue();
    assertThat(
            EventMapper.inThreadManagement(
                List.of(
                    "dev.profold.client.internal.activity.ThreadActivity.offCpu",
                    "dev.profold.client.internal.boot.ThreadHooks.exit",
                    "java.lang.Thread.start",
                    "app.Main.main")))
        .as("the agent's hook inside Thread.start is part of the start")
        .isTrue();
  }

  @Test
  void jdkCodeRunAsATaskIsNotThreadManagement() {
    // a CPU sample of Arrays.parallelSort in a common-pool worker
    assertThat(
            EventMapper.inThreadManagement(
                List.of(
                    "java.util.DualPivotQuicksort.sort",
                    "java.util.ArraysParallelSortHelpers$FJInt$Sorter.compute",
                    "java.util.concurrent.CountedCompleter.exec",
                    "java.util.concurrent.ForkJoinTask.doExec",
                    "java.util.concurrent.ForkJoinPool$WorkQueue.topLevelExec",
                    "java.util.concurrent.ForkJoinPool.scan",
                    "java.util.concurrent.ForkJoinPool.runWorker",
                    "java.util.concurrent.ForkJoinWorkerThread.run")))
        .as("parallelSort")
        .isFalse();
    assertThat(
            EventMapper.inThreadManagement(
                List.of(
                    "java.util.DualPivotQuicksort.sort",
                    "java.util.ArraysParallelSortHelpers$FJInt$Sorter.compute",
                    "java.util.concurrent.CountedCompleter.exec",
                    "java.util.concurrent.ForkJoinPool$WorkQueue.topLevelExec",
                    "java.util.concurrent.ForkJoinPool.scan")))
        .as("parallelSort, doExec inlined into topLevelExec")
        .isFalse();
    // TLS work of java.net.http.HttpClient on its executor's thread
    assertThat(
            EventMapper.inThreadManagement(
                List.of(
                    "sun.security.ssl.SSLEngineImpl.wrap",
                    "jdk.internal.net.http.common.SSLFlowDelegate$Writer.processData",
                    "jdk.internal.net.http.common.SequentialScheduler$SchedulableTask.run",
                    "java.util.concurrent.ThreadPoolExecutor.runWorker",
                    "java.util.concurrent.ThreadPoolExecutor$Worker.run",
                    "java.lang.Thread.run")))
        .as("HttpClient TLS")
        .isFalse();
    // JDK code submitted to an executor as a Callable and as a Runnable
    assertThat(
            EventMapper.inThreadManagement(
                List.of(
                    "java.util.zip.Deflater.deflate",
                    "jdk.internal.example.Compress.call",
                    "java.util.concurrent.FutureTask.run",
                    "java.util.concurrent.ThreadPoolExecutor.runWorker")))
        .as("a Callable under FutureTask")
        .isFalse();
    assertThat(
            EventMapper.inThreadManagement(
                List.of(
                    "java.util.zip.Deflater.deflate",
                    "jdk.internal.example.Compress.run",
                    "java.util.concurrent.Executors$RunnableAdapter.call",
                    "java.util.concurrent.FutureTask.run",
                    "java.util.concurrent.ThreadPoolExecutor.runWorker")))
        .as("a Runnable under submit()")
        .isFalse();
    assertThat(
            EventMapper.inThreadManagement(
                List.of(
                    "java.math.BigInteger.multiply",
                    "java.util.concurrent.CompletableFuture$AsyncSupply.run",
                    "java.util.concurrent.CompletableFuture$AsyncSupply.exec",
                    "java.util.concurrent.ForkJoinTask.doExec",
                    "java.util.concurrent.ForkJoinPool$WorkQueue.topLevelExec")))
        .as("supplyAsync")
        .isFalse();
  }

  @Test
  void theExecutorsOwnWorkAroundATaskStaysThreadManagement() {
    String runWorker = "java.util.concurrent.ThreadPoolExecutor.runWorker";
    String workerRun = "java.util.concurrent.ThreadPoolExecutor$Worker.run";
    assertThat(EventMapper.inThreadManagement(List.of(runWorker, workerRun)))
        .as("in runWorker's own code")
        .isTrue();
    assertThat(
            EventMapper.inThreadManagement(
                List.of(
                    "java.util.concurrent.locks.AbstractQueuedSynchronizer.release",
                    "java.util.concurrent.ThreadPoolExecutor$Worker.unlock",
                    runWorker,
                    workerRun)))
        .as("the worker's lock around a task")
        .isTrue();
    assertThat(
            EventMapper.inThreadManagement(
                List.of(
                    "java.util.concurrent.LinkedBlockingQueue.take",
                    "java.util.concurrent.ThreadPoolExecutor.getTask",
                    runWorker)))
        .as("taking the next task")
        .isTrue();
    assertThat(
            EventMapper.inThreadManagement(
                List.of(
                    "java.util.concurrent.locks.LockSupport.unpark",
                    "java.util.concurrent.FutureTask.finishCompletion",
                    "java.util.concurrent.FutureTask.set",
                    "java.util.concurrent.FutureTask.run",
                    runWorker)))
        .as("completing a future")
        .isTrue();
    assertThat(
            EventMapper.inThreadManagement(
                List.of(
                    "java.lang.invoke.VarHandleGuards.guard_LLL_Z",
                    "java.util.concurrent.FutureTask.run",
                    runWorker)))
        .as("FutureTask.run claiming the task")
        .isTrue();
    assertThat(
            EventMapper.inThreadManagement(
                List.of(
                    "java.util.concurrent.ForkJoinPool$WorkQueue.poll",
                    "java.util.concurrent.ForkJoinPool$WorkQueue.topLevelExec",
                    "java.util.concurrent.ForkJoinPool.scan")))
        .as("a fork-join worker polling its queue")
        .isTrue();
    assertThat(
            EventMapper.inThreadManagement(
                List.of(
                    "java.util.concurrent.LinkedBlockingQueue.offer",
                    "java.util.concurrent.ThreadPoolExecutor.execute",
                    "jdk.internal.net.http.common.SequentialScheduler$SchedulableTask.run",
                    runWorker)))
        .as("a JDK task handing work to another executor")
        .isTrue();
  }

  @Test
  void aThreadStartRecordTakesItsTimedDuration() {
    ThreadStarts starts = new ThreadStarts();
    starts.started(42, 70_000);
    EventMapper timed = new EventMapper(JfrSettings.defaults(), starts);
    Observation o = timed.map(threadStart(42));
    assertThat(o.kind()).isEqualTo(Kind.THREAD_MGMT);
    assertThat(o.value()).isCloseTo(70e-6, org.assertj.core.api.Assertions.within(1e-15));
    assertThat(o.path()).containsExactly("app.Main.spawn");
    Observation again = timed.map(threadStart(42));
    assertThat(again.value()).as("a duration is taken once").isZero();
  }

  /** JFR's event for thread {@code startedId}, started by thread 7 from {@code app.Main.spawn}. */
  private static JfrEvent threadStart(long startedId) {
    return new JfrEvent(
        EventMapper.THREAD_START,
        7,
        "spawner",
        false,
        List.of("app.Main.spawn"),
        false,
        0,
        null,
        startedId,
        -1,
        -1);
  }

  @Test
  void aPoolThreadParkedForItsNextTaskIsWaitingForWork() {
    assertThat(
            EventMapper.waitingForWork(
                List.of(
                    "jdk.internal.misc.Unsafe.park",
                    "java.util.concurrent.LinkedBlockingQueue.take",
                    "java.util.concurrent.ThreadPoolExecutor.getTask",
                    "java.util.concurrent.ThreadPoolExecutor.runWorker")))
        .isTrue();
    assertThat(
            EventMapper.waitingForWork(
                List.of(
                    "jdk.internal.misc.Unsafe.park",
                    "java.util.concurrent.LinkedBlockingQueue.take",
                    "app.Consumer.run")))
        .isFalse();
  }

  @Test
  void idleWorkersOfTheCommonServersAndTheJdksOwnWaitersAreWaitingForWork() {
    // Tomcat's own copy of the pool (what Spring Boot embeds): its idle http-nio-*-exec-* threads
    // showed as waiting, and a quiet service looked blocked.
    assertThat(
            EventMapper.waitingForWork(
                List.of(
                    "jdk.internal.misc.Unsafe.park",
                    "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject.awaitNanos",
                    "java.util.concurrent.LinkedBlockingQueue.poll",
                    "org.apache.tomcat.util.threads.TaskQueue.poll",
                    "org.apache.tomcat.util.threads.ThreadPoolExecutor.getTask",
                    "org.apache.tomcat.util.threads.ThreadPoolExecutor.runWorker")))
        .as("Tomcat")
        .isTrue();
    assertThat(
            EventMapper.waitingForWork(
                List.of(
                    "jdk.internal.misc.Unsafe.park",
                    "org.eclipse.jetty.util.BlockingArrayQueue.poll",
                    "org.eclipse.jetty.util.thread.QueuedThreadPool$Runner.idleJobPoll",
                    "org.eclipse.jetty.util.thread.QueuedThreadPool$Runner.run")))
        .as("Jetty")
        .isTrue();
    assertThat(
            EventMapper.waitingForWork(
                List.of(
                    "java.lang.Object.wait",
                    "java.lang.ref.ReferenceQueue.remove",
                    "jdk.internal.ref.CleanerImpl.run")))
        .as("Common-Cleaner, in every JVM")
        .isTrue();
    assertThat(
            EventMapper.waitingForWork(
                List.of("java.lang.Object.wait", "java.util.TimerThread.mainLoop")))
        .as("a java.util.Timer between tasks")
        .isTrue();
    assertThat(
            EventMapper.waitingForWork(
                List.of(
                    "java.lang.Object.wait0",
                    "java.lang.Object.wait",
                    "java.util.TimerThread.mainLoop",
                    "java.util.TimerThread.run")))
        .as("the same on Java 21")
        .isTrue();
    assertThat(
            EventMapper.waitingForWork(
                List.of(
                    "java.lang.Thread.sleep",
                    "app.Report.run",
                    "java.util.TimerThread.mainLoop",
                    "java.util.TimerThread.run")))
        .as("a wait inside a task the timer runs")
        .isFalse();
    assertThat(
            EventMapper.waitingForWork(
                List.of(
                    "jdk.internal.misc.Unsafe.park",
                    "java.util.concurrent.LinkedBlockingQueue.take",
                    "app.ThreadPoolExecutorLike.take",
                    "app.Consumer.run")))
        .as("only a pool's getTask, not any name that contains it")
        .isFalse();
  }

  @Test
  void aPoolsBookkeepingIsManagementWhenRunWorkerWasInlinedIntoWorkerRun() {
    assertThat(
            EventMapper.inThreadManagement(
                List.of(
                    "java.util.concurrent.LinkedBlockingQueue.poll",
                    "java.util.concurrent.ThreadPoolExecutor$Worker.run",
                    "java.lang.Thread.run")))
        .isTrue();
    assertThat(
            EventMapper.inThreadManagement(
                List.of(
                    "app.Task.run",
                    "java.util.concurrent.ThreadPoolExecutor$Worker.run",
                    "java.lang.Thread.run")))
        .as("the task it runs")
        .isFalse();
  }

  @Test
  void eachEventTypeGetsItsKindAndItsDurationInSeconds() {
    long ms50 = 50_000_000L;
    assertThat(mapper.map(event(EventMapper.MONITOR_ENTER, ms50, null, "A.m")).kind())
        .isEqualTo(Kind.SYNC);
    assertThat(mapper.map(event(EventMapper.MONITOR_WAIT, ms50, null, "A.m")).kind())
        .isEqualTo(Kind.WAIT);
    assertThat(mapper.map(event(EventMapper.THREAD_SLEEP, ms50, null, "A.m")).kind())
        .isEqualTo(Kind.WAIT);
    for (String io :
        List.of(
            EventMapper.SOCKET_READ,
            EventMapper.SOCKET_WRITE,
            EventMapper.FILE_READ,
            EventMapper.FILE_WRITE)) {
      Observation o = mapper.map(event(io, ms50, null, "A.m"));
      assertThat(o.kind()).as(io).isEqualTo(Kind.IO);
      assertThat(o.value()).isEqualTo(0.05);
    }
    assertThat(mapper.map(event("jdk.CPULoad", ms50, null))).isNull();
  }

  @Test
  void parksOnLocksAreSyncAndOtherParksAreWait() {
    assertThat(EventMapper.parkKind("java.util.concurrent.locks.ReentrantLock$NonfairSync"))
        .isEqualTo(Kind.SYNC);
    assertThat(EventMapper.parkKind("java.util.concurrent.locks.ReentrantReadWriteLock$FairSync"))
        .isEqualTo(Kind.SYNC);
    assertThat(EventMapper.parkKind("java.util.concurrent.locks.StampedLock")).isEqualTo(Kind.SYNC);
    assertThat(EventMapper.parkKind("java.util.concurrent.Semaphore$NonfairSync"))
        .isEqualTo(Kind.SYNC);
    assertThat(
            EventMapper.parkKind(
                "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject"))
        .isEqualTo(Kind.WAIT);
    assertThat(EventMapper.parkKind("java.util.concurrent.SynchronousQueue$TransferStack"))
        .isEqualTo(Kind.WAIT);
    assertThat(EventMapper.parkKind("java.util.concurrent.CompletableFuture$Signaller"))
        .isEqualTo(Kind.WAIT);
    assertThat(EventMapper.parkKind(null)).isEqualTo(Kind.WAIT);
    assertThat(
            mapper
                .map(
                    event(
                        EventMapper.THREAD_PARK,
                        50_000_000L,
                        "java.util.concurrent.locks.ReentrantLock$NonfairSync",
                        "jdk.internal.misc.Unsafe.park",
                        "A.m"))
                .kind())
        .isEqualTo(Kind.SYNC);
  }

  @Test
  void eventsUnderTheirKindsThresholdRecordNothing() {
    EventMapper m =
        new EventMapper(
            JfrSettings.defaults()
                .withThresholds(Duration.ofMillis(5), Duration.ofMillis(30), Duration.ofMillis(1)));
    assertThat(m.map(event(EventMapper.MONITOR_ENTER, 4_999_999, null, "A.m"))).isNull();
    assertThat(m.map(event(EventMapper.MONITOR_ENTER, 5_000_000, null, "A.m"))).isNotNull();
    // One park threshold for JFR (the smaller), then each kind's own.
    assertThat(m.map(event(EventMapper.THREAD_PARK, 10_000_000, "x.ReentrantLock$Sync", "A.m")))
        .isNotNull();
    assertThat(m.map(event(EventMapper.THREAD_PARK, 10_000_000, null, "A.m"))).isNull();
    assertThat(m.map(event(EventMapper.THREAD_PARK, 30_000_000, null, "A.m"))).isNotNull();
    assertThat(m.map(event(EventMapper.FILE_READ, 999_999, null, "A.m"))).isNull();
    assertThat(m.map(event(EventMapper.FILE_READ, 1_000_000, null, "A.m"))).isNotNull();
  }

  @Test
  void truncatedStacksStartWithAMarkerAndEmptyStacksGetAPlaceholder() {
    JfrEvent cut =
        new JfrEvent(
            EventMapper.EXECUTION_SAMPLE,
            1,
            "w",
            false,
            List.of("A.b", "A.a"),
            true,
            0,
            null,
            0,
            -1,
            -1);
    assertThat(mapper.map(cut).path()).containsExactly(EventMapper.TRUNCATED, "A.a", "A.b");
    assertThat(mapper.map(event(EventMapper.MONITOR_ENTER, 50_000_000, null)).path())
        .containsExactly("(no stack)");
  }

  @Test
  void gcAndSafepointsAreRuntimeOfTheJvmThreadAndThreadLifecycleIsThreadManagement() {
    JfrEvent gc =
        new JfrEvent(
            EventMapper.GARBAGE_COLLECTION,
            -1,
            "",
            false,
            List.of(),
            false,
            90_000_000,
            "G1New",
            3_000_000,
            -1,
            -1);
    Observation o = mapper.map(gc);
    assertThat(o.kind()).isEqualTo(Kind.RUNTIME);
    assertThat(o.value()).as("the sum of pauses, not the duration").isEqualTo(0.003);
    assertThat(o.threadId()).isEqualTo(EventMapper.JVM_THREAD);
    assertThat(o.threadName()).isEqualTo("jvm");
    assertThat(o.path()).containsExactly("GC: G1New");
    Observation sp = mapper.map(event(EventMapper.SAFEPOINT_BEGIN, 2_000_000, null));
    assertThat(sp.kind()).isEqualTo(Kind.RUNTIME);
    assertThat(sp.path()).containsExactly("Safepoint synchronization");

    Observation start =
        mapper.map(event(EventMapper.THREAD_START, 0, null, "java.lang.Thread.start", "A.spawn"));
    assertThat(start.kind()).isEqualTo(Kind.THREAD_MGMT);
    assertThat(start.path()).containsExactly("A.spawn", "java.lang.Thread.start");
    assertThat(start.value()).isZero();
    assertThat(mapper.map(event(EventMapper.THREAD_END, 0, null)).path())
        .containsExactly("Thread.exit");
  }

  @Test
  void allocationSamplesAreBytesAtTheAllocatingPath() {
    JfrEvent a =
        new JfrEvent(
            EventMapper.ALLOCATION_SAMPLE,
            3,
            "w-1",
            false,
            List.of("A.alloc"),
            false,
            0,
            null,
            4096,
            -1,
            -1);
    Observation o = mapper.map(a);
    assertThat(o.bytes()).isTrue();
    assertThat(o.value()).isEqualTo(4096);
    assertThat(o.kind()).isEqualTo(Kind.COMPUTE);
  }

  @Test
  void disabledSourcesOwnThreadsAndThreadlessEventsRecordNothing() {
    EventMapper none =
        new EventMapper(JfrSettings.defaults().withSources(false, false, false, false, false));
    assertThat(none.map(event(EventMapper.EXECUTION_SAMPLE, 0, null, "A.m"))).isNull();
    assertThat(none.map(event(EventMapper.THREAD_START, 0, null, "A.m"))).isNull();
    assertThat(none.map(event(EventMapper.SAFEPOINT_BEGIN, 5_000_000, null))).isNull();
    assertThat(none.map(event(EventMapper.SOCKET_READ, 50_000_000, null, "A.m"))).isNull();
    JfrEvent own =
        new JfrEvent(
            EventMapper.EXECUTION_SAMPLE,
            9,
            "profold-flush",
            false,
            List.of("A.m"),
            false,
            0,
            null,
            0,
            -1,
            -1);
    assertThat(mapper.map(own)).isNull();
    JfrEvent noThread =
        new JfrEvent(
            EventMapper.MONITOR_ENTER,
            -1,
            "",
            false,
            List.of("A.m"),
            false,
            50_000_000,
            null,
            0,
            -1,
            -1);
    assertThat(mapper.map(noThread)).isNull();
  }

  @Test
  void frameNamesAreClassDotMethodWithoutHiddenClassAddressesOrLambdaNumbers() {
    assertThat(EventMapper.frameName("com.example.Cart", "add")).isEqualTo("com.example.Cart.add");
    // JDK 25's JFR: before, the address stayed, and paths differed from run to run.
    assertThat(EventMapper.frameName("com.example.Cart$$Lambda.0x000000007f040448", "run"))
        .isEqualTo("com.example.Cart$$Lambda.run");
    assertThat(EventMapper.frameName("com.example.Cart$$Lambda/0x000000007f040448", "run"))
        .isEqualTo("com.example.Cart$$Lambda.run");
    assertThat(EventMapper.frameName("com.example.Version0x1", "run"))
        .as("a class whose name merely holds 0x")
        .isEqualTo("com.example.Version0x1.run");
    assertThat(
            EventMapper.frameName(
                "jdk.jfr.internal.handlers.EventHandler3282_1795695442739-9682", "write"))
        .as("a name different in every process would make a new path in every process")
        .isEqualTo("jdk.jfr.internal.handlers.EventHandler.write");
    assertThat(EventMapper.frameName("com.example.Cart$$Lambda$14/0x0000000800c0b000", "run"))
        .isEqualTo("com.example.Cart$$Lambda.run");
    assertThat(
            EventMapper.frameName("com.example.Cart$$Lambda+0x00007f97c0001c18.149928006", "run"))
        .isEqualTo("com.example.Cart$$Lambda.run");
    assertThat(EventMapper.frameName("com.example.Cart$$Lambda/0x0000000800c0b000", "run"))
        .isEqualTo("com.example.Cart$$Lambda.run");
    assertThat(EventMapper.frameName("com.example.Cart$Inner", "<init>"))
        .isEqualTo("com.example.Cart$Inner.<init>");
  }
}
