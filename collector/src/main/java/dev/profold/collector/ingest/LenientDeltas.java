package dev.profold.collector.ingest;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UnknownFieldSet;
import com.google.protobuf.WireFormat;
import dev.profold.proto.v1.Delta;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.protobuf.ProtoUtils;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads deltas so that a message protobuf cannot parse (bytes that are not a {@code
 * profold.v1.Delta}, a string field that is not UTF-8) reaches the service as a rejection rather
 * than failing inside gRPC, which ended the whole Push stream with UNKNOWN ("Application error
 * processing RPC"), logged a stack trace and counted nothing.
 *
 * <p>{@link #wrap} gives the service's methods that take a {@code Delta} a request marshaller that
 * turns such a message into a stand-in delta: its sequence number as far as it can be read, and the
 * parser's message in a field no delta has. {@link StreamDecoder#decode} refuses the stand-in
 * ({@link #problem}) like any invalid delta: a rejected ack naming the problem (INVALID_ARGUMENT
 * for Export, or the end of a Push stream whose first delta it is), counted as {@code invalid}.
 */
public final class LenientDeltas {
  /** The field carrying the parser's message: the highest field number, never one of Delta's. */
  static final int PROBLEM_FIELD = (1 << 29) - 1;

  private static final int SEQUENCE_FIELD = Delta.SEQUENCE_FIELD_NUMBER;
  private static final MethodDescriptor.Marshaller<Delta> STRICT =
      ProtoUtils.marshaller(Delta.getDefaultInstance());

  private static final MethodDescriptor.Marshaller<Delta> LENIENT =
      new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(Delta value) {
          return STRICT.stream(value);
        }

        @Override
        public Delta parse(InputStream stream) {
          byte[] bytes;
          try {
            bytes = stream.readAllBytes();
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
          try {
            return Delta.parseFrom(bytes);
          } catch (InvalidProtocolBufferException e) {
            return standIn(bytes, e.getMessage());
          }
        }
      };

  private LenientDeltas() {}

  /** {@code service} with its Delta-taking methods reading deltas leniently (see the class). */
  public static ServerServiceDefinition wrap(ServerServiceDefinition service) {
    ServiceDescriptor original = service.getServiceDescriptor();
    List<ServerMethodDefinition<?, ?>> methods = new ArrayList<>();
    ServiceDescriptor.Builder descriptor =
        ServiceDescriptor.newBuilder(original.getName())
            .setSchemaDescriptor(original.getSchemaDescriptor());
    for (ServerMethodDefinition<?, ?> m : service.getMethods()) {
      ServerMethodDefinition<?, ?> lenient = lenient(m);
      methods.add(lenient);
      descriptor.addMethod(lenient.getMethodDescriptor());
    }
    ServerServiceDefinition.Builder out = ServerServiceDefinition.builder(descriptor.build());
    methods.forEach(out::addMethod);
    return out.build();
  }

  @SuppressWarnings("unchecked") // Q is Delta: its marshaller's prototype says so
  private static <Q, R> ServerMethodDefinition<?, ?> lenient(ServerMethodDefinition<Q, R> m) {
    MethodDescriptor<Q, R> md = m.getMethodDescriptor();
    if (!(md.getRequestMarshaller() instanceof MethodDescriptor.PrototypeMarshaller<?> p)
        || !(p.getMessagePrototype() instanceof Delta)) {
      return m;
    }
    return ServerMethodDefinition.create(
        md.toBuilder(LENIENT, md.getResponseMarshaller()).build(),
        (ServerCallHandler<Delta, R>) m.getServerCallHandler());
  }

  /**
   * What was wrong with the message {@code delta} stands in for, or null for a delta that was
   * parsed.
   */
  static String problem(Delta delta) {
    UnknownFieldSet.Field f = delta.getUnknownFields().getField(PROBLEM_FIELD);
    if (f.getLengthDelimitedList().isEmpty()) {
      return null;
    }
    return f.getLengthDelimitedList().get(0).toStringUtf8();
  }

  /** The stand-in for {@code bytes}, which protobuf refused with {@code message}. */
  static Delta standIn(byte[] bytes, String message) {
    String problem =
        "not a valid profold.v1.Delta ("
            + bytes.length
            + " bytes): "
            + message
            + " Strings must be UTF-8 and the message must be encoded from profold.proto; check"
            + " the client's encoder";
    Delta.Builder d = Delta.newBuilder();
    long seq = sequence(bytes);
    if (seq > 0) {
      d.setSequence(seq);
    }
    d.setUnknownFields(
        UnknownFieldSet.newBuilder()
            .addField(
                PROBLEM_FIELD,
                UnknownFieldSet.Field.newBuilder()
                    .addLengthDelimited(ByteString.copyFrom(problem, StandardCharsets.UTF_8))
                    .build())
            .build());
    return d.build();
  }

  /**
   * The sequence number in {@code bytes}, read without parsing the rest (strings are skipped, not
   * checked), or 0 when it cannot be read.
   */
  private static long sequence(byte[] bytes) {
    CodedInputStream in = CodedInputStream.newInstance(bytes);
    long seq = 0;
    try {
      for (int tag = in.readTag(); tag != 0; tag = in.readTag()) {
        if (WireFormat.getTagFieldNumber(tag) == SEQUENCE_FIELD
            && WireFormat.getTagWireType(tag) == WireFormat.WIRETYPE_VARINT) {
          seq = in.readUInt64();
        } else if (!in.skipField(tag)) {
          break;
        }
      }
    } catch (IOException | RuntimeException e) {
      return seq; // what was read before the bytes stopped making sense
    }
    return seq;
  }
}
