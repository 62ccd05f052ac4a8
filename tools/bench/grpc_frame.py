"""Writes a gRPC-framed ModelInferRequest (1-byte flag, 4-byte big-endian
length, message) for h2load's -d. Usage:
  grpc_frame.py STUBS_DIR simple OUT           INT32 [1,16] INPUT0/INPUT1
  grpc_frame.py STUBS_DIR simple_ensemble OUT  the same to simple_ensemble
  grpc_frame.py STUBS_DIR http OUT             not a frame: the HTTP/REST body of
      the same request with the binary tensor extension (both inputs and outputs
      binary); prints the JSON header's length (Inference-Header-Content-Length)
  grpc_frame.py STUBS_DIR repeat N OUT         repeat_int32 with N elements"""

import json
import struct
import sys

sys.path.insert(0, sys.argv[1])
import numpy as np  # noqa: E402
import grpc_service_pb2 as pb  # noqa: E402


def tensor(req, name, dtype, arr):
    t = req.inputs.add()
    t.name, t.datatype = name, dtype
    t.shape.extend(arr.shape)
    req.raw_input_contents.append(arr.tobytes())


def http_body(out):
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    h = {"inputs": [{"name": n, "datatype": "INT32", "shape": [1, 16],
                     "parameters": {"binary_data_size": 64}} for n in ("INPUT0", "INPUT1")],
         "outputs": [{"name": n, "parameters": {"binary_data": True}}
                     for n in ("OUTPUT0", "OUTPUT1")]}
    hb = json.dumps(h).encode()
    with open(out, "wb") as f:
        f.write(hb + a.tobytes() + a.tobytes())
    print(len(hb))


def main():
    kind = sys.argv[2]
    if kind == "http":
        http_body(sys.argv[3])
        return
    if kind in ("simple", "simple_ensemble"):
        req = pb.ModelInferRequest(model_name=kind)
        for name in ("INPUT0", "INPUT1"):
            tensor(req, name, "INT32", np.arange(16, dtype=np.int32).reshape(1, 16))
        out = sys.argv[3]
    else:
        n = int(sys.argv[3])
        req = pb.ModelInferRequest(model_name="repeat_int32")
        tensor(req, "IN", "INT32", np.arange(n, dtype=np.int32))
        tensor(req, "DELAY", "UINT32", np.zeros(n, dtype=np.uint32))
        tensor(req, "WAIT", "UINT32", np.zeros(1, dtype=np.uint32))
        out = sys.argv[4]
    body = req.SerializeToString()
    with open(out, "wb") as f:
        f.write(struct.pack(">BI", 0, len(body)) + body)


main()
