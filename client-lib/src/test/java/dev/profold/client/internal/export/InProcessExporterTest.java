package dev.profold.client.internal.export;

import dev.profold.client.internal.export.ExporterTest.FakeIngest;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * What the exporter tests share: a {@link FakeIngest} served over in-process gRPC (direct
 * executors) under a fresh name per test, a {@link ManualScheduler}, and after each test the
 * exporter under test closed and the server and channel shut down.
 */
abstract class InProcessExporterTest {
  final ManualScheduler scheduler = new ManualScheduler();
  final FakeIngest ingest = new FakeIngest();
  String name;
  Server server;
  ManagedChannel channel;

  /** The exporter under test, closed after the test; set by the test. */
  Exporter exporter;

  @BeforeEach
  void startFakeIngest() throws Exception {
    name = InProcessServerBuilder.generateName();
    server = InProcessServerBuilder.forName(name).directExecutor().addService(ingest).build();
    server.start();
    channel = InProcessChannelBuilder.forName(name).directExecutor().build();
  }

  @AfterEach
  void stopFakeIngest() {
    if (exporter != null) {
      exporter.close();
      scheduler.runDue();
    }
    channel.shutdownNow();
    server.shutdownNow();
  }
}
