package dev.profold.client.internal.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class HostNameTest {
  @TempDir Path dir;

  private final AtomicInteger lookUps = new AtomicInteger();

  private Supplier<String> lookUp(String answer) {
    return () -> {
      lookUps.incrementAndGet();
      return answer;
    };
  }

  @Test
  void theKernelsNameComesFirstAndNoNameServiceIsAsked() throws IOException {
    Path kernel = Files.writeString(dir.resolve("hostname"), "  node-7\n");

    String name = HostName.find(kernel, Map.of("HOSTNAME", "env-name"), lookUp("dns-name"), 1000);

    assertThat(name).isEqualTo("node-7");
    assertThat(lookUps).hasValue(0);
  }

  @Test
  void theEnvironmentAnswersWhereThereIsNoKernelFile() {
    Path missing = dir.resolve("none");

    assertThat(HostName.find(missing, Map.of("HOSTNAME", "pod-a"), lookUp("dns"), 1000))
        .isEqualTo("pod-a");
    assertThat(HostName.find(missing, Map.of("COMPUTERNAME", "WIN-1"), lookUp("dns"), 1000))
        .isEqualTo("WIN-1");
    assertThat(lookUps).hasValue(0);
  }

  @Test
  void aBlankFileOrVariableIsPassedOver() throws IOException {
    Path kernel = Files.writeString(dir.resolve("hostname"), " \n");

    assertThat(HostName.find(kernel, Map.of("HOSTNAME", "  "), lookUp("dns-name"), 1000))
        .isEqualTo("dns-name");
  }

  @Test
  @Timeout(value = 30, unit = TimeUnit.SECONDS) // a guard: without the bound, this never returns
  void aLookUpThatNeverAnswersIsAbandonedAtTheBound() {
    CountDownLatch never = new CountDownLatch(1);
    Supplier<String> hanging =
        () -> {
          try {
            never.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return "too-late";
        };

    assertThat(HostName.find(dir.resolve("none"), Map.of(), hanging, 50)).isEqualTo("localhost");
    never.countDown();
  }

  @Test
  void aFailedLookUpGivesLocalhost() {
    Supplier<String> failing =
        () -> {
          throw new IllegalStateException("no name service");
        };

    assertThat(HostName.find(dir.resolve("none"), Map.of(), failing, 1000)).isEqualTo("localhost");
    assertThat(HostName.find(dir.resolve("none"), Map.of(), () -> null, 1000))
        .isEqualTo("localhost");
  }

  @Test
  void thisProcessHasANameAndKeepsIt() {
    String name = HostName.local();

    assertThat(name).isNotBlank().isEqualTo(name.strip());
    assertThat(HostName.local()).isSameAs(name);
  }
}
