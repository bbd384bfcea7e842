package dev.profold.collector.server;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpPrincipal;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;

/**
 * An exchange whose response body reaches the JDK's server in slices of at most {@value #SLICE}
 * bytes; every route of the collector answers through one. The server writes a heap array to its
 * socket through a temporary direct buffer as large as the write, and keeps that buffer for the
 * thread: a scrape answered in one write (the Prometheus handler buffers the whole body, hundreds
 * of MB at the cardinality limit with deep call paths) took as much native memory again, failed
 * with an {@link OutOfMemoryError} beyond {@code -XX:MaxDirectMemorySize}, and left each HTTP
 * thread holding its largest answer's size.
 */
final class SlicedResponse extends HttpExchange {
  /** Most bytes handed to the server in one write. */
  static final int SLICE = 64 * 1024;

  private final HttpExchange ex;
  private OutputStream body; // the sliced stream, made once

  SlicedResponse(HttpExchange ex) {
    this.ex = ex;
  }

  /** {@code out}, with each write handed on in slices of at most {@link #SLICE} bytes. */
  static OutputStream sliced(OutputStream out) {
    return new FilterOutputStream(out) {
      @Override
      public void write(byte[] b, int off, int len) throws IOException {
        java.util.Objects.checkFromIndexSize(off, len, b.length);
        for (int at = 0; at < len; at += SLICE) {
          out.write(b, off + at, Math.min(SLICE, len - at));
        }
      }

      @Override
      public void close() throws IOException {
        out.close(); // nothing is buffered here: no flush first, as the server's own stream
      }
    };
  }

  @Override
  public synchronized OutputStream getResponseBody() {
    if (body == null) {
      body = sliced(ex.getResponseBody());
    }
    return body;
  }

  @Override
  public Headers getRequestHeaders() {
    return ex.getRequestHeaders();
  }

  @Override
  public Headers getResponseHeaders() {
    return ex.getResponseHeaders();
  }

  @Override
  public URI getRequestURI() {
    return ex.getRequestURI();
  }

  @Override
  public String getRequestMethod() {
    return ex.getRequestMethod();
  }

  @Override
  public HttpContext getHttpContext() {
    return ex.getHttpContext();
  }

  @Override
  public void close() {
    ex.close();
  }

  @Override
  public InputStream getRequestBody() {
    return ex.getRequestBody();
  }

  @Override
  public void sendResponseHeaders(int rCode, long responseLength) throws IOException {
    ex.sendResponseHeaders(rCode, responseLength);
  }

  @Override
  public InetSocketAddress getRemoteAddress() {
    return ex.getRemoteAddress();
  }

  @Override
  public int getResponseCode() {
    return ex.getResponseCode();
  }

  @Override
  public InetSocketAddress getLocalAddress() {
    return ex.getLocalAddress();
  }

  @Override
  public String getProtocol() {
    return ex.getProtocol();
  }

  @Override
  public Object getAttribute(String name) {
    return ex.getAttribute(name);
  }

  @Override
  public void setAttribute(String name, Object value) {
    ex.setAttribute(name, value);
  }

  @Override
  public synchronized void setStreams(InputStream i, OutputStream o) {
    ex.setStreams(i, o);
    body = null; // the stream set is sliced in turn
  }

  @Override
  public HttpPrincipal getPrincipal() {
    return ex.getPrincipal();
  }
}
