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

  /**
   * The position just after the last line break among the first {@code size} bytes of {@code file};
   * 0 when they have none.
   */
  static long endOfLastLine(Path file, long size) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long end = Math.min(size, ch.size());
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

  /** The last byte of the first {@code size} bytes of {@code file} that is not white space; -1. */
  static int lastNonBlank(Path file, long size) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      ByteBuffer one = ByteBuffer.allocate(1);
      for (long at = Math.min(size, ch.size()) - 1; at >= 0; at--) {
        one.clear();
        if (ch.read(one, at) != 1) {
          return -1;
        }
        int b = one.get(0) & 0xff;
        if (b != ' ' && b != '\t' && b != '\r' && b != '\n') {
          return b;
        }
      }
      return -1;
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
