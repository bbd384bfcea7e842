#!/usr/bin/env python3
"""Profold interop client: sends one profile Delta to a collector over gRPC.

This is a cross-language check of the wire protocol in profold/v1/profold.proto and a
small runnable example for client authors (see docs/protocol.md). It needs only the
Python standard library, grpcio and grpcio-tools (grpc_tools) and the protobuf runtime;
the Python protobuf and gRPC code is generated at run time from the .proto files.

Modes:
  push    (default) open the bidirectional Ingest/Push stream, send the delta, read
          exactly one Ack, half-close and wait for the collector to end the stream.
          Prints {"sequence", "result", "status_code", "status_message", ...}.
  export  send the delta with the unary Ingest/Export call.
          Prints {"result", "entries_overflowed"}.

--bad sends a delta in which entries[1].measurements[0] references attribute id 99,
which no dictionary defines; the collector must reject it with INVALID_ARGUMENT.

Output: exactly one JSON line on stdout. Diagnostics go to stderr.

Exit codes:
  0  success: APPLIED or DUPLICATE; with --bad, the expected INVALID_ARGUMENT rejection
     (push: a REJECTED Ack with status code 3; export: gRPC status INVALID_ARGUMENT)
  1  the collector answered, but not as expected (for example REJECTED without --bad,
     or APPLIED with --bad)
  2  gRPC error (the call or stream failed); prints {"error_code", "error_details"}
  3  local setup error (bad arguments, .proto files not found, code generation failed)

Example, from the repository root (INCLUDE_DIR holds google/rpc/status.proto, for
example extracted from the proto-google-common-protos jar):
  python3 collector/src/test/python/profold_push.py --target HOST:PORT \\
      --proto-root proto/src/main/proto --include INCLUDE_DIR \\
      --service checkout --instance pod-1
"""

import argparse
import importlib
import json
import math
import os
import secrets
import sys
import tempfile
import threading
import time

# Deadline, in seconds, applied to every gRPC call (for Push: the whole stream).
TIMEOUT_S = 10.0

# The delta covers the last 10 seconds (the protocol's default interval).
INTERVAL_NANOS = 10 * 1_000_000_000

# Attribute id that no dictionary defines, used by --bad.
UNDEFINED_ATTRIBUTE_ID = 99

EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_GRPC_ERROR = 2
EXIT_SETUP_ERROR = 3

PROFOLD_PROTO = "profold/v1/profold.proto"
STATUS_PROTO = "google/rpc/status.proto"


class SetupError(Exception):
    """A local problem (arguments, files, code generation), reported with exit code 3."""


class _ArgumentParser(argparse.ArgumentParser):
    """argparse exits with 2 on usage errors; 2 means a gRPC error here, so use 3."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(EXIT_SETUP_ERROR, f"{self.prog}: error: {message}\n")


def parse_args(argv):
    p = _ArgumentParser(
        description="Send one Profold Delta to a collector (interop test client).")
    p.add_argument("--target", required=True,
                   help="collector gRPC address, host:port")
    p.add_argument("--proto-root", required=True,
                   help=f"directory containing {PROFOLD_PROTO}")
    p.add_argument("--include", action="append", default=[], metavar="DIR",
                   help=f"extra proto include directory (must provide {STATUS_PROTO}); "
                        "may be repeated")
    p.add_argument("--mode", choices=("push", "export"), default="push",
                   help="push: bidirectional Push stream (default); export: unary Export")
    p.add_argument("--service", default="profold-python-interop",
                   help="SourceIdentity.service")
    p.add_argument("--instance", default=f"py-{os.getpid()}",
                   help="SourceIdentity.instance")
    p.add_argument("--out-dir",
                   help="directory for the generated Python code (default: a temporary "
                        "directory, removed on exit)")
    p.add_argument("--bad", action="store_true",
                   help="send a delta referencing undefined attribute id "
                        f"{UNDEFINED_ATTRIBUTE_ID}; succeed only if it is rejected "
                        "with INVALID_ARGUMENT")
    return p.parse_args(argv)


# ---------------------------------------------------------------------------------------
# Code generation
# ---------------------------------------------------------------------------------------

def grpc_tools_include_dir():
    """The directory of .proto files bundled with grpc_tools (google/protobuf/*.proto)."""
    try:
        from importlib import resources
        path = resources.files("grpc_tools") / "_proto"
        if path.is_dir():
            return str(path)
    except (ImportError, AttributeError, TypeError):
        pass  # Python < 3.9 or an unusual loader: fall back to pkg_resources.
    import pkg_resources
    return pkg_resources.resource_filename("grpc_tools", "_proto")


def generate_code(proto_root, includes, out_dir):
    """Runs grpc_tools.protoc on profold.proto and google/rpc/status.proto into out_dir."""
    from grpc_tools import protoc

    search_path = [proto_root] + list(includes)
    if not os.path.isfile(os.path.join(proto_root, PROFOLD_PROTO)):
        raise SetupError(f"{PROFOLD_PROTO} not found under --proto-root {proto_root}")
    if not any(os.path.isfile(os.path.join(d, STATUS_PROTO)) for d in search_path):
        raise SetupError(f"{STATUS_PROTO} not found under --proto-root or any --include")

    args = ["grpc_tools.protoc"]
    args += [f"-I{d}" for d in search_path]
    # Last, so the caller's directories win; provides google/protobuf/any.proto.
    args.append(f"-I{grpc_tools_include_dir()}")
    args += [f"--python_out={out_dir}", f"--grpc_python_out={out_dir}"]
    # status.proto is compiled too: profold_pb2 imports google.rpc.status_pb2, which
    # the protobuf runtime does not ship.
    args += [PROFOLD_PROTO, STATUS_PROTO]
    rc = protoc.main(args)
    if rc != 0:
        raise SetupError(f"grpc_tools.protoc failed with exit code {rc}")


def import_generated(out_dir):
    """Imports the generated modules from out_dir. Returns (pb2, pb2_grpc, status_pb2).

    The generated directories have no __init__.py, so profold/ and google/rpc/ are
    namespace packages; google/ merges with the installed google.protobuf package.
    """
    sys.path.insert(0, out_dir)
    importlib.invalidate_caches()
    pb2 = importlib.import_module("profold.v1.profold_pb2")
    pb2_grpc = importlib.import_module("profold.v1.profold_pb2_grpc")
    status_pb2 = importlib.import_module("google.rpc.status_pb2")
    return pb2, pb2_grpc, status_pb2


# ---------------------------------------------------------------------------------------
# Building the delta
# ---------------------------------------------------------------------------------------

def bucket_index(value, scale):
    """Exponential-histogram bucket index of |value| (finite, non-zero) at scale <= 0.

    With base = 2^(2^-scale), bucket i holds values v with base^i < |v| <= base^(i+1).
    At scale 0 the base is 2: 0.25 -> -3, 0.5 -> -2, 0.75 -> -1, 1.0 -> -1.
    math.frexp gives |v| = m * 2^e with 0.5 <= m < 1, so 2^(e-1) <= |v| < 2^e; an exact
    power of two (m == 0.5) is the upper bound of bucket e-2, anything else lies in
    bucket e-1. For scale < 0 each bucket merges 2^-scale scale-0 buckets, which is an
    arithmetic (flooring) right shift. Positive scales need logarithms; not used here.
    """
    if scale > 0:
        raise ValueError("this helper only handles scale <= 0")
    mantissa, exponent = math.frexp(abs(value))
    index = exponent - 2 if mantissa == 0.5 else exponent - 1
    return index >> -scale


def metric_state(pb2, values, scale=0):
    """The MetricState (moments and exponential histogram) of a list of values."""
    state = pb2.MetricState(
        count=len(values),
        sum=sum(values),
        min=min(values),
        max=max(values),
        sum_of_squares=sum(v * v for v in values),
    )
    hist = state.histogram
    hist.scale = scale
    positive = {}
    negative = {}
    for v in values:
        if v == 0.0:
            hist.zero_count += 1
        else:
            side = positive if v > 0 else negative
            i = bucket_index(v, scale)
            side[i] = side.get(i, 0) + 1
    # Each sign is one dense run of counts starting at the smallest occupied index.
    for counts, buckets in ((positive, hist.positive), (negative, hist.negative)):
        if counts:
            lo, hi = min(counts), max(counts)
            buckets.offset = lo
            buckets.counts.extend(counts.get(i, 0) for i in range(lo, hi + 1))
    return state


def build_delta(pb2, service, instance, bad):
    """One self-contained Delta (identity, dictionary, two entries) with sequence 1."""
    now = time.time_ns()

    incarnation_id = 0
    while incarnation_id == 0:  # must be non-zero
        incarnation_id = secrets.randbits(64)

    delta = pb2.Delta(
        sequence=1,
        interval_start_unix_nanos=now - INTERVAL_NANOS,
        interval_end_unix_nanos=now,
        thread_aggregation=pb2.THREAD_AGGREGATION_SUM,
        overhead=pb2.ClientOverhead(cpu_nanos=1000),
    )

    src = delta.source
    src.service = service
    src.instance = instance
    src.host = "py-host"
    src.pid = os.getpid()
    src.labels["lang"] = "python"
    src.sdk_version = "profold-python-interop/0.1"
    src.incarnation_id = incarnation_id
    src.process_start_unix_nanos = now

    # Dictionary: ids are chosen by the client and valid for this stream / call only.
    d = delta.dictionary
    d.strings[1] = "main"
    d.strings[2] = "db.query"
    region_attr, time_attr = 1, 2
    d.attributes.add(id=region_attr, name="region", type=pb2.VALUE_TYPE_PATH,
                     kind=pb2.ATTRIBUTE_KIND_DIMENSION)
    d.attributes.add(id=time_attr, name="time", type=pb2.VALUE_TYPE_DOUBLE,
                     kind=pb2.ATTRIBUTE_KIND_MEASUREMENT, unit="seconds")
    # Region path "main" (node 1) and "main/db.query" (node 2); parents before children.
    d.path_nodes.add(id=1, parent_id=0, attribute_id=region_attr, name_id=1,
                     kind=pb2.REGION_KIND_COMPUTE)
    d.path_nodes.add(id=2, parent_id=1, attribute_id=region_attr, name_id=2,
                     kind=pb2.REGION_KIND_IO)

    # Entries: region -> time spent (seconds). The values are what a client would have
    # recorded; metric_state() reduces them to the mergeable wire state:
    #   node 1: count 4, sum 2.0,  min 0.25, max 1.0, sum_of_squares 1.375,
    #           histogram scale 0, positive offset -3, counts [2, 1, 1]
    #   node 2: count 2, sum 0.75, min 0.25, max 0.5, sum_of_squares 0.3125,
    #           histogram scale 0, positive offset -3, counts [1, 1]
    for node_id, values in ((1, [0.25, 0.25, 0.5, 1.0]), (2, [0.25, 0.5])):
        entry = delta.entries.add()
        entry.key.add(attribute_id=region_attr, path_node_id=node_id)
        entry.measurements.add(attribute_id=time_attr, state=metric_state(pb2, values))

    if bad:
        # The collector should name the field: entries[1].measurements[0].attribute_id.
        delta.entries[1].measurements[0].attribute_id = UNDEFINED_ATTRIBUTE_ID

    return delta


# ---------------------------------------------------------------------------------------
# Calls and output
# ---------------------------------------------------------------------------------------

def emit(obj):
    """Prints one JSON line on stdout."""
    print(json.dumps(obj), flush=True)


def enum_name(enum_type, number):
    try:
        return enum_type.Name(number)
    except ValueError:  # a value added to the protocol after this client was generated
        return str(number)


def detail_types(status):
    """Type URLs of the details of a google.rpc.Status (for example RetryInfo)."""
    return [any_msg.type_url for any_msg in status.details]


def grpc_error(err, status_pb2):
    """JSON object for a failed call, with the status details' types when present."""
    code = err.code() if hasattr(err, "code") else None
    out = {
        "error_code": code.name if code is not None else "UNKNOWN",
        "error_details": (err.details() if hasattr(err, "details") else None) or "",
    }
    # Rich status details travel as a serialized google.rpc.Status in this trailer.
    metadata = err.trailing_metadata() if hasattr(err, "trailing_metadata") else None
    for key, value in metadata or ():
        if key == "grpc-status-details-bin":
            status = status_pb2.Status()
            status.ParseFromString(value)
            out["status_details"] = detail_types(status)
    return out


def push(grpc, pb2, pb2_grpc, status_pb2, channel, delta, bad):
    """Push mode: one delta, one Ack, then a clean close. Returns the exit code."""
    stub = pb2_grpc.IngestStub(channel)
    ack_read = threading.Event()

    def requests():
        yield delta
        # Keep our side open until the Ack arrives, then half-close by returning.
        # (The wait is bounded so this thread can never outlive the call's deadline.)
        ack_read.wait(TIMEOUT_S)

    responses = stub.Push(requests(), timeout=TIMEOUT_S)
    try:
        try:
            ack = next(responses)
        finally:
            ack_read.set()
        # After our half-close the collector must end the stream with status OK.
        extra = list(responses)
    except StopIteration:
        emit({"error_code": "NO_ACK",
              "error_details": "Push stream ended with OK before any Ack"})
        return EXIT_GRPC_ERROR
    except grpc.RpcError as err:
        emit(grpc_error(err, status_pb2))
        return EXIT_GRPC_ERROR

    out = {
        "sequence": ack.sequence,
        "result": enum_name(pb2.AckResult, ack.result),
        "status_code": ack.status.code,
        "status_message": ack.status.message,
        "status_details": detail_types(ack.status),
        "entries_overflowed": ack.entries_overflowed,
    }
    if extra:
        out["unexpected_acks"] = len(extra)
    emit(out)

    if extra:
        return EXIT_UNEXPECTED
    if bad:
        invalid_argument = grpc.StatusCode.INVALID_ARGUMENT.value[0]  # 3
        ok = ack.result == pb2.ACK_RESULT_REJECTED and ack.status.code == invalid_argument
    else:
        ok = ack.result in (pb2.ACK_RESULT_APPLIED, pb2.ACK_RESULT_DUPLICATE)
    return EXIT_OK if ok else EXIT_UNEXPECTED


def export(grpc, pb2, pb2_grpc, status_pb2, channel, delta, bad):
    """Export mode: one unary call. Returns the exit code."""
    stub = pb2_grpc.IngestStub(channel)
    try:
        response = stub.Export(delta, timeout=TIMEOUT_S)
    except grpc.RpcError as err:
        emit(grpc_error(err, status_pb2))
        if bad and err.code() == grpc.StatusCode.INVALID_ARGUMENT:
            return EXIT_OK  # the expected rejection
        return EXIT_GRPC_ERROR

    emit({"result": enum_name(pb2.AckResult, response.result),
          "entries_overflowed": response.entries_overflowed})
    if bad:
        return EXIT_UNEXPECTED  # the invalid delta was accepted
    ok = response.result in (pb2.ACK_RESULT_APPLIED, pb2.ACK_RESULT_DUPLICATE)
    return EXIT_OK if ok else EXIT_UNEXPECTED


def run(args, out_dir):
    generate_code(args.proto_root, args.include, out_dir)
    pb2, pb2_grpc, status_pb2 = import_generated(out_dir)
    import grpc

    delta = build_delta(pb2, args.service, args.instance, args.bad)
    call = push if args.mode == "push" else export
    with grpc.insecure_channel(args.target) as channel:
        return call(grpc, pb2, pb2_grpc, status_pb2, channel, delta, args.bad)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        if args.out_dir:
            os.makedirs(args.out_dir, exist_ok=True)
            return run(args, os.path.abspath(args.out_dir))
        with tempfile.TemporaryDirectory(prefix="profold-py-") as out_dir:
            return run(args, out_dir)
    except SetupError as e:
        print(f"profold_push: {e}", file=sys.stderr)
        return EXIT_SETUP_ERROR


if __name__ == "__main__":
    sys.exit(main())
