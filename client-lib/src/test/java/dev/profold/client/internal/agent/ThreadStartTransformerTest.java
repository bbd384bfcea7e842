package dev.profold.client.internal.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.client.internal.boot.ThreadHooks;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassVisitor;
import org.objectweb.asm.MethodVisitor;
import org.objectweb.asm.Opcodes;

/**
 * The rewrite of {@code start()}: applied to stand-ins for {@code Thread} loaded in their own class
 * loader (a test cannot retransform {@code java.lang.Thread} without an agent; {@code AgentJarIT}
 * and {@code AgentThreadChurnIT} do it with the real jar), and to the JDK's own {@code Thread}.
 */
class ThreadStartTransformerTest {
  private static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();

  /** What the listener heard. */
  private record Start(Thread thread, long wall, long cpu) {}

  private final List<Start> heard = new ArrayList<>();
  private final List<String> ends = new ArrayList<>(); // "thread name: cpu nanos"

  private final ThreadHooks.Listener listener =
      new ThreadHooks.Listener() {
        @Override
        public long cpuNow() {
          return MX.getCurrentThreadCpuTime();
        }

        @Override
        public void started(Thread started, long wallNanos, long cpuNanos) {
          heard.add(new Start(started, wallNanos, cpuNanos));
        }

        @Override
        public void ending(long cpuNanos) {
          ends.add(Thread.currentThread().getName() + ": " + cpuNanos);
        }
      };

  /** A start that takes at least 20 ms off CPU, then 5 ms of CPU time; starts nothing. */
  public static class SlowStart extends Thread {
    @Override
    public void start() {
      long parkedUntil = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
      for (long now = System.nanoTime(); now < parkedUntil; now = System.nanoTime()) {
        LockSupport.parkNanos(parkedUntil - now);
      }
      ThreadMXBean mx = ManagementFactory.getThreadMXBean();
      long cpuUntil = mx.getCurrentThreadCpuTime() + TimeUnit.MILLISECONDS.toNanos(5);
      while (mx.getCurrentThreadCpuTime() < cpuUntil) {
        Thread.onSpinWait();
      }
    }
  }

  /** A start that fails, as starting a thread twice does. */
  public static class FailingStart extends Thread {
    @Override
    public void start() {
      throw new IllegalThreadStateException("started twice");
    }
  }

  /**
   * A start and an {@code exit()} of its own (the JVM calls {@code Thread}'s on a thread as it
   * ends; here a test calls it): a thread's CPU time is burnt first, so that its end reports it.
   */
  public static class Exiting extends Thread {
    @Override
    public void start() {}

    public void finish() {
      exit();
    }

    @SuppressWarnings("UnusedMethod") // the rewrite's target, called by finish()
    private void exit() {}
  }

  /** No {@code start()} of its own. */
  public static class NoStart {
    public void run() {}
  }

  @AfterEach
  void stopListening() {
    ThreadHooks.listen(null);
  }

  @Test
  void aTimedStartReportsItsWallAndCpuTime() throws Exception {
    Thread t = (Thread) rewritten(SlowStart.class).getConstructor().newInstance();
    ThreadHooks.listen(listener);

    t.start();

    assertThat(heard).hasSize(1);
    Start s = heard.get(0);
    assertThat(s.thread()).isSameAs(t);
    assertThat(s.wall()).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(25));
    assertThat(s.cpu())
        .as("the spin's CPU time, not the park")
        .isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(5))
        // the 20 ms parked are off CPU, but for the park's own CPU time, far under 1 ms
        .isLessThanOrEqualTo(s.wall() - TimeUnit.MILLISECONDS.toNanos(19));
  }

  @Test
  void nothingIsReportedWithoutAListenerOrWhenStartThrows() throws Exception {
    Thread t = (Thread) rewritten(SlowStart.class).getConstructor().newInstance();
    t.start();
    assertThat(heard).isEmpty();

    ThreadHooks.listen(listener);
    Thread failing = (Thread) rewritten(FailingStart.class).getConstructor().newInstance();
    assertThatThrownBy(failing::start)
        .as("the exception reaches the caller unchanged")
        .isInstanceOf(IllegalThreadStateException.class);
    assertThat(heard).isEmpty();
  }

  @Test
  void aListenerThatThrowsIsCountedAndTheStartGoesOn() throws Exception {
    Thread t = (Thread) rewritten(SlowStart.class).getConstructor().newInstance();
    long before = ThreadHooks.FAILURES.get();
    ThreadHooks.listen(
        new ThreadHooks.Listener() {
          @Override
          public long cpuNow() {
            throw new IllegalStateException("broken clock");
          }

          @Override
          public void started(Thread started, long wallNanos, long cpuNanos) {
            throw new IllegalStateException("broken listener");
          }

          @Override
          public void ending(long cpuNanos) {
            throw new IllegalStateException("broken listener");
          }
        });

    t.start();
    assertThat(ThreadHooks.FAILURES.get() - before).isEqualTo(2);
    Object exiting = rewritten(Exiting.class).getConstructor().newInstance();
    exiting.getClass().getMethod("finish").invoke(exiting); // the end goes on
    assertThat(ThreadHooks.FAILURES.get() - before).isEqualTo(3);
  }

  @Test
  void anExitReportsTheEndingThreadsCpuTimeFirst() throws Exception {
    Object exiting = rewritten(Exiting.class).getConstructor().newInstance();
    ThreadHooks.listen(listener);
    long cpuBefore = MX.getCurrentThreadCpuTime();

    exiting.getClass().getMethod("finish").invoke(exiting);

    assertThat(ends).hasSize(1);
    String[] end = ends.get(0).split(": ");
    assertThat(end[0]).isEqualTo(Thread.currentThread().getName());
    assertThat(Long.parseLong(end[1]))
        .as("the calling thread's CPU time at its end")
        .isBetween(cpuBefore, MX.getCurrentThreadCpuTime());
    assertThat(heard).isEmpty();
  }

  @Test
  void classesWithoutStartAreLeftAlone() throws IOException {
    assertThat(ThreadStartTransformer.instrument(bytes(NoStart.class))).isNull();
  }

  @Test
  void aStartTimedAlreadyIsNotTimedTwice() throws Exception {
    byte[] once = ThreadStartTransformer.instrument(bytes(SlowStart.class));
    assertThat(once).isNotNull();
    // A second transformer in the chain (Profold started again) sees the hook and leaves it.
    assertThat(ThreadStartTransformer.instrument(once)).isNull();
    assertThat(
            new ThreadStartTransformer()
                .transform(null, null, "some/Other", null, null, bytes(SlowStart.class)))
        .as("only java/lang/Thread is rewritten")
        .isNull();
  }

  @Test
  void aThreadTimedEarlierInTheChainCountsAsApplied() throws IOException {
    // A transformer left registered by an install whose retransformation failed rewrote Thread
    // first: the next install's transformer leaves it, and Thread.start is timed all the same.
    byte[] timed = ThreadStartTransformer.instrument(bytes(SlowStart.class));
    ThreadStartTransformer transformer = new ThreadStartTransformer();

    assertThat(transformer.transform(null, null, ThreadStartTransformer.THREAD, null, null, timed))
        .isNull();
    assertThat(transformer.applied()).as("Thread.start is timed").isTrue();
  }

  @Test
  void theJdksThreadStartGetsTheThreeCalls() throws IOException {
    byte[] thread;
    try (InputStream in = Object.class.getResourceAsStream("/java/lang/Thread.class")) {
      thread = in.readAllBytes();
    }
    ThreadStartTransformer transformer = new ThreadStartTransformer();
    byte[] out =
        transformer.transform(
            Object.class.getModule(), null, ThreadStartTransformer.THREAD, null, null, thread);

    assertThat(out).isNotNull();
    assertThat(transformer.applied()).isTrue();
    assertThat(hookCalls(out, "start")).containsExactly("wallAtEntry", "cpuAtEntry", "exit");
    assertThat(hookCalls(out, "exit")).containsExactly("ending");
    assertThat(hookCalls(out, "run"))
        .as("the hook is called from start() and exit() only")
        .isEmpty();
  }

  @Test
  void theJdksStartInAThreadContainerIsTimedToo() {
    // Java 21+ starts threads of thread-per-task executors through start(ThreadContainer), not
    // start(); a class with both, as Thread has there, made here (the build runs on Java 17).
    String container = "(Ljdk/internal/vm/ThreadContainer;)V";
    org.objectweb.asm.ClassWriter w = new org.objectweb.asm.ClassWriter(0);
    w.visit(Opcodes.V17, Opcodes.ACC_PUBLIC, "p/T", null, "java/lang/Object", null);
    for (String desc : List.of("()V", container)) {
      MethodVisitor m = w.visitMethod(0, "start", desc, null, null);
      m.visitCode();
      m.visitInsn(Opcodes.RETURN);
      m.visitMaxs(0, 2);
      m.visitEnd();
    }
    w.visitEnd();
    byte[] out = ThreadStartTransformer.instrument(w.toByteArray());
    assertThat(out).isNotNull();
    assertThat(hookCalls(out, "start", container))
        .containsExactly("wallAtEntry", "cpuAtEntry", "exit");
    assertThat(hookCalls(out, "start", "()V")).containsExactly("wallAtEntry", "cpuAtEntry", "exit");
  }

  /** The hook methods {@code method()V} calls, in order. */
  private static List<String> hookCalls(byte[] classBytes, String method) {
    return hookCalls(classBytes, method, "()V");
  }

  /** The hook methods {@code method} of descriptor {@code descriptor} calls, in order. */
  private static List<String> hookCalls(byte[] classBytes, String method, String descriptor) {
    List<String> calls = new ArrayList<>();
    String hook = ThreadStartTiming.HOOK;
    new ClassReader(classBytes)
        .accept(
            new ClassVisitor(Opcodes.ASM9) {
              @Override
              public MethodVisitor visitMethod(
                  int access, String name, String desc, String signature, String[] exceptions) {
                if (!name.equals(method) || !desc.equals(descriptor)) {
                  return null;
                }
                return new MethodVisitor(Opcodes.ASM9) {
                  @Override
                  public void visitMethodInsn(
                      int opcode, String owner, String name, String desc, boolean itf) {
                    if (owner.equals(hook)) {
                      calls.add(name);
                    }
                  }
                };
              }
            },
            0);
    return calls;
  }

  private static byte[] bytes(Class<?> c) throws IOException {
    String file = c.getName().substring(c.getName().lastIndexOf('.') + 1) + ".class";
    try (InputStream in = c.getResourceAsStream(file)) {
      return in.readAllBytes();
    }
  }

  /** {@code c} with its {@code start()} rewritten, defined in a class loader of its own. */
  private static Class<?> rewritten(Class<?> c) throws IOException {
    byte[] out = ThreadStartTransformer.instrument(bytes(c));
    assertThat(out).isNotNull();
    return new ClassLoader(ThreadStartTransformerTest.class.getClassLoader()) {
      Class<?> define() {
        return defineClass(c.getName(), out, 0, out.length);
      }
    }.define();
  }
}
