"""A Python client of `snowflake serve`'s gRPC API, its code generated from the repository's
.proto by grpcio-tools (no protoc needed). Prints what it got as one JSON object, which
snowflake-server/tests/service/grpc.rs checks.

    python3 client.py HOST:PORT all|waiting|refused PROTO_DIR [CA [CERT KEY]]
"""
import atexit
import json
import shutil
import sys
import tempfile

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase
from grpc_tools import protoc


def generate(proto_dir):
    """snowflake_pb2 and snowflake_pb2_grpc, generated from proto_dir into a new directory."""
    out = tempfile.mkdtemp()
    atexit.register(shutil.rmtree, out, True)
    args = ["protoc", "-I" + proto_dir, "--python_out=" + out, "--grpc_python_out=" + out, "snowflake/v1/snowflake.proto"]
    if protoc.main(args) != 0:
        sys.exit("grpcio-tools could not compile the .proto")
    sys.path.insert(0, out)
    from snowflake.v1 import snowflake_pb2, snowflake_pb2_grpc

    return snowflake_pb2, snowflake_pb2_grpc


def refusal(call):
    """The status a call ended with: its code's name, its message and its retry-after."""
    try:
        call()
        return None
    except grpc.RpcError as e:
        retry = dict(e.trailing_metadata() or ()).get("retry-after")
        return {"code": e.code().name, "details": e.details(), "retry_after": retry}


def main():
    target, mode, proto_dir = sys.argv[1:4]
    pb, rpc = generate(proto_dir)
    if len(sys.argv) > 4:
        # The CA, and a client certificate and its key when given (mTLS).
        ca, cert, key = (open(path, "rb").read() if path else None for path in (sys.argv[4:7] + ["", ""])[:3])
        channel = grpc.secure_channel(target, grpc.ssl_channel_credentials(ca, key, cert))
    else:
        channel = grpc.insecure_channel(target)
    ids = rpc.SnowflakeStub(channel)
    health = health_pb2_grpc.HealthStub(channel)
    if mode == "refused":
        print(json.dumps({"issue": refusal(lambda: ids.Issue(pb.IssueRequest(type="order"), timeout=10))}))
        return
    serving = health_pb2.HealthCheckResponse.ServingStatus.Name
    out = {"health": serving(health.Check(health_pb2.HealthCheckRequest(service="snowflake.v1.Snowflake")).status)}

    if mode == "waiting":
        out["issue"] = refusal(lambda: ids.Issue(pb.IssueRequest(type="order")))
        out["stream"] = refusal(lambda: next(ids.IssueStream(pb.IssueStreamRequest(type="order", chunk=10))))
        out["types"] = [t.name for t in ids.ListTypes(pb.ListTypesRequest()).types]
        print(json.dumps(out))
        return

    one = ids.Issue(pb.IssueRequest(type="order"))
    out["id"], out["text"] = str(one.id), one.text
    batch = ids.IssueBatch(pb.IssueBatchRequest(type="order", count=3, text=True))
    out["batch"], out["batch_texts"] = [str(i) for i in batch.ids], list(batch.texts)
    stream = ids.IssueStream(pb.IssueStreamRequest(type="order", chunk=1000))
    chunks = []
    for message in stream:
        chunks.append([str(message.ids[0]), str(message.ids[-1]), len(message.ids)])
        if len(chunks) == 3:
            stream.cancel()
            break
    out["chunks"] = chunks
    d = ids.Decode(pb.DecodeRequest(type="order", number=one.id))
    out["decoded"] = {"id": str(d.id), "text": d.text, "time": d.time, "unix_ms": d.unix_ms, "worker": d.worker,
                      "sequence": d.sequence}
    user = ids.Issue(pb.IssueRequest(type="user"))
    out["prefixed"] = {"id": str(user.id), "text": user.text,
                       "decoded": str(ids.Decode(pb.DecodeRequest(type="user", text=user.text)).id)}
    out["types"] = [{"name": t.name, "prefix": t.prefix if t.HasField("prefix") else None, "worker": t.worker}
                    for t in ids.ListTypes(pb.ListTypesRequest()).types]
    out["errors"] = {
        "unknown_type": refusal(lambda: ids.Issue(pb.IssueRequest(type="nope"))),
        "bad_id": refusal(lambda: ids.Decode(pb.DecodeRequest(type="order", text="12x4"))),
        "wrong_prefix": refusal(lambda: ids.Decode(pb.DecodeRequest(type="user", text="ord" + user.text[3:]))),
        "bad_count": refusal(lambda: ids.IssueBatch(pb.IssueBatchRequest(type="order", count=0))),
    }
    out["services"] = sorted(ProtoReflectionDescriptorDatabase(channel).get_services())
    print(json.dumps(out))


main()
