"""Ensemble overhead benchmark (see tools/bench/ensemble): one nereid, and
nereid-perf runs interleaved between `simple` and a two-step ensemble of
`simple` (`simple_ensemble`), at concurrency 1 (latency) and at a high
concurrency (throughput). Prints each run, the medians over rounds, the
req/s ratio ensemble / simple and the latency an ensemble step adds at
concurrency 1.

Args: BIN ROUNDS WINDOW_MS LATENCY_MS CONCURRENCY."""

import csv
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

BIN, ROUNDS, WINDOW_MS, LAT_MS, CONC = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]),
                                        int(sys.argv[4]), int(sys.argv[5]))
sys.path.insert(0, os.path.join(BIN, "proto"))

import grpc  # noqa: E402
import grpc_service_pb2 as pb  # noqa: E402
import grpc_service_pb2_grpc as pb_grpc  # noqa: E402
import nereid_proc  # noqa: E402

SIMPLE, ENSEMBLE = "simple", "simple_ensemble"
EXAMPLES = os.path.abspath("examples/models")


def success(stub, model):
    s = stub.ModelStatistics(pb.ModelStatisticsRequest(name=model), timeout=10)
    return s.model_stats[0].inference_stats.success


def perf(address, model, mode, conc, window_ms, work):
    """One nereid-perf run: 3 windows reported together, no stability wait."""
    out = os.path.join(work, "perf.csv")
    p = subprocess.run([os.path.join(BIN, "tools/perf/nereid-perf"), "-u", address,
                        "-m", model, "--mode", mode, "--concurrency-range", str(conc),
                        "-p", str(window_ms), "-r", "3", "-s", "100", "-f", out],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode not in (0, 2):  # 2: some requests failed, counted
        raise SystemExit(p.stdout.decode(errors="replace"))
    with open(out) as f:
        return next(csv.DictReader(f))


def run(server, stub, address, model, mode, conc, window_ms, work):
    s0, t0 = success(stub, model), nereid_proc.cpu_ticks(server.pid)
    row = perf(address, model, mode, conc, window_ms, work)
    t1, s1 = nereid_proc.cpu_ticks(server.pid), success(stub, model)
    n = max(s1.count - s0.count, 1)
    return {"model": model, "mode": mode, "c": conc,
            "rps": float(row["Inferences/Second"]), "p50": float(row["p50 Latency"]),
            "p99": float(row["p99 Latency"]), "avg": float(row["Avg Latency"]),
            "errors": int(row["Errors"]), "stable": row["Stable"],
            # Server side: its CPU and its own time per request (the
            # ensemble's entry covers the whole run, steps included).
            "srv_cpu_us": (t1 - t0) * 1e6 / nereid_proc.HZ / n,
            "srv_us": (s1.ns - s0.ns) / 1e3 / n}


COLS = ("model", "mode", "c", "rps", "avg", "p50", "p99", "srv_us", "srv_cpu_us", "errors",
        "stable")


def show(r, rnd=""):
    print("%-5s %-16s %-12s %5d %10.0f %8.1f %8.1f %8.1f %8.1f %10.2f %6d %s" % (
        (rnd,) + tuple(r[k] for k in COLS)), flush=True)


def main():
    if not os.path.isdir(os.path.join(EXAMPLES, ENSEMBLE)):
        raise SystemExit("no examples/models/%s" % ENSEMBLE)
    work = tempfile.mkdtemp(prefix="ens_bench")
    server, address = nereid_proc.start(BIN, work, "--model-repository=" + EXAMPLES,
                                        "--model-control-mode=explicit")
    try:
        stub = pb_grpc.GRPCInferenceServiceStub(grpc.insecure_channel(address))
        for model in (SIMPLE, ENSEMBLE):  # the composing model first
            stub.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name=model), timeout=60)
        cfg = stub.ModelConfig(pb.ModelConfigRequest(name=ENSEMBLE), timeout=10).config
        steps = len(cfg.ensemble_scheduling.step)
        print("nereid at %s; %d rounds; %s: %d steps; windows of %d ms (c%d unary-async), "
              "%d ms (c1 unary-sync)" % (address, ROUNDS, ENSEMBLE, steps, WINDOW_MS, CONC,
                                          LAT_MS))
        print("%-5s %-16s %-12s %5s %10s %8s %8s %8s %8s %10s %6s %s" % (
            ("round",) + COLS))
        for model in (SIMPLE, ENSEMBLE):  # warm-up: connections, allocator
            perf(address, model, "unary-async", CONC, 1000, work)
        runs = []
        for rnd in range(1, ROUNDS + 1):
            # Alternate the order, so that drift on a shared host falls on both.
            pair = (SIMPLE, ENSEMBLE) if rnd % 2 else (ENSEMBLE, SIMPLE)
            for mode, conc, window in (("unary-sync", 1, LAT_MS),
                                       ("unary-async", CONC, WINDOW_MS)):
                for model in pair:
                    r = run(server, stub, address, model, mode, conc, window, work)
                    r["round"] = rnd
                    runs.append(r)
                    show(r, rnd)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)
    summarize(runs, steps)


def summarize(runs, steps):
    def pick(model, c, key):
        return [r[key] for r in runs if r["model"] == model and r["c"] == c]

    def med(model, c, key):
        return statistics.median(pick(model, c, key))
    print("\nmedians over rounds")
    for c in (1, CONC):
        for model in (SIMPLE, ENSEMBLE):
            mode = "unary-sync" if c == 1 else "unary-async"
            show(dict({k: med(model, c, k) for k in
                       ("rps", "avg", "p50", "p99", "srv_us", "srv_cpu_us")},
                      model=model, mode=mode, c=c,
                      errors=sum(pick(model, c, "errors")), stable="-"))
    ratios = [e / s for s, e in zip(pick(SIMPLE, CONC, "rps"), pick(ENSEMBLE, CONC, "rps"))]
    print("\nc%d unary-async req/s %s / %s: rounds %s, median %.3f (target >= 0.8)" % (
        CONC, ENSEMBLE, SIMPLE, " ".join("%.3f" % x for x in ratios),
        statistics.median(ratios)))
    for key in ("p50", "avg", "srv_us"):
        added = [e - s for s, e in zip(pick(SIMPLE, 1, key), pick(ENSEMBLE, 1, key))]
        m = statistics.median(added)
        print("c1 unary-sync %-6s %s - %s: rounds %s us, median %+.1f us = %+.1f us per "
              "step over %d steps (target <= 10)" % (
                  key, ENSEMBLE, SIMPLE, " ".join("%+.1f" % x for x in added), m, m / steps,
                  steps))


main()
