package dev.profold.collector.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A planted program in a JVM of its own with the shaded agent jar attached by {@code -javaagent},
 * started and waited for until it prints its first line. Its class path holds the test classes
 * only: the test class path also holds the client library's unshaded classes, which would shadow
 * the agent jar's.
 */
final class AgentApp {
  final Process process;
  final Path stderr;
  final BufferedReader out;

  private AgentApp(Process process, Path stderr, BufferedReader out) {
    this.process = process;
    this.stderr = stderr;
    this.out = out;
  }

  /**
   * Starts {@code main} with the agent's {@code options} and the extra {@code jvmOptions}, and
   * checks that its first line is {@code ready}.
   */
  static AgentApp start(Class<?> main, String options, String ready, String... jvmOptions)
      throws Exception {
    return start(Path.of(JarDaemon.javaBin()), main, options, ready, jvmOptions);
  }

  /** As {@link #start(Class, String, String, String...)}, on the JVM {@code java}. */
  static AgentApp start(
      Path java, Class<?> main, String options, String ready, String... jvmOptions)
      throws Exception {
    return start(java, main, List.of(), options, ready, jvmOptions);
  }

  /**
   * As {@link #start(Path, Class, String, String, String...)}, with {@code libraries} (jars or
   * directories) on the class path after the test classes: the application's own libraries.
   */
  static AgentApp start(
      Path java,
      Class<?> main,
      List<Path> libraries,
      String options,
      String ready,
      String... jvmOptions)
      throws Exception {
    Path agent =
        Path.of(System.getProperty("profold.agent.jar", "../client-lib/target/profold-agent.jar"));
    assertThat(agent).as("the agent jar is built before integration tests").exists();
    Path classes = Path.of(main.getProtectionDomain().getCodeSource().getLocation().toURI());
    Path stderr = Files.createTempFile("profold-" + main.getSimpleName(), ".log");
    List<String> command = new ArrayList<>();
    command.add(java.toString());
    command.addAll(List.of(jvmOptions));
    command.add("-javaagent:" + agent + "=" + options);
    List<String> classPath = new ArrayList<>();
    classPath.add(classes.toString());
    libraries.forEach(l -> classPath.add(l.toString()));
    command.addAll(List.of("-cp", String.join(File.pathSeparator, classPath), main.getName()));
    Process p = new ProcessBuilder(command).redirectError(stderr.toFile()).start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
    assertThat(out.readLine())
        .as("%s's stderr: %s", main.getSimpleName(), Files.readString(stderr))
        .isEqualTo(ready);
    return new AgentApp(p, stderr, out);
  }

  /**
   * Reads the program's stdout on a daemon thread from now on and keeps, in the returned reference,
   * the two numbers of the last line that {@code line} matches (its groups 1 and 2); null until one
   * came.
   */
  java.util.concurrent.atomic.AtomicReference<long[]> lastNumbers(java.util.regex.Pattern line) {
    java.util.concurrent.atomic.AtomicReference<long[]> last =
        new java.util.concurrent.atomic.AtomicReference<>();
    Thread reader =
        new Thread(
            () -> {
              try {
                for (String l = out.readLine(); l != null; l = out.readLine()) {
                  java.util.regex.Matcher m = line.matcher(l);
                  if (m.matches()) {
                    last.set(new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2))});
                  }
                }
              } catch (IOException e) {
                // the program ended: the caller's assertions say what is missing
              }
            },
            "agent-app-output");
    reader.setDaemon(true);
    reader.start();
    return last;
  }

  /** What the program and the agent wrote to stderr so far. */
  String stderr() throws IOException {
    return Files.readString(stderr);
  }

  void kill() {
    process.destroyForcibly();
  }
}
