"""Batching efficiency benchmark (see tools/bench/batching): CONCURRENCY
asyncio clients keep one ModelInfer each in flight on `fixed_cost` for
SECONDS; the server's statistics give the batch sizes."""

import asyncio
import os
import re
import subprocess
import sys
import time

BIN, SECONDS, CONCURRENCY = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
sys.path.insert(0, os.path.join(BIN, "proto"))

import grpc  # noqa: E402
import numpy as np  # noqa: E402
import grpc_service_pb2 as pb  # noqa: E402
import grpc_service_pb2_grpc as pb_grpc  # noqa: E402

BATCH, COST_S = 16, 0.010


def start_server():
    top = os.getcwd()
    proc = subprocess.Popen(
        [os.path.join(BIN, "server/nereid"), "--grpc-address=127.0.0.1", "--grpc-port=0", "--allow-http=false",
         "--allow-metrics=false",
         "--model-repository=" + os.path.join(top, "tools/bench/models"),
         # Only fixed_cost: the others there want the built-in backends.
         "--model-control-mode=explicit", "--load-model=fixed_cost",
         "--backend-directory=" + os.path.join(BIN, "test/backends")],
        stderr=subprocess.PIPE)
    for line in proc.stderr:
        m = re.search(rb"Started GRPCInferenceService at (\S+):(\d+)", line)
        if m:
            return proc, "%s:%s" % (m.group(1).decode(), m.group(2).decode())
    raise SystemExit("nereid did not start")


def request():
    req = pb.ModelInferRequest(model_name="fixed_cost")
    t = req.inputs.add()
    t.name, t.datatype = "INPUT0", "INT32"
    t.shape.extend([1, 16])
    req.raw_input_contents.append(np.arange(16, dtype=np.int32).tobytes())
    return req


async def client(stub, req, until, counts):
    while time.monotonic() < until:
        await stub.ModelInfer(req)
        counts[0] += 1


async def run(address):
    async with grpc.aio.insecure_channel(address) as channel:
        stub = pb_grpc.GRPCInferenceServiceStub(channel)
        req = request()
        # Warm-up, then the measured window.
        await asyncio.gather(*(client(stub, req, time.monotonic() + 1, [0])
                               for _ in range(CONCURRENCY)))
        before = await stub.ModelStatistics(pb.ModelStatisticsRequest(name="fixed_cost"))
        counts = [0]
        start = time.monotonic()
        await asyncio.gather(*(client(stub, req, start + SECONDS, counts)
                               for _ in range(CONCURRENCY)))
        elapsed = time.monotonic() - start
        after = await stub.ModelStatistics(pb.ModelStatisticsRequest(name="fixed_cost"))
        return counts[0], elapsed, before.model_stats[0], after.model_stats[0]


def main():
    proc, address = start_server()
    try:
        done, elapsed, before, after = asyncio.run(run(address))
    finally:
        proc.terminate()
        proc.wait()
    rate = done / elapsed
    ceiling = BATCH / COST_S
    execs = after.execution_count - before.execution_count
    infers = after.inference_count - before.inference_count
    sizes = {b.batch_size: b.compute_infer.count for b in after.batch_stats}
    old = {b.batch_size: b.compute_infer.count for b in before.batch_stats}
    hist = {k: sizes[k] - old.get(k, 0) for k in sorted(sizes) if sizes[k] - old.get(k, 0)}
    print("concurrency %d, %.1f s: %d inferences, %.0f/s; ceiling %.0f/s; "
          "efficiency %.3f" % (CONCURRENCY, elapsed, done, rate, ceiling, rate / ceiling))
    print("server: %d executions, %d inferences, mean batch %.2f, batch sizes %s"
          % (execs, infers, infers / max(execs, 1), hist))


main()
