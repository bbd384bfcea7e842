package dev.profold.client.internal.export;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ForwardingClientCall.SimpleForwardingClientCall;
import io.grpc.ForwardingClientCallListener.SimpleForwardingClientCallListener;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A channel that backs off the way a gRPC channel to a network address does, so that a test sees it
 * without waiting in real time: once a call has failed {@code UNAVAILABLE} (no collector there),
 * every new call fails at once with {@code UNAVAILABLE} without reaching the server, until {@link
 * #resetConnectBackoff()} is called (passed on to the channel it wraps). A real channel keeps
 * failing like this until its own backoff (a second, growing to two minutes) runs out in real time,
 * whatever the caller's schedule.
 */
final class BackingOffChannel extends ManagedChannel {
  private final ManagedChannel delegate;
  private final AtomicBoolean backingOff = new AtomicBoolean();
  private final AtomicInteger resets = new AtomicInteger();
  private final AtomicInteger failedFast = new AtomicInteger();

  BackingOffChannel(ManagedChannel delegate) {
    this.delegate = delegate;
  }

  /** How often {@link #resetConnectBackoff()} was called. */
  int resets() {
    return resets.get();
  }

  /** Calls failed at once because the channel was backing off. */
  int failedFast() {
    return failedFast.get();
  }

  @Override
  public void resetConnectBackoff() {
    resets.incrementAndGet();
    backingOff.set(false);
    delegate.resetConnectBackoff();
  }

  @Override
  public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
    if (backingOff.get()) {
      failedFast.incrementAndGet();
      return new FailedCall<>();
    }
    return new SimpleForwardingClientCall<>(delegate.newCall(method, options)) {
      @Override
      public void start(Listener<R> listener, Metadata headers) {
        super.start(
            new SimpleForwardingClientCallListener<>(listener) {
              @Override
              public void onClose(Status status, Metadata trailers) {
                if (status.getCode() == Status.Code.UNAVAILABLE) {
                  backingOff.set(true);
                }
                super.onClose(status, trailers);
              }
            },
            headers);
      }
    };
  }

  @Override
  public String authority() {
    return delegate.authority();
  }

  @Override
  public ConnectivityState getState(boolean requestConnection) {
    return delegate.getState(requestConnection);
  }

  @Override
  public ManagedChannel shutdown() {
    delegate.shutdown();
    return this;
  }

  @Override
  public boolean isShutdown() {
    return delegate.isShutdown();
  }

  @Override
  public boolean isTerminated() {
    return delegate.isTerminated();
  }

  @Override
  public ManagedChannel shutdownNow() {
    delegate.shutdownNow();
    return this;
  }

  @Override
  public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
    return delegate.awaitTermination(timeout, unit);
  }

  /** A call that fails as soon as it starts, as a channel in reconnect backoff fails it. */
  private static final class FailedCall<Q, R> extends ClientCall<Q, R> {
    @Override
    public void start(Listener<R> listener, Metadata headers) {
      listener.onClose(
          Status.UNAVAILABLE.withDescription("backing off before the next connection attempt"),
          new Metadata());
    }

    @Override
    public void request(int numMessages) {}

    @Override
    public void cancel(String message, Throwable cause) {}

    @Override
    public void halfClose() {}

    @Override
    public void sendMessage(Q message) {}
  }
}
