package dev.profold.client.internal.agent;

import dev.profold.client.internal.activity.ThreadActivity;
import dev.profold.client.internal.jfr.ThreadStarts;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.instrument.Instrumentation;
import java.lang.instrument.UnmodifiableClassException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;

/**
 * Times every {@code Thread.start()} of the application ({@link ThreadStartTransformer}) and
 * reports each start ({@link ThreadStartHookup}): its time on and off CPU becomes thread_mgmt time
 * of the starting thread (most of the CPU time is spent in the JVM creating the native thread,
 * where samples do not reach; {@link ThreadActivity#managementCpu}), and its whole duration becomes
 * the duration of the start's record at its call path ({@link ThreadStarts}, joined with JFR's
 * {@code jdk.ThreadStart} event).
 *
 * <p>Installing puts the hook ({@code ThreadHooks}) on the bootstrap class path, in a small jar
 * written to the temporary directory, then hooks up, which loads both hook classes; the jar is
 * deleted right after (the JVM keeps it open and needs nothing more from it), so a JVM that is
 * killed leaves no file behind. Where the file system refuses to delete an open file, it is deleted
 * at exit instead. This class names no hook class, so that loading and verifying it cannot load one
 * through the agent's class loader before the bootstrap loader can find it. Thread-safe.
 */
final class ThreadStartTiming {
  private static final System.Logger LOG = System.getLogger("dev.profold.client");

  /** The hook classes, as class-file resource names. */
  static final String HOOK = "dev/profold/client/internal/boot/ThreadHooks";

  /**
   * Whether an install hooked {@code Thread.start} up in this JVM (the hook is then on the
   * bootstrap class path for good); guarded by the class lock.
   */
  private static boolean hookedUp;

  private ThreadStartTiming() {}

  /**
   * Times thread starts from now on, reporting them to {@code activity} and their durations to
   * {@code starts} (for the JFR mapping), until {@link #stop()}. When timing cannot be installed it
   * says why, once, and starts stay untimed.
   *
   * @return true when starts are timed
   */
  static synchronized boolean install(
      Instrumentation inst, ThreadActivity activity, ThreadStarts starts) {
    String why;
    try {
      ThreadMXBean mx = ManagementFactory.getThreadMXBean();
      if (hookedUp) { // Profold started again: no second boot jar, only a new listener
        ThreadStartHookup.listen(mx, activity, starts);
        return true;
      }
      if (!inst.isRetransformClassesSupported()) {
        why = "this JVM cannot retransform classes";
      } else if (!mx.isCurrentThreadCpuTimeSupported() || !mx.isThreadCpuTimeEnabled()) {
        why = "thread CPU time is not available";
      } else {
        Path jar = bootJar();
        try {
          try (JarFile file = new JarFile(jar.toFile())) {
            inst.appendToBootstrapClassLoaderSearch(file); // the JVM opens the jar itself
          }
          ThreadStartHookup.hookUp(inst, mx, activity, starts);
          hookedUp = true;
          return true;
        } finally {
          deleteNow(jar);
        }
      }
    } catch (IOException
        | ClassNotFoundException
        | UnmodifiableClassException
        | RuntimeException
        | LinkageError e) {
      why = e.getMessage() == null ? e.toString() : e.getMessage();
    }
    LOG.log(
        System.Logger.Level.INFO,
        "Profold agent: thread starts are counted but not timed ({0}); their time off CPU"
            + " stays idle",
        why);
    return false;
  }

  /**
   * Stops timing and reporting thread starts (after {@link #install} returned true; the rewritten
   * {@code Thread.start} stays, finding no listener).
   */
  static void stop() {
    ThreadStartHookup.unhook();
  }

  /**
   * As {@link #stop()}, if starts are reported to {@code activity} (a later install's listener
   * stays).
   */
  static void stop(ThreadActivity activity) {
    ThreadStartHookup.unhook(activity);
  }

  /** Deletes the boot jar now if the file system lets it (it stays registered for exit). */
  private static void deleteNow(Path jar) {
    try {
      Files.deleteIfExists(jar);
    } catch (IOException e) {
      LOG.log(System.Logger.Level.DEBUG, "Profold agent: {0} is deleted at exit ({1})", jar, e);
    }
  }

  /** A jar holding the hook classes, read from this class's own jar, in the temp directory. */
  private static Path bootJar() throws IOException {
    Path jar = Files.createTempFile("profold-boot-", ".jar");
    jar.toFile().deleteOnExit();
    try (OutputStream file = Files.newOutputStream(jar);
        JarOutputStream out = new JarOutputStream(file)) {
      for (String name : new String[] {HOOK + ".class", HOOK + "$Listener.class"}) {
        try (InputStream in = ThreadStartTiming.class.getClassLoader().getResourceAsStream(name)) {
          if (in == null) {
            throw new IOException(name + " is missing from the agent jar");
          }
          out.putNextEntry(new JarEntry(name));
          in.transferTo(out);
          out.closeEntry();
        }
      }
    }
    return jar;
  }
}
