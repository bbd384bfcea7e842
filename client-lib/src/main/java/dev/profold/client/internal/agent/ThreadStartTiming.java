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
 * <p>Installing puts the hook ({@code ThreadStartTimes}) on the bootstrap class path, in a small
 * jar written to the temporary directory and deleted at exit, then hooks up. This class names no
 * hook class, so that loading and verifying it cannot load one through the agent's class loader
 * before the bootstrap loader can find it. Thread-safe.
 */
final class ThreadStartTiming {
  private static final System.Logger LOG = System.getLogger("dev.profold.client");

  /** The hook classes, as class-file resource names. */
  static final String HOOK = "dev/profold/client/internal/boot/ThreadStartTimes";

  private ThreadStartTiming() {}

  /**
   * Times thread starts from now on, reporting them to {@code activity} and their durations to
   * {@code starts} (for the JFR mapping). When timing cannot be installed it says why, once, and
   * starts stay untimed.
   */
  static void install(Instrumentation inst, ThreadActivity activity, ThreadStarts starts) {
    String why;
    try {
      ThreadMXBean mx = ManagementFactory.getThreadMXBean();
      if (!inst.isRetransformClassesSupported()) {
        why = "this JVM cannot retransform classes";
      } else if (!mx.isCurrentThreadCpuTimeSupported() || !mx.isThreadCpuTimeEnabled()) {
        why = "thread CPU time is not available";
      } else {
        inst.appendToBootstrapClassLoaderSearch(new JarFile(bootJar().toFile()));
        ThreadStartHookup.hookUp(inst, mx, activity, starts);
        return;
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
