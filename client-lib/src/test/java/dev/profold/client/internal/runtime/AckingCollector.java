package dev.profold.client.internal.runtime;

import dev.profold.proto.v1.Ack;
import dev.profold.proto.v1.AckResult;
import dev.profold.proto.v1.Delta;
import dev.profold.proto.v1.IngestGrpc;
import io.grpc.Server;
import io.grpc.ServerBuilder;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;

/**
 * A collector on a local port that acknowledges every delta APPLIED (or, made {@link #refusing},
 * REJECTED with the permanent code INVALID_ARGUMENT; made {@link #retryingFirst}, the first delta
 * REJECTED with UNAVAILABLE, a retryable code, and every delta after it APPLIED); and a port nobody
 * serves.
 */
public final class AckingCollector implements AutoCloseable {
  private final Server server;
  private final java.util.List<Delta> received = new java.util.concurrent.CopyOnWriteArrayList<>();

  private final java.util.concurrent.atomic.AtomicBoolean retryFirst =
      new java.util.concurrent.atomic.AtomicBoolean();

  public AckingCollector() throws IOException {
    this(false);
  }

  /** A collector that refuses every delta as invalid. */
  public static AckingCollector refusing() throws IOException {
    return new AckingCollector(true);
  }

  /** A collector that asks for the first delta again (UNAVAILABLE, as a restart does). */
  public static AckingCollector retryingFirst() throws IOException {
    AckingCollector c = new AckingCollector(false);
    c.retryFirst.set(true);
    return c;
  }

  private AckingCollector(boolean refuse) throws IOException {
    server =
        ServerBuilder.forPort(0)
            .addService(
                new IngestGrpc.IngestImplBase() {
                  @Override
                  public StreamObserver<Delta> push(StreamObserver<Ack> acks) {
                    return new StreamObserver<>() {
                      @Override
                      public void onNext(Delta d) {
                        received.add(d);
                        Ack.Builder ack = Ack.newBuilder().setSequence(d.getSequence());
                        if (refuse) {
                          ack.setResult(AckResult.ACK_RESULT_REJECTED)
                              .setStatus(
                                  com.google.rpc.Status.newBuilder()
                                      .setCode(com.google.rpc.Code.INVALID_ARGUMENT_VALUE)
                                      .setMessage("refused by the test collector"));
                        } else if (retryFirst.getAndSet(false)) {
                          ack.setResult(AckResult.ACK_RESULT_REJECTED)
                              .setStatus(
                                  com.google.rpc.Status.newBuilder()
                                      .setCode(com.google.rpc.Code.UNAVAILABLE_VALUE)
                                      .setMessage("restarting"));
                        } else {
                          ack.setResult(AckResult.ACK_RESULT_APPLIED);
                        }
                        acks.onNext(ack.build());
                      }

                      @Override
                      public void onError(Throwable t) {}

                      @Override
                      public void onCompleted() {
                        acks.onCompleted();
                      }
                    };
                  }
                })
            .build()
            .start();
  }

  /** The deltas it received, in order. */
  public java.util.List<Delta> received() {
    return java.util.List.copyOf(received);
  }

  /** Its address, {@code host:port}. */
  public String endpoint() {
    return "127.0.0.1:" + server.getPort();
  }

  /** An address where connections are refused: a port just freed. */
  public static String unreachable() {
    try (ServerSocket s = new ServerSocket(0)) {
      return "127.0.0.1:" + s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() {
    server.shutdownNow();
  }
}
