package dev.profold.collector.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.profold.collector.archive.ArchiveException;
import dev.profold.collector.config.ConfigLoader;
import dev.profold.collector.testing.MutableClock;
import java.io.IOException;
import java.io.StringReader;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** An unusable archive directory is refused with why, not the path said twice. */
class ArchiveDirectoryErrorTest {
  @TempDir Path dir;

  @Test
  void aFileWhereTheDirectoryShouldBeIsSaidSo() throws Exception {
    Path file = Files.writeString(dir.resolve("archive"), "not a directory");
    CollectorServer server =
        new CollectorServer(
            ConfigLoader.parse(
                new StringReader(
                    "grpc_port: 0\nhttp_port: 0\narchive:\n  directory: " + file + "\n"),
                "collector.yaml"),
            MutableClock.at(Instant.parse("2026-01-01T00:00:01Z")));
    try {
      assertThatThrownBy(server::start)
          .isInstanceOf(ArchiveException.class)
          .hasMessage(
              "cannot use archive directory "
                  + file
                  + " (a file is in the way: "
                  + file
                  + "); set archive.directory to a writable directory");
    } finally {
      server.stop();
    }
  }

  @Test
  void fileSystemErrorsSayWhy() {
    assertThat(CollectorServer.ioReason(new AccessDeniedException("/x")))
        .isEqualTo("permission denied: /x");
    assertThat(
            CollectorServer.ioReason(new FileSystemException("/x", null, "Read-only file system")))
        .isEqualTo("Read-only file system: /x");
    assertThat(CollectorServer.ioReason(new IOException("disk on fire"))).isEqualTo("disk on fire");
  }
}
