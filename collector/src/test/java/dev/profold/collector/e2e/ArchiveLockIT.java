package dev.profold.collector.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two collector processes given one archive directory: the second is refused at start, naming the
 * first one's pid, and the first one's lock goes with its process, however it ends.
 */
class ArchiveLockIT {
  @TempDir Path dir;

  @Test
  void aSecondCollectorOnTheSameArchiveDirectoryIsRefusedUntilTheFirstIsGone() throws Exception {
    Path archive = dir.resolve("archive");
    Path config = dir.resolve("collector.yaml");
    Files.writeString(config, "archive:\n  directory: " + archive + "\n");
    JarDaemon first = JarDaemon.start("--config", config.toString());
    try {
      Process second =
          new ProcessBuilder(
                  List.of(
                      JarDaemon.javaBin(),
                      "-jar",
                      JarDaemon.jar().toString(),
                      "collector",
                      "--grpc-port",
                      "0",
                      "--http-port",
                      "0",
                      "--config",
                      config.toString()))
              .redirectErrorStream(true)
              .start();
      String out = new String(second.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(second.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(second.exitValue()).as("output: %s", out).isEqualTo(2);
      assertThat(out)
          .contains("another collector (pid " + first.process.pid() + ") writes to " + archive)
          .contains("give each collector its own archive.directory")
          .doesNotContain("Exception");
      assertThat(first.process.isAlive()).isTrue();
      assertThat(first.scrape()).contains("profold_archive_intervals_written_total");
    } finally {
      first.process.destroyForcibly(); // SIGKILL: no stop runs, the kernel drops the lock
      first.process.waitFor(30, TimeUnit.SECONDS);
      first.kill();
    }
    JarDaemon third = JarDaemon.start("--config", config.toString());
    try {
      assertThat(Files.readString(archive.resolve("collector.lock")).trim())
          .isEqualTo(Long.toString(third.process.pid()));
    } finally {
      third.kill();
    }
  }
}
