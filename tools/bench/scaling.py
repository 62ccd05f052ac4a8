"""The sweep of tools/bench/scaling (issue 21): h2load ModelInfer on `simple`
(the prebuilt frame of grpc_frame.py) against nereid for each
(--worker-threads, --grpc-threads) and each connection count, and against
the bare echo server at the same connection counts (the floor). For every
point: req/s, mean latency, the server's CPU per request by thread kind and
its busiest thread, h2load's own CPU per request, the CPU that other
processes took meanwhile and the load average before the run. Prints a markdown table; writes an SVG line chart and the
raw points as JSON where asked. Run it through tools/bench/scaling, which
builds what it needs."""

import argparse
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nereid_proc  # noqa: E402

KINDS = ["cq", "workers", "instance", "grpc", "other"]
KIND_TITLES = ["queue", "workers", "instance", "gRPC exec/timer", "other"]
GRPC_THREADS = ("default-executo", "resolver-execut", "grpc_global_tim",
                "event_engine", "timer_manager")


def powers(limit):
    return [1 << i for i in range(8) if (1 << i) <= limit]


def thread_ns(pid):
    """{tid: (name, CPU ns)} of process pid, from /proc/PID/task/TID/schedstat
    (the run time in ns: utime + stime without the clock tick's 10 ms
    granularity)."""
    out = {}
    base = "/proc/%d/task" % pid
    for tid in os.listdir(base):
        try:
            with open("%s/%s/comm" % (base, tid)) as f:
                name = f.read().strip()
            with open("%s/%s/schedstat" % (base, tid)) as f:
                ns = int(f.read().split()[0])
        except OSError:  # the thread ended in between
            continue
        out[int(tid)] = (name, ns)
    return out


def kind(pid, tid, name, exe):
    """The thread kinds of docs/perf.md's "CPU per request, by thread":
    completion-queue threads (unnamed: they carry the program's name),
    actor workers, instance threads, gRPC's executor and timers, other
    (the main thread, loaders, the actor timer)."""
    if name == exe and tid != pid:
        return "cq"
    if name.startswith("act-worker-"):
        return "workers"
    if name.startswith("inst-"):
        return "instance"
    if name in GRPC_THREADS:
        return "grpc"
    return "other"


def h2load(args, frame, port, n, c):
    """One h2load run; returns (req/s, mean µs, failed, its CPU s)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = args.client_prefix + [
        "h2load", "-H", "content-type: application/grpc", "-H", "te: trailers",
        "-d", frame, "-n", str(n), "-c", str(c), "-m", str(args.inflight),
        "-t", str(min(c, args.h2load_threads)),
        "http://127.0.0.1:%s/inference.GRPCInferenceService/ModelInfer" % port]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    rps = float(re.search(r"^finished in \S+ ([\d.]+) req/s", out, re.M).group(1))
    req = re.search(r"^requests: .* (\d+) failed, (\d+) errored", out, re.M)
    mean = re.search(r"^time for request:\s+\S+\s+\S+\s+([\d.]+)(us|ms|s)\b", out, re.M)
    scale = {"us": 1.0, "ms": 1e3, "s": 1e6}[mean.group(2)]
    return rps, float(mean.group(1)) * scale, int(req.group(1)) + int(req.group(2)), cpu


def busy_s():
    """The host's busy CPU seconds so far, all cores (/proc/stat)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v[:8]) - v[3] - v[4]) / nereid_proc.HZ  # less idle and iowait


def point(args, frame, proc, exe, port, c):
    """One measured point against the running server proc."""
    with open("/proc/loadavg") as f:
        load = f.read().split()[0]
    t0 = thread_ns(proc.pid)
    w0, b0 = time.monotonic(), busy_s()
    rps, mean, failed, client_cpu = h2load(args, frame, port, args.requests, c)
    wall, busy = time.monotonic() - w0, busy_s() - b0
    t1 = thread_ns(proc.pid)
    n = args.requests
    by_kind = dict.fromkeys(KINDS, 0.0)
    busiest = ("", 0.0)
    for tid, (name, ns) in t1.items():
        d = ns - t0.get(tid, (name, 0))[1]
        by_kind[kind(proc.pid, tid, name, exe)] += d / 1e3 / n
        if d / 1e9 / wall > busiest[1]:
            busiest = (name if name != exe else "queue", d / 1e9 / wall)
    server = sum(by_kind.values()) * n / 1e6
    return {"rps": rps, "mean_us": mean, "failed": failed, "load": float(load),
            "others_cores": max(0.0, busy - server - client_cpu) / wall,
            "cpu_us": by_kind, "busiest": busiest[0], "busiest_frac": busiest[1],
            "client_us": client_cpu * 1e6 / n, "wall_s": wall}


def serve(args, label, proc, exe, port, frame, results):
    h2load(args, frame, port, 20000, 16)  # warm-up
    for c in args.conns:
        p = point(args, frame, proc, exe, port, c)
        if p["failed"]:
            raise SystemExit("%s c%d: %d failed requests" % (label, c, p["failed"]))
        p.update(config=label, conns=c)
        results.append(p)
        print("%-12s c%-4d %9.0f req/s %9.1f us  load %.2f" %
              (label, c, p["rps"], p["mean_us"], p["load"]), file=sys.stderr)


def stop(proc):
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def sweep(args, results):
    frame = os.path.join(args.work, "simple.bin")
    subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(__file__), "grpc_frame.py"),
                    os.path.join(args.bin, "proto"), "simple", frame], check=True)
    for _ in range(args.repeats):
        echo = subprocess.Popen(args.server_prefix + [
            os.path.join(args.bin, "tools/bench/echo_server"), "0", str(args.cores)],
            stdout=subprocess.PIPE, text=True)
        try:
            port = re.search(r"listening on (\d+)", echo.stdout.readline()).group(1)
            serve(args, "echo", echo, "echo_server", port, frame, results)
        finally:
            stop(echo)
        for w in args.workers:
            for g in args.grpc:
                proc, addr = start_nereid(args, w, g)
                try:
                    serve(args, "w%d g%d" % (w, g), proc, "nereid", addr.split(":")[1],
                          frame, results)
                finally:
                    stop(proc)


def start_nereid(args, w, g):
    flags = ["--model-repository=" + args.models, "--worker-threads=%d" % w,
             "--grpc-threads=%d" % g]
    proc, addr = nereid_proc.start(args.bin, args.work, *flags)
    if args.server_cpus:  # pin it, and every thread it has, to the server's cores
        subprocess.run(["taskset", "-a", "-p", "-c", args.server_cpus, str(proc.pid)],
                       check=True, stdout=subprocess.DEVNULL)
    return proc, addr


def configs(results):
    seen = []
    for r in results:
        if r["config"] not in seen:
            seen.append(r["config"])
    return seen


def table(results, conns):
    """Markdown: one row per (configuration, connections), the medians over
    the repeats, with req/s's range."""
    head = ["config", "conns", "req/s (median)", "req/s min–max", "mean µs"] + \
        ["%s µs/req" % t for t in KIND_TITLES] + \
        ["server µs/req", "busiest thread (% of a core)", "h2load µs/req",
         "others (cores)", "load avg"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for cfg in configs(results):
        for c in conns:
            pts = [r for r in results if r["config"] == cfg and r["conns"] == c]
            if not pts:
                continue
            med = lambda f: statistics.median(f(p) for p in pts)  # noqa: E731
            kinds = [med(lambda p: p["cpu_us"][k]) for k in KINDS]
            busy = max(pts, key=lambda p: p["busiest_frac"])
            row = [cfg, str(c), "%.0f" % med(lambda p: p["rps"]),
                   "%.0f–%.0f" % (min(p["rps"] for p in pts), max(p["rps"] for p in pts)),
                   "%.1f" % med(lambda p: p["mean_us"])] + \
                ["%.2f" % v for v in kinds] + \
                ["%.2f" % med(lambda p: sum(p["cpu_us"].values())),
                 "%s %.0f%%" % (busy["busiest"], 100 * med(lambda p: p["busiest_frac"])),
                 "%.2f" % med(lambda p: p["client_us"]),
                 "–".join("%.1f" % p.get("others_cores", -1) for p in pts),
                 "–".join("%.2f" % p["load"] for p in pts)]
            lines.append("| " + " | ".join(row) + " |")
    spreads = []
    for cfg in configs(results):
        for c in conns:
            rps = [r["rps"] for r in results if r["config"] == cfg and r["conns"] == c]
            if len(rps) > 1:
                spreads.append((max(rps) - min(rps)) / statistics.median(rps))
    if spreads:
        lines.append("\nreq/s spread between sweeps, (max - min) / median over the points: "
                     "median %.0f%%, largest %.0f%%" % (100 * statistics.median(spreads),
                                                       100 * max(spreads)))
    return "\n".join(lines)


COLORS = ["#000000", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
          "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
DASHES = ["", "6,3", "2,2", "8,3,2,3"]


def svg(results, conns, title):
    """A line chart of req/s (median, with the repeats' range as whiskers)
    against connections on a log axis, one line per configuration."""
    W, H, L, R, T, B = 760, 440, 70, 150, 40, 50
    ymax = max(r["rps"] for r in results) * 1.08
    step = next(m * 10 ** e for e in range(2, 9) for m in (1, 2, 2.5, 5)
                if ymax / (m * 10 ** e) <= 8)
    xs = {c: L + (W - L - R) * i / max(1, len(conns) - 1) for i, c in enumerate(conns)}
    y = lambda v: T + (H - T - B) * (1 - v / ymax)  # noqa: E731
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="22" font-size="14">%s</text>' % (L, title)]
    v = 0.0
    while v <= ymax:
        out.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                   '<text x="%d" y="%.1f" text-anchor="end">%dk</text>'
                   % (L, W - R, y(v), y(v), L - 6, y(v) + 4, v / 1000))
        v += step
    for c, x in xs.items():
        out.append('<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#ddd"/>'
                   '<text x="%.1f" y="%d" text-anchor="middle">%d</text>'
                   % (x, x, T, H - B, x, H - B + 16, c))
    out.append('<text x="%d" y="%d" text-anchor="middle">h2load connections (-m %s)</text>'
               % ((L + W - R) / 2, H - 12, results[0].get("inflight", "")))
    out.append('<text x="16" y="%d" transform="rotate(-90 16 %d)" text-anchor="middle">'
               'requests/s</text>' % ((T + H - B) / 2, (T + H - B) / 2))
    for i, cfg in enumerate(configs(results)):
        color, dash = COLORS[i % len(COLORS)], DASHES[(i // len(COLORS)) % len(DASHES)]
        if cfg == "echo":
            dash = "4,4"
        pts = []
        for c in conns:
            rps = [r["rps"] for r in results if r["config"] == cfg and r["conns"] == c]
            if rps:
                x = xs[c]
                pts.append((x, y(statistics.median(rps))))
                out.append('<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s"/>'
                           % (x, x, y(min(rps)), y(max(rps)), color))
        out.append('<polyline fill="none" stroke="%s" stroke-width="2" stroke-dasharray="%s" '
                   'points="%s"/>' % (color, dash, " ".join("%.1f,%.1f" % p for p in pts)))
        out.extend('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (px, py, color)
                   for px, py in pts)
        ly = T + 10 + 18 * i
        out.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2" '
                   'stroke-dasharray="%s"/><text x="%d" y="%d">%s</text>'
                   % (W - R + 12, W - R + 40, ly, ly, color, dash, W - R + 46, ly + 4,
                      "echo (floor)" if cfg == "echo" else
                      cfg.replace("w", "workers ").replace(" g", ", grpc ")))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", help="bazel-bin")
    ap.add_argument("--models", help="the model repository (examples/models)")
    ap.add_argument("--work", help="a scratch folder")
    ap.add_argument("--requests", type=int, default=100000, help="per point")
    ap.add_argument("--repeats", type=int, default=2, help="sweeps")
    ap.add_argument("--inflight", type=int, default=64, help="h2load -m")
    ap.add_argument("--cores", type=int, default=len(os.sched_getaffinity(0)),
                    help="the server's cores: sizes the sweep (default: nproc)")
    ap.add_argument("--h2load-threads", type=int, default=0,
                    help="h2load -t (default: cores / 4, at least 1)")
    ap.add_argument("--server-cpus", default="", help="taskset list for the servers")
    ap.add_argument("--client-cpus", default="", help="taskset list for h2load")
    ap.add_argument("--instances", type=int, default=0,
                    help="serve a copy of simple with this instance count "
                    "(default: examples/models as it is, one instance)")
    ap.add_argument("--svg", help="write the chart here")
    ap.add_argument("--json", help="write the raw points here")
    ap.add_argument("--from-json", help="no runs: table and chart from this file")
    args = ap.parse_args()
    if not args.from_json and not (args.bin and args.models and args.work):
        ap.error("--bin, --models and --work are needed to run the sweep")
    # SIGTERM (the wrapper's trap) unwinds like Ctrl-C: the finally blocks
    # stop the running server.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    n = args.cores
    args.workers = powers(max(4, n))
    args.grpc = powers(max(2, n // 2))
    args.conns = [1, 4, 16, 64] + ([256] if n >= 8 else [])
    args.h2load_threads = args.h2load_threads or max(1, n // 4)
    args.server_prefix = ["taskset", "-c", args.server_cpus] if args.server_cpus else []
    args.client_prefix = ["taskset", "-c", args.client_cpus] if args.client_cpus else []
    if args.instances:  # a repository of simple alone, with N instances
        models = os.path.join(args.work, "models")
        shutil.copytree(os.path.join(args.models, "simple"), os.path.join(models, "simple"))
        config = os.path.join(models, "simple", "config.pbtxt")
        with open(config) as f:
            text = f.read()
        with open(config, "w") as f:
            f.write(text.replace("kind: KIND_CPU", "count: %d\n    kind: KIND_CPU" % args.instances))
        args.models = models
    if args.from_json:
        with open(args.from_json) as f:
            results = json.load(f)
        args.conns = sorted({r["conns"] for r in results})
    else:
        results = []
        sweep(args, results)
        for r in results:
            r["inflight"] = args.inflight
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if not args.from_json:
        with open("/proc/loadavg") as f:
            print("load average at the end: %s" % " ".join(f.read().split()[:3]))
    print(table(results, args.conns))
    if args.svg:
        with open(args.svg, "w") as f:
            f.write(svg(results, args.conns, "ModelInfer on simple%s, h2load -m %d, %s" % (
                " (%d instances)" % args.instances if args.instances else "",
                results[0]["inflight"], "server on cpus " + args.server_cpus
                if args.server_cpus else "%d cores shared with h2load" % n)))


if __name__ == "__main__":
    main()
