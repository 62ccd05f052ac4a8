"""System shared memory against the gRPC payload (see tools/bench/shm): one
nereid serving identity_4m (a 4 MiB INT32 tensor, OUTPUT0 = INPUT0), and
nereid-perf runs alternating between --shared-memory none and system, at
concurrency 1 and 4. Prints each run, the medians over rounds, the ratios
shm / payload, and the CPU per request of the server and of the client.

Args: BIN ROUNDS WINDOW_MS."""

import csv
import glob
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

BIN, ROUNDS, WINDOW_MS = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sys.path.insert(0, os.path.join(BIN, "proto"))

import grpc  # noqa: E402
import grpc_service_pb2 as pb  # noqa: E402
import grpc_service_pb2_grpc as pb_grpc  # noqa: E402
import nereid_proc  # noqa: E402

MODEL = "identity_4m"
TENSOR = 4 << 20  # bytes each way
MODELS = os.path.abspath("tools/bench/models")
CONCS = (1, 4)
# nereid-perf's flags per mode: the tensor in the messages, or in regions.
MODES = {"payload": ["--shared-memory", "none"],
         "shm": ["--shared-memory", "system", "--output-shared-memory-size", str(TENSOR)]}


def success(stub):
    s = stub.ModelStatistics(pb.ModelStatisticsRequest(name=MODEL), timeout=10)
    return s.model_stats[0].inference_stats.success


def perf(address, mode, conc, window_ms, work):
    """One nereid-perf run (3 windows reported together, no stability wait):
    its CSV row and its CPU seconds (the child's rusage)."""
    out, log = os.path.join(work, "perf.csv"), os.path.join(work, "perf.log")
    with open(log, "wb") as f:
        p = subprocess.Popen([os.path.join(BIN, "tools/perf/nereid-perf"), "-u", address,
                              "-m", MODEL, "--mode", "unary-async", "--concurrency-range",
                              str(conc), "-p", str(window_ms), "-r", "3", "-s", "100",
                              "-f", out] + MODES[mode], stdout=f, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode not in (0, 2):  # 2: some requests failed, counted
        with open(log) as f:
            raise SystemExit("nereid-perf failed (%d):\n%s" % (p.returncode, f.read()))
    with open(out) as f:
        return next(csv.DictReader(f)), usage.ru_utime + usage.ru_stime, p.pid


def check_clean(stub, pid):
    """A shm run leaves no region registered and no object in /dev/shm."""
    left = stub.SystemSharedMemoryStatus(pb.SystemSharedMemoryStatusRequest(), timeout=10)
    objects = glob.glob("/dev/shm/nereid-perf-%d-*" % pid)
    if left.regions or objects:
        raise SystemExit("left behind: regions %s, objects %s" % (list(left.regions), objects))


def num(text):
    return float(text) if text else float("nan")


def run(server, stub, address, mode, conc, window_ms, work):
    s0, t0 = success(stub), nereid_proc.cpu_ticks(server.pid)
    row, cli_s, pid = perf(address, mode, conc, window_ms, work)
    t1, s1 = nereid_proc.cpu_ticks(server.pid), success(stub)
    check_clean(stub, pid)
    n = max(s1.count - s0.count, 1)
    rps = float(row["Inferences/Second"])
    return {"mode": mode, "c": conc, "rps": rps, "gib_s": rps * 2 * TENSOR / 2**30,
            "avg": float(row["Avg Latency"]), "p50": float(row["p50 Latency"]),
            "p99": float(row["p99 Latency"]), "errors": int(row["Errors"]),
            "stable": row["Stable"],
            # Per request the server completed during the whole run (warm-up
            # and drain included, as the CPU times are).
            "srv_us": (s1.ns - s0.ns) / 1e3 / n,
            # Where the server's time goes (reported windows, from nereid-perf).
            "infer_us": num(row["Server Compute Infer"]),
            "out_us": num(row["Server Compute Output"]),
            "srv_cpu_us": (t1 - t0) * 1e6 / nereid_proc.HZ / n, "cli_cpu_us": cli_s * 1e6 / n}


COLS = ("mode", "c", "rps", "gib_s", "avg", "p50", "p99", "srv_us", "infer_us", "out_us",
        "srv_cpu_us", "cli_cpu_us", "errors", "stable")
HEAD = "%-5s %-8s %3s %8s %6s %8s %8s %8s %8s %8s %8s %10s %10s %6s %s"
LINE = ("%-5s %-8s %3d %8.1f %6.2f %8.0f %8.0f %8.0f %8.0f %8.0f %8.0f %10.0f %10.0f %6d "
        "%s")


def show(r, rnd=""):
    print(LINE % ((rnd,) + tuple(r[k] for k in COLS)), flush=True)


def main():
    work = tempfile.mkdtemp(prefix="shm_bench")
    server, address = nereid_proc.start(BIN, work, "--allow-client-shm=true",
                                        "--model-repository=" + MODELS,
                                        "--model-control-mode=explicit")
    try:
        stub = pb_grpc.GRPCInferenceServiceStub(grpc.insecure_channel(address))
        stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=MODEL), timeout=60)
        print("nereid at %s; %s: INT32 [1048576] (4 MiB) through identity; %d rounds; "
              "windows of %d ms; nereid-perf unary-async" % (address, MODEL, ROUNDS,
                                                             WINDOW_MS))
        print("(gib_s: tensor bytes in and out, 8 MiB per request; latencies in us; srv_us: "
              "the server's own time per request, infer_us and out_us: its compute infer "
              "and output parts; *_cpu_us: CPU per request of nereid and nereid-perf)")
        print(HEAD % (("round",) + COLS))
        for mode in MODES:  # warm-up: connections, allocator, page cache
            perf(address, mode, 4, 500, work)
        runs = []
        for rnd in range(1, ROUNDS + 1):
            # Alternate the order, so that drift on a shared host falls on both.
            order = ("payload", "shm") if rnd % 2 else ("shm", "payload")
            for conc in CONCS:
                for mode in order:
                    r = run(server, stub, address, mode, conc, WINDOW_MS, work)
                    r["round"] = rnd
                    runs.append(r)
                    show(r, rnd)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)
    summarize(runs)


def summarize(runs):
    def pick(mode, c, key):
        return [r[key] for r in runs if r["mode"] == mode and r["c"] == c]

    print("\nmedians over %d rounds" % ROUNDS)
    for c in CONCS:
        for mode in MODES:
            show(dict({k: statistics.median(pick(mode, c, k)) for k in
                       ("rps", "gib_s", "avg", "p50", "p99", "srv_us", "infer_us",
                        "out_us", "srv_cpu_us", "cli_cpu_us")},
                      mode=mode, c=c, errors=sum(pick(mode, c, "errors")), stable="-"))
    print("\nshm / payload, per round and median:")
    for c in CONCS:
        for key in ("rps", "avg", "p50", "srv_cpu_us", "cli_cpu_us"):
            ratios = [s / p for p, s in zip(pick("payload", c, key), pick("shm", c, key))]
            print("  c%d %-10s %s  median %.3f" % (c, key, " ".join("%.3f" % x for x in ratios),
                                                   statistics.median(ratios)))


main()
