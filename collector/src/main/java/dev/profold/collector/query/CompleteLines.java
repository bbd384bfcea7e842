package dev.profold.collector.query;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Where a record file's complete lines end: a file being written (an archive's current day) or cut
 * short ends in a torn line, which may not parse in any recognisable way ({@code 2.} before its
 * digits, half a UTF-8 character), so the lines before it are read apart from it. Stateless.
 */
final class CompleteLines {
  private static final int BLOCK = 8192;

  private CompleteLines() {}

  /** The position just after the last line break of {@code file}; 0 when it has none. */
  static long endOfLastLine(Path file) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long end = ch.size();
      ByteBuffer block = ByteBuffer.allocate(BLOCK);
      while (end > 0) {
        long from = Math.max(0, end - BLOCK);
        block.clear().limit((int) (end - from));
        long at = from;
        while (block.hasRemaining()) {
          int n = ch.read(block, at);
          if (n < 0) {
            break;
          }
          at += n;
        }
        for (int i = block.position() - 1; i >= 0; i--) {
          if (block.get(i) == '\n') {
            return from + i + 1;
          }
        }
        end = from;
      }
      return 0;
    }
  }

  /** The bytes of {@code file} from {@code from} to its end. */
  static byte[] tail(Path file, long from) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = ch.size();
      ByteBuffer b = ByteBuffer.allocate((int) Math.min(Integer.MAX_VALUE - 8, size - from));
      long at = from;
      while (b.hasRemaining() && ch.read(b, at) > 0) {
        at = from + b.position();
      }
      byte[] out = new byte[b.position()];
      b.flip().get(out);
      return out;
    }
  }

  /** {@code in} cut after {@code limit} bytes, counting the line breaks it gives. */
  static final class Bounded extends FilterInputStream {
    private long left;
    private long lineBreaks;

    Bounded(InputStream in, long limit) {
      super(in);
      this.left = limit;
    }

    /** The line breaks read so far. */
    long lineBreaks() {
      return lineBreaks;
    }

    @Override
    public int read() throws IOException {
      if (left <= 0) {
        return -1;
      }
      int b = super.read();
      if (b >= 0) {
        left--;
        if (b == '\n') {
          lineBreaks++;
        }
      }
      return b;
    }

    @Override
    public int read(byte[] buf, int off, int len) throws IOException {
      if (left <= 0) {
        return -1;
      }
      int n = super.read(buf, off, (int) Math.min(len, left));
      if (n > 0) {
        left -= n;
        for (int i = off; i < off + n; i++) {
          if (buf[i] == '\n') {
            lineBreaks++;
          }
        }
      }
      return n;
    }

    @Override
    public long skip(long n) throws IOException {
      return super.skip(Math.min(n, Math.max(0, left)));
    }
  }
}
