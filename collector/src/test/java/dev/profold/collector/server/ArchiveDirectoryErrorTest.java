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
  void aSecondCollectorOnTheSameDirectoryIsRefusedUntilTheFirstStops() throws Exception {
    Path archive = dir.resolve("archive");
    CollectorServer first = server(archive);
    CollectorServer second = server(archive);
    CollectorServer third = server(archive);
    try {
      first.start();
      assertThatThrownBy(second::start)
          .isInstanceOf(ArchiveException.class)
          .hasMessage(
              "cannot use the archive directory: another collector (pid "
                  + ProcessHandle.current().pid()
                  + ") writes to "
                  + archive
                  + " (it holds the lock on "
                  + archive.resolve("collector.lock")
                  + "); stop that collector, or give each collector its own archive.directory");
      second.stop();
      first.stop();
      third.start(); // the lock went with the first one's stop
    } finally {
      first.stop();
      second.stop();
      third.stop();
    }
  }

  private static CollectorServer server(Path archive) throws Exception {
    return new CollectorServer(
        ConfigLoader.parse(
            new StringReader(
                "grpc_port: 0\nhttp_port: 0\narchive:\n  directory: " + archive + "\n"),
            "collector.yaml"),
        MutableClock.at(Instant.parse("2026-01-01T00:00:01Z")));
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
